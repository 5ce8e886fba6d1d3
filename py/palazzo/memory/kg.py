"""The temporal knowledge graph: entities, triples with validity in time, and entity aliases.

A triple says ``subject --predicate--> object`` with a confidence, where it came from (a drawer
id and/or a source file), the statement type (fact, observation, inference, hypothesis) and
two kinds of time (seed 000 §3.1 RELATES_TO, seed 003 knowledge graph):

- *valid time* ``[valid_from, valid_to)``: when the fact held in the world. Half-open, so a
  fact superseded at ``t`` and its replacement starting at ``t`` never overlap. A missing
  ``valid_from`` means "since always", a missing ``valid_to`` means "still holds": a triple
  is **current** exactly when it has no ``valid_to`` (the seed's "NULL = currently valid").
- *record time* ``observed_at`` (when the palace learnt it) and ``invalidated_at`` (when the
  palace recorded its end through :meth:`KnowledgeGraph.invalidate` or ``supersede``).

Dates are ISO 8601 text: a date ``YYYY-MM-DD`` or a datetime ``YYYY-MM-DDTHH:MM[:SS[.f]]``
with ``Z`` or ``±HH:MM`` (no offset means UTC). They are kept in one canonical text form —
the date as given, or the datetime converted to UTC as ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z`` —
and compared by their instant (integer microseconds since 0001-01-01T00:00Z); a date stands
for its first instant, 00:00 UTC. So ``as_of="2024-03-01"`` asks about midnight UTC.

Entities are nodes in ``palace.entities`` with id ``entity:<key>``, where the key is the
normalised name (:func:`normalise_entity`: NFKC, case-folded, runs of anything but letters,
digits and marks turned into one hyphen, hyphens trimmed) looked up once in the palace's
alias table. Every read and write path goes through :meth:`KnowledgeGraph.resolve`, so
"GCP", "Google Cloud Platform" and "google-cloud-platform" are one entity.

Edges: while at least one current triple links subject to object there is one live
RELATES_TO edge ``entity:<subject> -> entity:<object>`` in ``palace.edges`` (so Semantic A*
and graph exports walk the knowledge graph); its props list the current predicates, the
highest confidence and the triple ids. It is removed when the last current triple ends. The
knowledge graph owns every RELATES_TO edge between two ``entity:`` nodes.

Triple ids are deterministic: sha256 over the subject, predicate, object and ``valid_from``
keys, so adding the same statement twice is one triple.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

from palazzo.core.model import MAX_NAME, EdgeKind, Entity, clean_name
from palazzo.core.schema import label, quote, sentence
from palazzo.errors import ImportRejected, NotFound, PalazzoError, ValidationError
from palazzo.memory.aliases import BUILTIN

STATEMENT_TYPES = ("fact", "observation", "inference", "hypothesis")
DIRECTIONS = ("out", "in", "both")
ENTITY_PREFIX = "entity:"
MAX_PREDICATE = 100
MAX_HOPS = 6  # a hard bound: the frontier of a dense graph grows with every hop
MAX_RESULTS = 1000
DEFAULT_HOPS = 3
DEFAULT_RESULTS = 100

_OPEN_START = -1  # before every instant (instants are >= 0)
_OPEN_END = 1 << 62  # after every instant (year 9999 is about 3.2e17 µs)
_EPOCH = datetime(1, 1, 1, tzinfo=UTC)
_UNIX = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO = timedelta(microseconds=1)
_WHEN = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})"
    r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?(Z|[+-]\d{2}:\d{2})?)?",
    re.ASCII,
)


# -- time ------------------------------------------------------------------------------------

@dataclass(slots=True, frozen=True)
class When:
    """A point in time: its canonical ISO 8601 text and its instant (µs since 0001-01-01Z)."""

    text: str
    instant: int


def parse_when(text: str, what: str = "date") -> When:
    """Return ``text`` (an ISO 8601 date or datetime) as a :class:`When`.

    Raises ValidationError naming ``what`` for anything else (other ISO forms such as week
    dates, more than 6 fractional digits, impossible dates). Cost: O(len(text)).
    """
    # A field name ("as_of") becomes words and the error's field, for forms to place it.
    name = sentence(label(what)) if what.isidentifier() else what
    field = what if what.isidentifier() else None
    if not isinstance(text, str):
        raise ValidationError(f"{name} must be an ISO 8601 date or datetime string",
                              field=field)
    m = _WHEN.fullmatch(text.strip())
    if m is None:
        raise ValidationError(
            f"{name} {quote(text)} is not an ISO 8601 date: write YYYY-MM-DD, or a datetime "
            "YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|±HH:MM]", field=field)
    y, mo, d, hh, mi, ss, frac, zone = m.groups()
    try:
        if hh is None:
            day = date(int(y), int(mo), int(d))
            return When(day.isoformat(), (day - _EPOCH.date()).days * 86_400_000_000)
        tz = UTC
        if zone not in (None, "Z"):
            sign = -1 if zone[0] == "-" else 1
            hours, minutes = int(zone[1:3]), int(zone[4:6])
            if hours > 23 or minutes > 59:
                raise ValueError("offset out of range")
            offset = timedelta(hours=hours, minutes=minutes)
            tz = timezone(sign * offset)
        micro = int((frac or "").ljust(6, "0"))
        moment = datetime(int(y), int(mo), int(d), int(hh), int(mi), int(ss or 0), micro,
                          tzinfo=tz).astimezone(UTC)
    except (ValueError, OverflowError):
        raise ValidationError(f"{name} {quote(text)} is not a valid date or time (no such day "
                              "or hour)", field=field) from None
    return _when_of(moment)


def _when_of(moment: datetime) -> When:
    """Return the canonical :class:`When` of an aware UTC datetime."""
    text = (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:"
            f"{moment.minute:02d}:{moment.second:02d}")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}"
    return When(text + "Z", (moment - _EPOCH) // _MICRO)


def stamp(seconds: float) -> When:
    """Return the :class:`When` of a clock reading (seconds since 1970-01-01 UTC)."""
    try:
        if not math.isfinite(seconds):
            raise ValueError
        return _when_of(_UNIX + timedelta(microseconds=round(seconds * 1_000_000)))
    except (ValueError, OverflowError, TypeError):
        raise PalazzoError(f"the palace clock gave {seconds!r}, which is not a time") from None


def _instant(text: str | None, missing: int) -> int:
    return missing if text is None else parse_when(text).instant


# -- names -----------------------------------------------------------------------------------

def _slug(text: str, sep: str) -> str:
    """Return ``text`` NFKC-normalised and case-folded, with every run of characters that
    are not letters, digits or marks replaced by ``sep`` and ``sep`` trimmed at both ends."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    out: list[str] = []
    gap = False
    for ch in folded:
        if unicodedata.category(ch)[0] in "LNM":
            if gap and out:
                out.append(sep)
            out.append(ch)
            gap = False
        else:
            gap = True
    return "".join(out)


def _fixed(text: str, sep: str) -> str:
    # Case folding can leave text that NFKC changes again (and the reverse); a few rounds
    # reach the fixed point, which makes normalisation idempotent.
    for _ in range(4):
        nxt = _slug(text, sep)
        if nxt == text:
            break
        text = nxt
    return text


def normalise_entity(name: str) -> str:
    """Return the entity key of ``name`` before aliases: trimmed, NFKC, case-folded,
    punctuation/space runs as one hyphen, no leading or trailing hyphen ("" if nothing is
    left). Idempotent. Cost: O(len(name))."""
    return _fixed(name, "-")


# The aliases a new palace starts with: the built-in table (:mod:`palazzo.memory.aliases`,
# 402 spellings of 129 technologies and organisations) flattened to normalised keys, so a
# name that would otherwise split one thing into two entities (seed 002 §5: "GCP" did not
# meet "Google Cloud Platform") resolves to one. Users extend the table per palace (op
# ``kg_alias``); it is saved in the palace file, so changing these defaults never changes an
# existing palace.
DEFAULT_ALIASES: dict[str, str] = {
    normalise_entity(a): key for key, spellings in BUILTIN.items() for a in spellings}


def normalise_predicate(predicate: str) -> str:
    """Return the predicate key: like :func:`normalise_entity` but runs become "_", so
    "Works at", "works-at" and "WORKS_AT" are all ``works_at``."""
    return _fixed(predicate, "_")


def entity_id(key: str) -> str:
    """Return the node id of the entity with key ``key``."""
    return ENTITY_PREFIX + key


def triple_id(subject: str, predicate: str, obj: str, valid_from: str | None) -> str:
    """Return the deterministic id of a triple from its keys and canonical ``valid_from``.

    The separator cannot occur in keys (they hold letters, digits, marks, "-" and "_").
    """
    raw = "\x1f".join((subject, predicate, obj, valid_from or ""))
    return "triple_" + hashlib.sha256(raw.encode()).hexdigest()[:24]


# -- records ---------------------------------------------------------------------------------

@dataclass(slots=True)
class Triple:
    """One statement with its validity, record times and evidence. ``start``/``end`` are
    the instants of ``valid_from``/``valid_to`` (open ends as sentinels) for comparisons."""

    id: str
    subject: str
    predicate: str
    object: str
    confidence: float
    statement_type: str
    valid_from: str | None
    valid_to: str | None
    observed_at: str
    invalidated_at: str | None = None
    source_drawer: str | None = None
    source_file: str | None = None
    start: int = field(init=False, repr=False, compare=False, default=_OPEN_START)
    end: int = field(init=False, repr=False, compare=False, default=_OPEN_END)

    def __post_init__(self) -> None:
        self.start = _instant(self.valid_from, _OPEN_START)
        self.end = _instant(self.valid_to, _OPEN_END)

    @property
    def current(self) -> bool:
        """Whether nothing has ended this fact (it has no ``valid_to``)."""
        return self.valid_to is None

    def holds(self, instant: int) -> bool:
        """Return whether the fact was valid at ``instant`` (half-open interval)."""
        return self.start <= instant < self.end

    def to_json(self) -> dict[str, Any]:
        """Return the triple as stored in the palace file."""
        return {
            "id": self.id, "subject": self.subject, "predicate": self.predicate,
            "object": self.object, "confidence": self.confidence,
            "statement_type": self.statement_type, "valid_from": self.valid_from,
            "valid_to": self.valid_to, "observed_at": self.observed_at,
            "invalidated_at": self.invalidated_at, "source_drawer": self.source_drawer,
            "source_file": self.source_file,
        }

    def to_dict(self) -> dict[str, Any]:
        """Return the triple as operations report it (the stored fields plus ``current``)."""
        return {**self.to_json(), "current": self.current}


@dataclass(slots=True)
class Added:
    """What :meth:`KnowledgeGraph.add` did: the triple now stored, whether it is new, and
    whether an existing duplicate took the new (higher) confidence."""

    triple: Triple
    created: bool
    updated: bool


@dataclass(slots=True)
class Step:
    """One hop of a traversal: the triple walked and whether along it (out) or against (in)."""

    triple: Triple
    direction: str

    def to_dict(self) -> dict[str, Any]:
        """Return the step as operations report it (the triple's id, ends and confidence)."""
        t = self.triple
        return {"triple_id": t.id, "subject": t.subject, "predicate": t.predicate,
                "object": t.object, "confidence": t.confidence, "direction": self.direction}


@dataclass(slots=True)
class Path:
    """A path from the traversal's start: the entity keys visited and the steps between."""

    entities: list[str]
    steps: list[Step]
    min_confidence: float

    @property
    def hops(self) -> int:
        """The number of steps (triples walked)."""
        return len(self.steps)

    def to_dict(self) -> dict[str, Any]:
        """Return the path as operations report it."""
        return {"end": self.entities[-1], "hops": self.hops,
                "min_confidence": self.min_confidence, "entities": list(self.entities),
                "steps": [s.to_dict() for s in self.steps]}


@dataclass(slots=True)
class Traversal:
    """The result of :func:`traverse`: paths in order, whether max_results cut them, and
    how many entities were reached (the start included)."""

    start: str
    paths: list[Path]
    truncated: bool
    visited: int

    def to_dict(self) -> dict[str, Any]:
        """Return the traversal as ``kg_traverse`` reports it."""
        return {"start": self.start, "count": len(self.paths), "truncated": self.truncated,
                "visited": self.visited, "paths": [p.to_dict() for p in self.paths]}


@dataclass(slots=True)
class Contradiction:
    """Two facts with one subject and predicate but different objects, valid at once."""

    first: Triple
    second: Triple
    overlap_from: str | None
    overlap_to: str | None

    def to_dict(self) -> dict[str, Any]:
        """Return the pair as ``kg_contradictions`` reports it."""
        return {"subject": self.first.subject, "predicate": self.first.predicate,
                "objects": [self.first.object, self.second.object],
                "overlap_from": self.overlap_from, "overlap_to": self.overlap_to,
                "facts": [self.first.to_dict(), self.second.to_dict()]}


# -- the graph -------------------------------------------------------------------------------

class KnowledgeGraph:
    """Triples and the entity alias table of one palace, indexed by subject and by object.

    Triples are never deleted, only ended, so the history stays queryable (``as_of``,
    timeline). Every mutating method validates everything before it changes anything.
    """

    def __init__(self, palace: Any, aliases: dict[str, str] | None = None) -> None:
        self.palace = palace
        self.aliases: dict[str, str] = dict(DEFAULT_ALIASES if aliases is None else aliases)
        self.triples: dict[str, Triple] = {}
        self.by_subject: dict[str, list[str]] = {}
        self.by_object: dict[str, list[str]] = {}
        # (subject, object) -> triple ids: duplicates and edge props look here, so adding a
        # fact to a hub entity does not scan all its facts.
        self.by_pair: dict[tuple[str, str], list[str]] = {}

    # -- names and entities --------------------------------------------------------------
    def resolve(self, name: str, what: str = "entity") -> str:
        """Return the entity key ``name`` stands for (normalised, then through the alias
        table). Raises ValidationError for names with nothing left after normalising."""
        if not isinstance(name, str):
            raise ValidationError(f"{what} must be a string")
        key = normalise_entity(clean_name(name, what))
        if not key:
            raise ValidationError(f"{what} {quote(name)} has no letters or digits")
        key = self.aliases.get(key, key)
        if len(key) > MAX_NAME:
            raise ValidationError(f"{what} {quote(name)} is longer than {MAX_NAME} characters "
                                  "once normalised")
        return key

    def predicate(self, name: str) -> str:
        """Return the predicate key of ``name`` or raise ValidationError."""
        if not isinstance(name, str):
            raise ValidationError("predicate must be a string")
        key = normalise_predicate(name)
        if not key:
            raise ValidationError(f"predicate {quote(name)} has no letters or digits")
        if len(key) > MAX_PREDICATE:
            raise ValidationError(f"predicate {quote(name)} is longer than {MAX_PREDICATE} "
                                  "characters once normalised")
        return key

    def entity(self, name: str) -> Entity:
        """Return the entity ``name`` resolves to, or raise NotFound."""
        key = self.resolve(name)
        found = self.palace.entities.get(entity_id(key))
        if found is None:
            raise NotFound(f"no entity {quote(key)} in the knowledge graph"
                           + ("" if key == name else f" ({quote(name)} resolves to it)"))
        return found

    def set_entity(self, name: str, type: str | None = None,
                   properties: dict[str, Any] | None = None) -> tuple[Entity, bool]:
        """Create or update the entity ``name``: a given ``type`` replaces the old one, given
        ``properties`` are merged in (shallow). Returns (entity, created now)."""
        key = self.resolve(name)
        if type is not None:
            type = clean_name(type, "entity type")
        if properties is not None:
            _check_json(properties, "properties")
        found = self.palace.entities.get(entity_id(key))
        created = found is None
        if found is None:
            found = self._new_entity(key, name, type)
        elif type is not None:
            found.type = type
        if properties:
            found.properties = {**found.properties, **properties}
        return found, created

    def _new_entity(self, key: str, name: str, type: str | None) -> Entity:
        # The first spelling seen names the entity, unless it came in through an alias
        # ("GCP" should not name google-cloud-platform).
        surface = clean_name(name, "entity")
        shown = surface if normalise_entity(surface) == key else key
        entity = Entity(id=entity_id(key), name=shown, type=type or "concept")
        self.palace.entities[entity.id] = entity
        return entity

    def facts_of(self, key: str) -> list[Triple]:
        """Return every triple with ``key`` as subject or object (subject ones first)."""
        ids = [*self.by_subject.get(key, ()), *self.by_object.get(key, ())]
        return [self.triples[i] for i in ids]

    # -- adding, ending, replacing ---------------------------------------------------------
    def now(self) -> When:
        """Return the palace clock's reading as a :class:`When`."""
        return stamp(float(self.palace.clock()))

    def prepare(self, subject: str, predicate: str, obj: str, *, confidence: float = 1.0,
                valid_from: str | None = None, valid_to: str | None = None,
                observed_at: str | None = None, source_drawer: str | None = None,
                source_file: str | None = None, statement_type: str = "fact") -> Triple:
        """Return the triple these arguments describe, validated but not stored.
        ``confidence`` defaults to 1 (the caller states it as a fact); ``observed_at`` to now.

        Raises ValidationError (bad name, date, confidence, statement type, empty validity)
        or NotFound (``source_drawer`` is not a drawer of the palace). Changes nothing.
        """
        s, o = self.resolve(subject, "subject"), self.resolve(obj, "object")
        p = self.predicate(predicate)
        if s == o:
            raise ValidationError(f"subject and object are the same entity ({quote(s)})")
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) \
                or not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
            raise ValidationError("confidence must be a number between 0 and 1")
        if statement_type not in STATEMENT_TYPES:
            raise ValidationError(f"statement_type must be one of {', '.join(STATEMENT_TYPES)}")
        start = None if valid_from is None else parse_when(valid_from, "valid_from")
        end = None if valid_to is None else parse_when(valid_to, "valid_to")
        if start is not None and end is not None and end.instant <= start.instant:
            raise ValidationError(f"valid_to ({end.text}) must be after valid_from "
                                  f"({start.text})")
        seen = self.now() if observed_at is None else parse_when(observed_at, "observed_at")
        if source_drawer is not None and source_drawer not in self.palace.drawers.row_of:
            raise NotFound(f"source_drawer: no drawer with id {quote(source_drawer)}")
        vf = None if start is None else start.text
        return Triple(
            id=triple_id(s, p, o, vf), subject=s, predicate=p, object=o,
            confidence=float(confidence), statement_type=statement_type, valid_from=vf,
            valid_to=None if end is None else end.text, observed_at=seen.text,
            source_drawer=source_drawer, source_file=source_file,
        )

    def duplicate_of(self, new: Triple) -> Triple | None:
        """Return the stored triple with the same subject, predicate and object as ``new``
        whose validity overlaps it (the earliest-starting one), or None.
        Cost: O(facts linking the same subject and object)."""
        found = [t for t in (self.triples[i] for i in self.by_pair.get((new.subject,
                                                                         new.object), ()))
                 if t.predicate == new.predicate and t.start < new.end and new.start < t.end]
        return min(found, key=lambda t: (t.start, t.id), default=None)

    def add(self, subject: str, predicate: str, obj: str, *, subject_type: str | None = None,
            object_type: str | None = None, **fields: Any) -> Added:
        """Store a statement; return what happened (:class:`Added`).

        A statement with the same subject, predicate and object as a stored triple whose
        validity overlaps is not stored twice: the stored triple keeps the higher confidence
        (and, when the new one is higher, its evidence: source and statement type). Its
        validity is never changed here (``invalidate``/``supersede`` end facts). New
        entities get ``subject_type``/``object_type`` (default "concept").
        Cost: O(facts linking the same subject and object) plus one edge update.
        """
        types = [None if t is None else clean_name(t, "entity type")
                 for t in (subject_type, object_type)]
        new = self.prepare(subject, predicate, obj, **fields)
        return self._apply(new, subject, obj, types)

    def _apply(self, new: Triple, subject: str, obj: str, types: list[str | None]) -> Added:
        """Store ``new`` (already validated: nothing here can fail) or merge it into its
        duplicate; return what happened."""
        dup = self.duplicate_of(new)
        if dup is not None:
            updated = new.confidence > dup.confidence
            if updated:
                dup.confidence = new.confidence
                dup.statement_type = new.statement_type
                dup.source_drawer, dup.source_file = new.source_drawer, new.source_file
                self._sync_edge(dup.subject, dup.object)
            return Added(dup, False, updated)
        for key, name, type in ((new.subject, subject, types[0]), (new.object, obj, types[1])):
            if entity_id(key) not in self.palace.entities:
                self._new_entity(key, name, type)
        self._insert(new)
        self._sync_edge(new.subject, new.object)
        return Added(new, True, False)

    def _insert(self, t: Triple) -> None:
        self.triples[t.id] = t
        self.by_subject.setdefault(t.subject, []).append(t.id)
        self.by_object.setdefault(t.object, []).append(t.id)
        self.by_pair.setdefault((t.subject, t.object), []).append(t.id)

    def get(self, tid: str) -> Triple:
        """Return the triple ``tid`` or raise NotFound."""
        try:
            return self.triples[tid]
        except KeyError:
            raise NotFound(f"no triple with id {quote(tid)}") from None

    def matching(self, subject: str, predicate: str, obj: str) -> list[Triple]:
        """Return the current triples with these (resolved) subject, predicate and object."""
        s, p, o = self.resolve(subject, "subject"), self.predicate(predicate), \
            self.resolve(obj, "object")
        return [t for t in (self.triples[i] for i in self.by_pair.get((s, o), ()))
                if t.predicate == p and t.current]

    def _check_end(self, t: Triple, ended: When, what: str = "ended") -> None:
        if not t.current:
            raise ValidationError(f"triple {t.id} already ended at {t.valid_to}")
        if ended.instant <= t.start:
            raise ValidationError(f"triple {t.id} cannot end at {ended.text}: it starts at "
                                  f"{t.valid_from}", field=what)

    def _end(self, t: Triple, ended: When, now: When) -> None:
        t.valid_to, t.end, t.invalidated_at = ended.text, ended.instant, now.text

    def invalidate(self, triples: list[Triple], ended: str | None = None) -> list[Triple]:
        """End ``triples`` (current ones) at ``ended`` (default now): set valid_to, and
        invalidated_at to now; their RELATES_TO edges follow. All are checked first, so a
        bad one ends none. Returns the ended triples."""
        now = self.now()
        end = now if ended is None else parse_when(ended, "ended")
        for t in triples:
            self._check_end(t, end)
        for t in triples:
            self._end(t, end, now)
        for pair in dict.fromkeys((t.subject, t.object) for t in triples):
            self._sync_edge(*pair)
        return triples

    def reopen(self, tid: str) -> Triple:
        """Make the ended triple ``tid`` current again (the undo of :meth:`invalidate`): clear
        its valid_to and invalidated_at; its RELATES_TO edge follows. Refused (ValidationError)
        when it is current, or when another triple with the same subject, predicate and object
        is valid after its start (it would then be stored twice). Returns the triple.
        Cost: O(facts linking the same subject and object)."""
        t = self.get(tid)
        if t.current:
            raise ValidationError(f"triple {t.id} is current already: there is nothing to "
                                  "reopen")
        clash = [o for o in (self.triples[i] for i in self.by_pair.get((t.subject, t.object),
                                                                       ()))
                 if o.id != t.id and o.predicate == t.predicate and o.end > t.start]
        if clash:
            raise ValidationError(f"triple {t.id} cannot be reopened: {clash[0].id} (the same "
                                  "fact) is valid after it starts")
        t.valid_to, t.end, t.invalidated_at = None, _OPEN_END, None
        self._sync_edge(t.subject, t.object)
        return t

    def supersede(self, tid: str, obj: str, *, subject: str | None = None,
                  predicate: str | None = None, at: str | None = None,
                  subject_type: str | None = None, object_type: str | None = None,
                  **fields: Any) -> tuple[Triple, Added]:
        """End triple ``tid`` at ``at`` (default now) and add its replacement valid from
        ``at`` (subject and predicate default to the old one's), atomically: everything is
        validated before either change, so on any error the old fact stays current.
        Returns (the ended triple, what adding the replacement did)."""
        old = self.get(tid)
        now = self.now()
        when = now if at is None else parse_when(at, "at")
        self._check_end(old, when, "at")
        if "valid_from" in fields:
            raise ValidationError("the replacement starts at 'at'; do not give valid_from")
        types = [None if t is None else clean_name(t, "entity type")
                 for t in (subject_type, object_type)]
        s = old.subject if subject is None else subject
        p = old.predicate if predicate is None else predicate
        new = self.prepare(s, p, obj, valid_from=when.text, **fields)
        # Everything is validated; from here on nothing can fail. Ending the old fact
        # first lets a replacement with the same object start exactly where it ends.
        self._end(old, when, now)
        added = self._apply(new, s, obj, types)
        self._sync_edge(old.subject, old.object)
        return old, added

    # -- edges ---------------------------------------------------------------------------
    def edge_props(self, s: str, o: str) -> dict[str, Any] | None:
        """Return the props the RELATES_TO edge s -> o must carry, or None when no current
        triple links them (then there must be no edge). Cost: O(facts linking s to o)."""
        live = [t for t in (self.triples[i] for i in self.by_pair.get((s, o), ()))
                if t.current]
        if not live:
            return None
        return {"predicates": sorted({t.predicate for t in live}),
                "confidence": max(t.confidence for t in live),
                "triples": sorted(t.id for t in live)}

    def _sync_edge(self, s: str, o: str) -> None:
        edges = self.palace.edges
        props = self.edge_props(s, o)
        i = edges.find(EdgeKind.RELATES_TO, entity_id(s), entity_id(o))
        if props is None:
            if i is not None:
                edges.remove(i)
        else:
            if i is None:
                i = edges.add(EdgeKind.RELATES_TO, entity_id(s), entity_id(o))
            edges.props[i] = props  # a new dict: an earlier export may share the old one

    # -- reading -------------------------------------------------------------------------
    def query(self, name: str, direction: str = "both", as_of: str | None = None,
              predicates: list[str] | None = None) -> list[tuple[Triple, str]]:
        """Return (triple, "out"|"in") for the facts of entity ``name``: all of them, or
        with ``as_of`` those valid at that time; optionally only some predicates. Ordered by
        direction (out first), predicate, start, id. Cost: O(facts of the entity · log)."""
        key = self.entity(name).id[len(ENTITY_PREFIX):]
        if direction not in DIRECTIONS:
            raise ValidationError(f"direction must be one of {', '.join(DIRECTIONS)}")
        when = None if as_of is None else parse_when(as_of, "as_of").instant
        wanted = None if predicates is None else {self.predicate(p) for p in predicates}
        out: list[tuple[Triple, str]] = []
        for side, index in (("out", self.by_subject), ("in", self.by_object)):
            if direction not in (side, "both"):
                continue
            found = [t for t in (self.triples[i] for i in index.get(key, ()))
                     if (when is None or t.holds(when))
                     and (wanted is None or t.predicate in wanted)]
            found.sort(key=lambda t: (t.predicate, t.start, t.id))
            out.extend((t, side) for t in found)
        return out

    def timeline(self, name: str | None = None, predicate: str | None = None
                 ) -> list[Triple]:
        """Return the facts of entity ``name`` (or all facts) in time order: by valid_from
        (unknown start first), then valid_to (open end last), observed_at, id.
        Cost: O(n log n) in the facts returned."""
        if name is None:
            found = list(self.triples.values())
        else:
            found = self.facts_of(self.entity(name).id[len(ENTITY_PREFIX):])
        if predicate is not None:
            p = self.predicate(predicate)
            found = [t for t in found if t.predicate == p]
        found.sort(key=lambda t: (t.start, t.end, parse_when(t.observed_at).instant, t.id))
        return found

    def contradictions(self, name: str | None = None, predicate: str | None = None
                       ) -> list[Contradiction]:
        """Return pairs of facts with one subject and predicate, different objects and
        overlapping validity (current or not), ordered by subject, predicate, start, id.
        ``name`` limits the subjects to that entity. Cost: a sweep per (subject,
        predicate) group, O(k log k + pairs)."""
        if name is None:
            subjects = sorted(self.by_subject)
        else:
            subjects = [self.entity(name).id[len(ENTITY_PREFIX):]]
        wanted = None if predicate is None else self.predicate(predicate)
        out: list[Contradiction] = []
        for s in subjects:
            groups: dict[str, list[Triple]] = {}
            for tid in self.by_subject.get(s, ()):
                t = self.triples[tid]
                if wanted is None or t.predicate == wanted:
                    groups.setdefault(t.predicate, []).append(t)
            for p in sorted(groups):
                facts = sorted(groups[p], key=lambda t: (t.start, t.id))
                for i, a in enumerate(facts):
                    for b in facts[i + 1:]:
                        if b.start >= a.end:
                            break  # sorted by start: no later fact overlaps a either
                        if a.object != b.object:
                            later = b if b.start > a.start else a
                            sooner = a if a.end <= b.end else b
                            out.append(Contradiction(a, b, later.valid_from, sooner.valid_to))
        return out

    def stats(self) -> dict[str, Any]:
        """Return counts: entities, triples (current/ended), per predicate and statement
        type, aliases, RELATES_TO edges. Cost: O(triples + entities)."""
        predicates: dict[str, int] = {}
        kinds = dict.fromkeys(STATEMENT_TYPES, 0)
        current = 0
        for t in self.triples.values():
            predicates[t.predicate] = predicates.get(t.predicate, 0) + 1
            kinds[t.statement_type] += 1
            current += t.current
        edges = self.palace.edges
        relates = sum(1 for src, nbrs in edges.out.items() if src.startswith(ENTITY_PREFIX)
                      for i in nbrs if edges.kind[i] is EdgeKind.RELATES_TO)
        return {
            "entities": sum(1 for e in self.palace.entities if e.startswith(ENTITY_PREFIX)),
            "triples": len(self.triples), "current": current,
            "ended": len(self.triples) - current,
            "predicates": dict(sorted(predicates.items())), "statement_types": kinds,
            "aliases": len(self.aliases), "relates_to_edges": relates,
        }

    # -- aliases -------------------------------------------------------------------------
    def add_alias(self, alias: str, name: str) -> dict[str, Any]:
        """Make ``alias`` resolve to the entity ``name`` resolves to; return what changed
        (the previous target, aliases re-pointed because they led to ``alias``).

        The table stays flat (alias -> final key). An alias that already is an entity is
        refused: facts are stored under keys, and merging entities is not supported.
        """
        a = normalise_entity(clean_name(alias, "alias"))
        if not a or len(a) > MAX_NAME:
            raise ValidationError(f"alias {quote(alias)} must have 1 to {MAX_NAME} letters or "
                                  "digits once normalised")
        target = self.resolve(name)
        if target == a:
            raise ValidationError(f"{quote(alias)} and {quote(name)} are already the same entity "
                                  f"({quote(a)})")
        if entity_id(a) in self.palace.entities:
            raise ValidationError(f"{quote(a)} is already an entity of this palace; an alias "
                                  "must be a name not used yet")
        previous = self.aliases.get(a)
        repointed = sorted(k for k, v in self.aliases.items() if v == a)
        for k in repointed:
            self.aliases[k] = target
        self.aliases[a] = target
        return {"alias": a, "entity": target, "previous": previous, "repointed": repointed}

    def remove_alias(self, alias: str) -> str:
        """Remove ``alias`` from the table; return the key it led to. Facts are unchanged
        (they are stored under keys). Raises NotFound when it is not an alias."""
        a = normalise_entity(clean_name(alias, "alias"))
        if a not in self.aliases:
            raise NotFound(f"{quote(a)} is not an alias")
        return self.aliases.pop(a)

    # -- palace file ---------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able KG section of the palace file: the alias table (sorted) and
        the triples in the order they were added. Entities and edges are saved elsewhere."""
        return {"aliases": dict(sorted(self.aliases.items())),
                "triples": [t.to_json() for t in self.triples.values()]}

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str, relink: bool = False
                  ) -> KnowledgeGraph:
        """Return the KG read from ``value`` for ``palace`` (whose entities and edges are
        already built); raise ImportRejected naming the bad place. Checks every field, that
        triple ids match their content, that each end is a known canonical entity, and that
        the RELATES_TO edges between entities are exactly those the current triples need
        (with ``relink``, makes them so instead: a palace rebuilt around damaged edges).
        No two triples with one subject, predicate and object may overlap in time (what
        :meth:`add` guarantees). A missing section (older files) gives the default aliases
        and no triples. Cost: O(triples · facts per subject + edges)."""
        if not isinstance(value, dict):
            raise ImportRejected(f"{where} must be an object")
        raw_aliases = value.get("aliases", DEFAULT_ALIASES)
        if not isinstance(raw_aliases, dict):
            raise ImportRejected(f"{where}.aliases must be an object")
        aliases: dict[str, str] = {}
        for a, target in raw_aliases.items():
            at = f"{where}.aliases[{quote(a)}]"
            for part in (a, target):
                if not isinstance(part, str) or not part or normalise_entity(part) != part \
                        or len(part) > MAX_NAME:
                    raise ImportRejected(f"{at}: {quote(part)} is not a normalised entity name")
            if target == a or target in raw_aliases:
                raise ImportRejected(f"{at} must lead to an entity, not to itself or to "
                                     "another alias")
            aliases[a] = target
        kg = cls(palace, aliases)
        raw = value.get("triples", [])
        if not isinstance(raw, list):
            raise ImportRejected(f"{where}.triples must be a list")
        for i, item in enumerate(raw):
            t = kg._read_triple(item, f"{where}.triples[{i}]")
            if t.id in kg.triples:
                raise ImportRejected(f"{where}.triples[{i}].id {quote(t.id)} appears twice")
            dup = kg.duplicate_of(t)
            if dup is not None:
                raise ImportRejected(f"{where}.triples[{i}] overlaps {dup.id} in time with "
                                     "the same subject, predicate and object (one fact "
                                     "stored twice)")
            kg._insert(t)
        if relink:
            kg._relink()
        kg._check_edges(where)
        return kg

    def _relink(self) -> None:
        """Make the RELATES_TO edges between entities exactly those the current triples
        need: each pair's edge added or given its props, any other removed. O(edges +
        triples)."""
        edges = self.palace.edges
        pairs = dict.fromkeys((t.subject, t.object) for t in self.triples.values()
                              if t.current)
        for i in list(edges.live()):
            src, dst = edges.src[i], edges.dst[i]
            if edges.kind[i] is EdgeKind.RELATES_TO and src.startswith(ENTITY_PREFIX) \
                    and dst.startswith(ENTITY_PREFIX) \
                    and (src[len(ENTITY_PREFIX):], dst[len(ENTITY_PREFIX):]) not in pairs:
                edges.remove(i)
        for s, o in pairs:
            self._sync_edge(s, o)

    def _read_triple(self, item: Any, at: str) -> Triple:
        """Return the triple in ``item`` or raise ImportRejected naming the field."""
        if not isinstance(item, dict):
            raise ImportRejected(f"{at} must be an object")

        def text(key: str, nullable: bool = False) -> Any:
            v = item.get(key)
            if v is None and nullable:
                return None
            if not isinstance(v, str):
                raise ImportRejected(f"{at}.{key} must be a string"
                                     + (" or null" if nullable else ""))
            return v

        def when(key: str, nullable: bool) -> str | None:
            v = text(key, nullable)
            if v is None:
                return None
            try:
                canonical = parse_when(v).text
            except ValidationError:
                raise ImportRejected(f"{at}.{key} {quote(v)} is not an ISO 8601 date") from None
            if canonical != v:
                raise ImportRejected(f"{at}.{key} {quote(v)} is not in canonical form "
                                     f"({quote(canonical)})")
            return v

        s, p, o = text("subject"), text("predicate"), text("object")
        for key, v in (("subject", s), ("object", o)):
            if not v or normalise_entity(v) != v or len(v) > MAX_NAME:
                raise ImportRejected(f"{at}.{key} {quote(v)} is not a normalised entity name")
            if v in self.aliases:
                raise ImportRejected(f"{at}.{key} {quote(v)} is an alias of "
                                     f"{quote(self.aliases[v])}; facts name the entity itself")
            if entity_id(v) not in self.palace.entities:
                raise ImportRejected(f"{at}.{key}: no entity {quote(entity_id(v))} in "
                                     "palace.entities")
        if s == o:
            raise ImportRejected(f"{at}: subject and object are the same entity")
        if not p or normalise_predicate(p) != p or len(p) > MAX_PREDICATE:
            raise ImportRejected(f"{at}.predicate {quote(p)} is not a normalised predicate")
        conf = item.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, int | float):
            raise ImportRejected(f"{at}.confidence must be a number")
        if not math.isfinite(conf) or not 0.0 <= conf <= 1.0:
            raise ImportRejected(f"{at}.confidence must be between 0 and 1")
        kind = item.get("statement_type")
        if kind not in STATEMENT_TYPES:
            raise ImportRejected(f"{at}.statement_type must be one of "
                                 f"{', '.join(STATEMENT_TYPES)}")
        vf, vt = when("valid_from", True), when("valid_to", True)
        observed, ended = when("observed_at", False), when("invalidated_at", True)
        if vf is not None and vt is not None and parse_when(vt).instant \
                <= parse_when(vf).instant:
            raise ImportRejected(f"{at}.valid_to must be after valid_from")
        if ended is not None and vt is None:
            raise ImportRejected(f"{at}.invalidated_at is set but valid_to is not")
        tid = text("id")
        if tid != triple_id(s, p, o, vf):
            raise ImportRejected(f"{at}.id {quote(tid)} does not match its subject, predicate, "
                                 "object and valid_from")
        assert observed is not None
        return Triple(id=tid, subject=s, predicate=p, object=o, confidence=float(conf),
                      statement_type=kind, valid_from=vf, valid_to=vt, observed_at=observed,
                      invalidated_at=ended, source_drawer=text("source_drawer", True),
                      source_file=text("source_file", True))

    def _check_edges(self, where: str) -> None:
        """Raise ImportRejected unless the live RELATES_TO edges between entities are
        exactly one per linked pair of the current triples, with the props they imply."""
        edges = self.palace.edges
        pairs = dict.fromkeys((t.subject, t.object) for t in self.triples.values()
                              if t.current)
        for s, o in pairs:
            i = edges.find(EdgeKind.RELATES_TO, entity_id(s), entity_id(o))
            if i is None:
                raise ImportRejected(f"{where}: current facts link {quote(s)} to {quote(o)} but "
                                     "palace.edges has no RELATES_TO edge between them")
            want = self.edge_props(s, o)
            if edges.props[i] != want:
                raise ImportRejected(f"palace.edges: the RELATES_TO edge {entity_id(s)} -> "
                                     f"{entity_id(o)} has props {quote(edges.props[i])}; its "
                                     f"current facts in {where} give {quote(want)}")
        for i in edges.live():
            src, dst = edges.src[i], edges.dst[i]
            if edges.kind[i] is EdgeKind.RELATES_TO and src.startswith(ENTITY_PREFIX) \
                    and dst.startswith(ENTITY_PREFIX) \
                    and (src[len(ENTITY_PREFIX):], dst[len(ENTITY_PREFIX):]) not in pairs:
                raise ImportRejected(f"palace.edges: the RELATES_TO edge {src} -> {dst} has "
                                     f"no current fact in {where}.triples")


def _check_json(value: Any, what: str) -> None:
    """Raise ValidationError unless ``value`` is plain JSON (it is saved in the file)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise ValidationError(f"{what} must be plain JSON (no NaN, no other types)") from None


# -- traversal -------------------------------------------------------------------------------

def traverse(kg: KnowledgeGraph, start: str, *, predicates: list[str] | None = None,
             direction: str = "out", max_hops: int = DEFAULT_HOPS,
             max_results: int = DEFAULT_RESULTS, min_confidence: float = 0.0,
             as_of: str | None = None) -> Traversal:
    """Return the bounded breadth-first traversal from entity ``start`` (seed 002 §6.3).

    Walks current triples (or, with ``as_of``, those valid then) with confidence at least
    ``min_confidence`` and, if given, one of ``predicates``; "out" follows subject -> object,
    "in" the reverse, "both" either. Each entity is reached once, by a shortest path; among
    shortest paths the one whose weakest triple is strongest wins (ties: earlier parent,
    predicate, triple id). Paths come by hop count, then min_confidence descending, then end
    key; at most ``max_results`` of them, at most ``max_hops`` hops long. Cycles end at the
    visited set. Cost: O(V + E) over the part of the graph within ``max_hops``.
    """
    if direction not in DIRECTIONS:
        raise ValidationError(f"direction must be one of {', '.join(DIRECTIONS)}")
    if isinstance(max_hops, bool) or not isinstance(max_hops, int) \
            or not 1 <= max_hops <= MAX_HOPS:
        raise ValidationError(f"max_hops must be an integer from 1 to {MAX_HOPS}")
    if isinstance(max_results, bool) or not isinstance(max_results, int) \
            or not 1 <= max_results <= MAX_RESULTS:
        raise ValidationError(f"max_results must be an integer from 1 to {MAX_RESULTS}")
    if isinstance(min_confidence, bool) or not isinstance(min_confidence, int | float) \
            or not math.isfinite(min_confidence) or not 0.0 <= min_confidence <= 1.0:
        raise ValidationError("min_confidence must be a number between 0 and 1")
    origin = kg.entity(start).id[len(ENTITY_PREFIX):]
    wanted = None if predicates is None else {kg.predicate(p) for p in predicates}
    when = None if as_of is None else parse_when(as_of, "as_of").instant
    sides = [(s, i) for s, i in (("out", kg.by_subject), ("in", kg.by_object))
             if direction in (s, "both")]

    def usable(t: Triple) -> bool:
        return ((t.current if when is None else t.holds(when))
                and t.confidence >= min_confidence
                and (wanted is None or t.predicate in wanted))

    paths: list[Path] = []
    found = {origin: Path([origin], [], 1.0)}
    frontier = [origin]
    for _ in range(max_hops):
        best: dict[str, tuple[tuple[float, int, str, str], Path]] = {}
        for rank, u in enumerate(frontier):
            here = found[u]
            for side, index in sides:
                for tid in index.get(u, ()):
                    t = kg.triples[tid]
                    v = t.object if side == "out" else t.subject
                    if v in found or not usable(t):
                        continue
                    conf = min(here.min_confidence, t.confidence)
                    key = (-conf, rank, t.predicate, t.id)
                    if v not in best or key < best[v][0]:
                        best[v] = (key, Path([*here.entities, v], [*here.steps, Step(t, side)],
                                             conf))
        if not best:
            break
        level = sorted(best, key=lambda v: (-best[v][1].min_confidence, v))
        for v in level:
            found[v] = best[v][1]
        room = max_results - len(paths)
        paths.extend(found[v] for v in level[:room])
        if len(level) > room:
            return Traversal(origin, paths, True, len(found))
        frontier = level
    return Traversal(origin, paths, False, len(found))
