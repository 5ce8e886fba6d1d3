"""Conversation memory as a DAG of turns (seed 002 §3.2).

A turn is one message of one conversation: role, phase, salience, the sha256 of its normalised
text, its parent turns, its depth and when it was said. Its text is also a drawer (wing
``conversations``, room = the conversation's name), so search finds it; the turn keeps that
drawer's id. Turns are immutable once added: the provenance kernel hashes them, so a turn that
changed under a token would make the token lie.

**Ids.** A turn's id is sha256 over (conversation, sorted parent ids, role, content hash), so the
same message in the same place is the same turn and importing a conversation twice adds
nothing. Time, phase and salience are not part of the id: the first write wins.

**Edges** are derived from the parent links, never stored, so they always describe the graph as
it is now. For a link parent -> child:

- ``merge``  the child has more than one parent (every link into it is a merge);
- ``branch`` the child has one parent and that parent has more than one child (every link out
  of a parent with several children, the first child's included, is a branch);
- ``reply``  the child has one parent and is its only child.

So a reply becomes a branch when a sibling is added beside it. ``depth`` is 0 for a root and
1 + the deepest parent otherwise.

**Normalised text**: NFC, CRLF and CR turned into LF, outer whitespace trimmed. The drawer holds
this text, so ``sha256(drawer text) == content_hash`` until someone edits the drawer.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from palazzo.core import jsontext
from palazzo.core.model import clean_name, drawer_id
from palazzo.core.schema import plain, quote
from palazzo.errors import ImportRejected, NotFound, PalazzoError, ValidationError

WING = "conversations"
PHASES = ("synthesis", "planning", "consolidation", "debugging", "exploration")
ROLES = ("system", "developer", "user", "assistant", "tool")
EDGE_TYPES = ("reply", "branch", "merge")
DEFAULT_PHASE = "exploration"  # the lowest default weight: unlabelled turns are not promoted
DEFAULT_SALIENCE = 0.5
QUANTUM = 1_000_000  # floats that are hashed or compared are first rounded to 1e-6
MAX_PARENTS = 64
MAX_MESSAGES = 100_000
MAX_TURN_CHARS = 5_000_000  # the drawer limit (model.MAX_CONTENT)
TURN_FIELDS = ("id", "conversation", "parents", "role", "phase", "salience", "content_hash",
               "depth", "created_at", "drawer_id")
# What a turn's text is (importers record it; "text" unless said): the turn's own words, or
# content a chat program showed beside them, kept as text — a voice turn's transcript, a
# canvas document, a saved memory, code the assistant ran and its output, a reasoning
# summary, the user's custom instructions, a tool call in one marked line, attachment names.
TURN_KINDS = ("text", "voice", "canvas", "memory", "code", "code_output", "reasoning",
              "instructions", "tool_use", "attachments")
DEFAULT_KIND = "text"
_HEX = frozenset("0123456789abcdef")


def quantise(value: float) -> int:
    """Return ``round(value · 10^6)``: the integer form in which a float is hashed.

    Quantising before hashing keeps fingerprints equal across platforms and languages that
    print or parse the same float differently (seed 002 §4.4).
    """
    return round(value * QUANTUM)


def normalise_text(text: str) -> str:
    """Return ``text`` in the form that is hashed and stored: NFC, LF newlines, trimmed."""
    text = unicodedata.normalize("NFC", text)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def content_hash(text: str) -> str:
    """Return the sha256 hex digest of the normalised ``text`` (UTF-8)."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()


def turn_id(conversation: str, parents: Iterable[str], role: str, digest: str) -> str:
    """Return the deterministic id of a turn: ``turn_`` + 32 hex of sha256.

    The parts are joined by U+001F, which no conversation name may contain (names refuse
    control characters) and ids, roles and hex digests never do, so the join is unambiguous.
    """
    joined = "\x1f".join(("palazzo-turn-v1", conversation, ",".join(sorted(parents)), role,
                          digest))
    return "turn_" + hashlib.sha256(joined.encode("utf-8")).hexdigest()[:32]


def is_hex(value: Any, length: int) -> bool:
    """Whether ``value`` is a string of exactly ``length`` lowercase hex digits."""
    return isinstance(value, str) and len(value) == length and set(value) <= _HEX


@dataclass(slots=True, frozen=True)
class Turn:
    """One message of a conversation, as the DAG and the provenance kernel see it."""

    id: str
    conversation: str
    parents: tuple[str, ...]
    role: str
    phase: str
    salience: float
    content_hash: str
    depth: int
    created_at: float
    drawer_id: str
    kind: str = DEFAULT_KIND  # one of TURN_KINDS; not part of the id

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form (the palace file's turn record; ``kind`` only when it is
        not "text", so files of plain turns stay as they were)."""
        out = {"id": self.id, "conversation": self.conversation, "parents": list(self.parents),
               "role": self.role, "phase": self.phase, "salience": self.salience,
               "content_hash": self.content_hash, "depth": self.depth,
               "created_at": self.created_at, "drawer_id": self.drawer_id}
        if self.kind != DEFAULT_KIND:
            out["kind"] = self.kind
        return out


@dataclass(slots=True, frozen=True)
class ConversationImport:
    """What :meth:`Conversations.import_messages` did: the turn id of every message (in
    message order; repeated messages repeat their id) and how many turns are new."""

    conversation: str
    turn_ids: tuple[str, ...]
    created: int

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form."""
        return {"conversation": self.conversation, "turn_ids": list(self.turn_ids),
                "messages": len(self.turn_ids), "created": self.created,
                "leaf": self.turn_ids[-1] if self.turn_ids else None}


@dataclass(slots=True)
class _Message:
    """A message checked and normalised, not yet placed in the DAG."""

    role: str
    text: str
    phase: str
    salience: float
    created_at: float | None
    parents: tuple[int | str, ...] | None  # None: the default parent
    kind: str = DEFAULT_KIND


class Conversations:
    """Every conversation turn of one palace and the reply/branch/merge edges between them.

    ``turns`` keeps insertion order (parents always before their children), which is also the
    order of the palace file; ``children`` maps a turn id to its child ids, sorted.
    """

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self.turns: dict[str, Turn] = {}
        self.children: dict[str, list[str]] = {}
        self.by_conversation: dict[str, list[str]] = {}
        # drawer id -> (turn id, its place in its conversation), and turn id -> that place:
        # made on the first lookup, dropped when a turn is added (see :meth:`turn_of_drawer`).
        self._placed: tuple[dict[str, tuple[str, int]], dict[str, int]] | None = None

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.turns)

    def get(self, tid: str) -> Turn:
        """Return the turn ``tid`` or raise NotFound."""
        try:
            return self.turns[tid]
        except (KeyError, TypeError):
            raise NotFound(f"no conversation turn with id {quote(tid)}") from None

    def names(self) -> list[str]:
        """Return the conversation names, sorted."""
        return sorted(self.by_conversation)

    def of(self, conversation: str) -> list[Turn]:
        """Return the turns of ``conversation`` in the order they were added (NotFound if it
        has none)."""
        try:
            ids = self.by_conversation[conversation]
        except KeyError:
            raise NotFound(f"no conversation named {conversation!r}") from None
        return [self.turns[t] for t in ids]

    def parents_of(self, tid: str) -> tuple[str, ...]:
        """Return the sorted parent ids of turn ``tid``."""
        return self.turns[tid].parents

    def children_of(self, tid: str) -> list[str]:
        """Return the sorted child ids of turn ``tid`` (a new list)."""
        return list(self.children.get(tid, ()))

    def siblings_of(self, tid: str) -> list[str]:
        """Return the sorted ids of the other children of ``tid``'s parents. O(siblings)."""
        out: set[str] = set()
        for p in self.turns[tid].parents:
            out.update(self.children.get(p, ()))
        out.discard(tid)
        return sorted(out)

    def edge_type(self, parent: str, child: str) -> str:
        """Return "merge", "branch" or "reply" for the link parent -> child (module rule)."""
        if len(self.turns[child].parents) > 1:
            return "merge"
        if len(self.children.get(parent, ())) > 1:
            return "branch"
        return "reply"

    def edges_among(self, ids: Iterable[str]) -> list[tuple[str, str, str]]:
        """Return (parent, child, type) for every link with both ends in ``ids``, sorted by
        (parent, child). Cost: O(sum of parents of ``ids``)."""
        chosen = set(ids)
        out = [(p, c, self.edge_type(p, c))
               for c in chosen for p in self.turns[c].parents if p in chosen]
        out.sort()
        return out

    def _places(self) -> tuple[dict[str, tuple[str, int]], dict[str, int]]:
        """Return ({drawer id: (turn id, place)}, {turn id: place}), the place being the
        turn's index in its conversation's order added; made once, then kept until a turn is
        added. A drawer that holds the text of several turns (the same words said twice in
        one conversation) names the first. Cost: O(turns) the first time, O(1) after."""
        if self._placed is None:
            by_drawer: dict[str, tuple[str, int]] = {}
            place: dict[str, int] = {}
            for ids in self.by_conversation.values():
                for i, tid in enumerate(ids):
                    place[tid] = i
                    by_drawer.setdefault(self.turns[tid].drawer_id, (tid, i))
            self._placed = (by_drawer, place)
        return self._placed

    def turn_of_drawer(self, drawer_id: str) -> tuple[Turn, int] | None:
        """Return (the turn whose text drawer ``drawer_id`` holds, its index in its
        conversation), or None when no turn's drawer has that id. An edited drawer is found
        by its old id (the turn keeps the id its text had): the caller tries the drawer's
        aliases too. Cost: O(1) after one O(turns) pass per change of the turns."""
        found = self._places()[0].get(drawer_id)
        return None if found is None else (self.turns[found[0]], found[1])

    def place_of(self, tid: str) -> int:
        """Return turn ``tid``'s index in its conversation (the order added). O(1) after
        one O(turns) pass per change of the turns."""
        return self._places()[1][tid]

    def thread(self, tid: str, before: int, after: int) -> tuple[list[Turn], bool, bool]:
        """Return (turns, more before, more after): up to ``before`` turns that ``tid``
        follows (its parent, that turn's parent, …), the turn itself and up to ``after``
        turns that follow it, in the order they were said; each flag says whether the
        thread goes on past the turns returned.

        The thread is one line of the DAG, as a person reads a chat: going back it takes the
        parent added last (a merge has several), going on the child said last (a
        regenerated or edited answer's newest version, which is the one a chat program
        shows; ties go to the one added last). Cost: O(before + after) steps, each
        O(parents or children), after :meth:`place_of`'s pass.
        """
        turn = self.get(tid)
        back: list[Turn] = []
        at = turn
        while at.parents and len(back) < before:
            at = self.turns[max(at.parents, key=self.place_of)]
            back.append(at)
        more_before = bool(at.parents)
        on: list[Turn] = []
        at = turn
        while self.children.get(at.id) and len(on) < after:
            kids = [self.turns[c] for c in self.children[at.id]]
            at = max(kids, key=lambda t: (t.created_at, self.place_of(t.id)))
            on.append(at)
        more_after = bool(self.children.get(at.id))
        return [*reversed(back), turn, *on], more_before, more_after

    def summary(self, conversation: str) -> dict[str, Any]:
        """Return counts of one conversation: turns, roots, leaves, merges, deepest depth."""
        turns = self.of(conversation)
        return {
            "conversation": conversation,
            "turns": len(turns),
            "roots": sum(1 for t in turns if not t.parents),
            "leaves": sum(1 for t in turns if not self.children.get(t.id)),
            "merges": sum(1 for t in turns if len(t.parents) > 1),
            "max_depth": max(t.depth for t in turns),
            "first_at": min(t.created_at for t in turns),
            "last_at": max(t.created_at for t in turns),
        }

    # -- writing ----------------------------------------------------------------------------
    def add_turn(
        self,
        conversation: str,
        role: str,
        content: Any,
        parents: Sequence[str] = (),
        phase: str = DEFAULT_PHASE,
        salience: float = DEFAULT_SALIENCE,
        created_at: float | str | None = None,
    ) -> tuple[Turn, bool]:
        """Add one turn after ``parents`` (none: a new root); return (turn, created now).

        Everything is checked before anything changes; an existing turn (same conversation,
        parents, role and text) is returned unchanged. Cost: one drawer insertion.
        """
        conv = conversation_name(conversation)
        msg = read_message({"role": role, "content": content, "phase": phase,
                            "salience": salience, "timestamp": created_at}, "turn",
                           DEFAULT_PHASE, DEFAULT_SALIENCE, with_parents=False)
        if isinstance(parents, str) or not isinstance(parents, Sequence) \
                or not all(isinstance(p, str) for p in parents):
            raise ValidationError("parents must be a list of turn ids")
        msg.parents = tuple(parents)
        (turn,), texts = self._plan(conv, [msg], after=None, label="turn")
        created = turn.id not in self.turns
        if created:
            self._apply(turn, texts[0])
        return self.turns[turn.id], created

    def import_messages(
        self,
        conversation: str,
        messages: Any,
        after: str | None = None,
        phase: str | None = None,
        salience: float | None = None,
    ) -> ConversationImport:
        """Add a whole conversation: a list of ``{role, content}`` messages (or an object
        with such a ``messages`` list, or its JSON text). Returns what was added.

        Optional per message: ``phase``, ``salience``, ``timestamp`` (epoch seconds or
        ISO 8601), ``kind`` (one of :data:`TURN_KINDS`, default "text") and ``parents``
        (indices of earlier messages of this list, or ids of turns already in the
        conversation; ``[]`` makes a root). Without ``parents`` a message
        follows the previous one, and the first follows ``after`` (or is a root). ``phase`` and
        ``salience`` here are the defaults for messages that do not say. Other fields of a
        message are ignored. Every message is checked before anything is added, so a bad one
        changes nothing. Cost: O(messages) drawer insertions.
        """
        conv = conversation_name(conversation)
        default_phase = DEFAULT_PHASE if phase is None else _phase(phase, "phase")
        default_salience = DEFAULT_SALIENCE if salience is None else _salience(salience,
                                                                               "salience")
        items = _message_list(messages)
        msgs = [read_message(m, f"messages[{i}]", default_phase, default_salience)
                for i, m in enumerate(items)]
        if after is not None:
            self._existing_parent(after, conv, "after")
        turns, texts = self._plan(conv, msgs, after, label="messages")
        created = 0
        for turn, text in zip(turns, texts, strict=True):
            if turn.id not in self.turns:
                self._apply(turn, text)
                created += 1
        return ConversationImport(conv, tuple(t.id for t in turns), created)

    def _existing_parent(self, tid: Any, conv: str, where: str) -> Turn:
        if not isinstance(tid, str):
            raise ValidationError(f"{where} must be a turn id (a string)")
        turn = self.get(tid)
        if turn.conversation != conv:
            raise ValidationError(f"{where}: turn {tid} belongs to conversation "
                                  f"{turn.conversation!r}, not {conv!r}")
        return turn

    def _plan(self, conv: str, msgs: list[_Message], after: str | None, label: str
              ) -> tuple[list[Turn], list[str]]:
        """Return the turns ``msgs`` would be (ids, parents, depths, drawer ids) and their
        texts, without changing anything; raise ValidationError/NotFound on a bad parent
        (``label`` names the input in messages)."""
        planned: list[Turn] = []
        pending: dict[str, Turn] = {}
        now: float | None = None
        for i, msg in enumerate(msgs):
            where = f"{label}[{i}]" if label == "messages" else label
            if msg.parents is None:
                refs: tuple[int | str, ...] = (i - 1,) if i else ((after,) if after else ())
            else:
                refs = msg.parents
            if len(refs) > MAX_PARENTS:
                raise ValidationError(f"{where}.parents: at most {MAX_PARENTS} parents")
            ids: list[str] = []
            depths: list[int] = []
            for j, ref in enumerate(refs):
                at = f"{where}.parents[{j}]"
                if isinstance(ref, int) and not isinstance(ref, bool):
                    if not 0 <= ref < i:
                        raise ValidationError(f"{at}: {ref} is not the index of an earlier "
                                              "message")
                    parent = planned[ref]
                elif isinstance(ref, str):
                    parent = pending.get(ref) or self._existing_parent(ref, conv, at)
                else:
                    raise ValidationError(f"{at} must be a turn id or a message index")
                ids.append(parent.id)
                depths.append(parent.depth)
            if len(set(ids)) != len(ids):
                raise ValidationError(f"{where}.parents names the same turn twice")
            digest = hashlib.sha256(msg.text.encode("utf-8")).hexdigest()
            tid = turn_id(conv, ids, msg.role, digest)
            if msg.created_at is None and now is None:
                now = float(self.palace.clock())
            turn = Turn(id=tid, conversation=conv, parents=tuple(sorted(ids)), role=msg.role,
                        phase=msg.phase, salience=msg.salience, content_hash=digest,
                        depth=1 + max(depths) if depths else 0,
                        created_at=now if msg.created_at is None else msg.created_at,
                        drawer_id=drawer_id(msg.text, WING, conv), kind=msg.kind)
            turn = self.turns.get(tid) or pending.get(tid) or turn
            pending[tid] = turn
            planned.append(turn)
        return planned, [m.text for m in msgs]

    def _apply(self, turn: Turn, text: str) -> None:
        """Store ``turn`` (already checked) and its drawer."""
        # Facts only from what the user said: in an assistant's turn "I" is the assistant.
        did, _ = self.palace.add_drawer(WING, turn.conversation, text, source="conversation",
                                        importance=turn.salience, created_at=turn.created_at,
                                        facts=turn.role == "user")
        assert did == turn.drawer_id, "drawer ids are computed the same way"
        self._insert(turn)

    def _insert(self, turn: Turn) -> None:
        self._placed = None
        self.turns[turn.id] = turn
        for p in turn.parents:
            bisect.insort(self.children.setdefault(p, []), turn.id)
        self.by_conversation.setdefault(turn.conversation, []).append(turn.id)

    # -- palace file ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able conversations section of the palace file: every turn in the
        order added (parents first). Edges are not written: they follow from the parents."""
        return {"turns": [t.to_dict() for t in self.turns.values()]}

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str) -> Conversations:
        """Return the conversations read from ``value``; raise ImportRejected naming the bad
        place. Each turn's id and depth are recomputed from its fields and must match, and
        its parents must come earlier in the same conversation. Cost: O(turns)."""
        out = cls(palace)
        if not isinstance(value, dict):
            raise ImportRejected(f"{where} must be an object")
        extra = sorted(set(value) - {"turns"})
        if extra:
            raise ImportRejected(f"{where} has unknown field(s): {', '.join(extra)}")
        turns = value.get("turns", [])
        if not isinstance(turns, list):
            raise ImportRejected(f"{where}.turns must be a list")
        for i, d in enumerate(turns):
            out._insert(out._read_turn(d, f"{where}.turns[{i}]"))
        return out

    @classmethod
    def restore(cls, palace: Any, value: dict[str, Any]) -> Conversations:
        """Return the conversations of a section this palazzo wrote itself (a columnar
        snapshot, checked whole by its checksum): the turns are taken as they are, without
        :meth:`from_json`'s checks, which cost most of a big palace's opening. O(turns)."""
        out = cls(palace)
        for d in value["turns"]:
            out._insert(Turn(d["id"], d["conversation"], tuple(d["parents"]), d["role"],
                             d["phase"], d["salience"], d["content_hash"], d["depth"],
                             d["created_at"], d["drawer_id"], d.get("kind", DEFAULT_KIND)))
        return out

    def _read_turn(self, d: Any, at: str) -> Turn:
        if not isinstance(d, dict):
            raise ImportRejected(f"{at} must be an object")
        missing = [k for k in TURN_FIELDS if k not in d]
        if missing:
            raise ImportRejected(f"{at}.{missing[0]} is missing")
        extra = sorted(set(d) - set(TURN_FIELDS) - {"kind"})
        if extra:
            raise ImportRejected(f"{at} has unknown field(s): {', '.join(extra)}")
        for key in ("id", "conversation", "role", "phase", "content_hash", "drawer_id"):
            if not isinstance(d[key], str):
                raise ImportRejected(f"{at}.{key} must be a string")
        try:
            conv = conversation_name(d["conversation"])
            role = _choice(d["role"], ROLES, "role")
            phase = _phase(d["phase"], "phase")
            salience = _salience(d["salience"], "salience")
            created_at = _number(d["created_at"], "created_at")
            kind = _choice(d.get("kind", DEFAULT_KIND), TURN_KINDS, "kind")
        except PalazzoError as err:
            raise ImportRejected(f"{at}: {err}") from None
        if conv != d["conversation"]:
            raise ImportRejected(f"{at}.conversation is not a normalised conversation name")
        if not is_hex(d["content_hash"], 64):
            raise ImportRejected(f"{at}.content_hash must be 64 lowercase hex digits")
        parents = d["parents"]
        if not isinstance(parents, list) or not all(isinstance(p, str) for p in parents):
            raise ImportRejected(f"{at}.parents must be a list of turn ids")
        if parents != sorted(set(parents)) or len(parents) > MAX_PARENTS:
            raise ImportRejected(f"{at}.parents must be sorted, distinct and at most "
                                 f"{MAX_PARENTS}")
        for p in parents:
            parent = self.turns.get(p)
            if parent is None or parent.conversation != conv:
                raise ImportRejected(f"{at}.parents: no earlier turn {quote(p)} in conversation "
                                     f"{conv!r}")
        depth = 1 + max(self.turns[p].depth for p in parents) if parents else 0
        if isinstance(d["depth"], bool) or d["depth"] != depth:
            raise ImportRejected(f"{at}.depth must be {depth} (one more than its deepest "
                                 "parent)")
        tid = turn_id(conv, parents, role, d["content_hash"])
        if d["id"] != tid:
            raise ImportRejected(f"{at}.id does not match its conversation, parents, role and "
                                 f"content hash (expected {tid})")
        if tid in self.turns:
            raise ImportRejected(f"{at}.id {tid} appears twice")
        return Turn(tid, conv, tuple(parents), role, phase, salience, d["content_hash"], depth,
                    created_at, d["drawer_id"], kind)


# -- checking input ----------------------------------------------------------------------------

def conversation_name(value: Any) -> str:
    """Return the normalised conversation name (it is also a room name) or raise."""
    if not isinstance(value, str):
        raise ValidationError("conversation must be a string")
    return clean_name(value, "conversation")


def _choice(value: Any, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed or not isinstance(value, str):
        raise ValidationError(f"{what} must be one of {', '.join(allowed)}, got {quote(value)}")
    return value


def _phase(value: Any, where: str) -> str:
    return _choice(value, PHASES, where)


def _number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{where} must be a finite number")
    try:
        number = float(value)
    except OverflowError:  # an integer of 400 digits is beyond a float
        raise ValidationError(f"{where} must be a finite number, not an integer of "
                              f"{value.bit_length()} bits") from None
    if not math.isfinite(number):
        raise ValidationError(f"{where} must be a finite number")
    return number


def _salience(value: Any, where: str) -> float:
    value = _number(value, where)
    if not 0.0 <= value <= 1.0:
        raise ValidationError(f"{where} must be between 0 and 1, got {value}")
    return quantise(value) / QUANTUM


def _timestamp(value: Any, where: str) -> float:
    """Return epoch seconds from a number or an ISO 8601 string (naive means UTC)."""
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(f"{where} is not an ISO 8601 time: {quote(value)}") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return moment.timestamp()
    return _number(value, where)


def _text(content: Any, where: str) -> str:
    """Return the normalised text of a message: a string, or a list of text parts (strings or
    ``{"type": "text", "text": …}`` blocks, joined by newlines)."""
    if isinstance(content, list):
        parts = []
        for j, part in enumerate(content):
            if isinstance(part, dict) and part.get("type", "text") == "text" \
                    and isinstance(part.get("text"), str):
                part = part["text"]
            if not isinstance(part, str):
                raise ValidationError(f"{where}.content[{j}] is not text (only text parts are "
                                      "kept)")
            parts.append(part)
        content = "\n".join(parts)
    if not isinstance(content, str):
        raise ValidationError(f"{where}.content must be a string or a list of text parts")
    text = normalise_text(content)
    if not text:
        raise ValidationError(f"{where}.content must not be empty")
    if len(text) > MAX_TURN_CHARS:
        raise ValidationError(f"{where}.content is longer than {MAX_TURN_CHARS} characters")
    return text


def read_message(m: Any, where: str, phase: str, salience: float,
                 with_parents: bool = True) -> _Message:
    """Return message ``m`` checked and normalised; ``phase``/``salience`` are the defaults.
    Raises ValidationError naming ``where``."""
    if not isinstance(m, dict):
        raise ValidationError(f"{where} must be an object with role and content")
    if "role" not in m or "content" not in m:
        raise ValidationError(f"{where} needs both role and content")
    role = _choice(m["role"], ROLES, f"{where}.role")
    text = _text(m["content"], where)
    if m.get("phase") is not None:
        phase = _phase(m["phase"], f"{where}.phase")
    if m.get("salience") is not None:
        salience = _salience(m["salience"], f"{where}.salience")
    created_at = None
    if m.get("timestamp") is not None:
        created_at = _timestamp(m["timestamp"], f"{where}.timestamp")
    parents = None
    if with_parents and m.get("parents") is not None:
        refs = m["parents"]
        if not isinstance(refs, list):
            raise ValidationError(f"{where}.parents must be a list")
        parents = tuple(refs)
    kind = DEFAULT_KIND
    if m.get("kind") is not None:
        kind = _choice(m["kind"], TURN_KINDS, f"{where}.kind")
    return _Message(role, text, phase, salience, created_at, parents, kind)


def _message_list(messages: Any) -> list[Any]:
    if isinstance(messages, str | bytes):
        messages = jsontext.loads(messages, what="the conversation")
        # Held to what the registry holds arguments to (a lone surrogate, NaN, an integer
        # beyond a double), since this text was one string when the registry checked it.
        plain(messages, "the conversation")
    if isinstance(messages, dict) and "messages" in messages:
        messages = messages["messages"]
    if not isinstance(messages, list):
        raise ValidationError("messages must be a list of {role, content} objects (or an "
                              "object with such a 'messages' list)")
    if not 1 <= len(messages) <= MAX_MESSAGES:
        raise ValidationError(f"a conversation import takes 1 to {MAX_MESSAGES} messages")
    return messages
