"""Persistence that loses nothing: a snapshot plus an append-only journal of operations.

A palace's space holds generation-numbered files::

    snapshot-00000007.pz   the palace in the columnar snapshot format
                           (:mod:`palazzo.formats.snapshot`; before it, the palace JSON in
                           one checksummed record, still read and rewritten columnar at
                           the next compaction), with the journal sequence number it holds
                           up to
    journal-00000007.log   mutating operations run since that snapshot
                           (:mod:`palazzo.persist.journal`); sequence numbers go on across
                           generations
    snapshot-00000006.pz   the previous generation, kept until the next compaction: what
    journal-00000006.log   boot falls back on when the newest snapshot is damaged
    journal.tip            the last acknowledged append (generation, sequence number, length)
    keys.json              the provenance signing keys (local only, never exported)
    embedder.json          a fitted embedder's parameters (tfidf), so its vectors survive
    rejected-00000007-000012.log   records set aside by :meth:`PalaceStore.repair` (verified,
                           but they no longer apply), in the journal's format
    damaged-journal-00000007.log   a damaged file, moved aside (never deleted) by repair

**Crashes lose nothing acknowledged.** A mutating operation is acknowledged (its result
returned) only after its record was appended and synced; if that write fails the store
reloads from disk, so memory never holds what disk lost. A crash can leave only a torn tail
(the last record incomplete) or a snapshot whose compaction did not finish (newer than the
tip); boot drops both quietly, and a writer cuts them off.

**Damage is never silent** (:mod:`palazzo.persist.recovery`). Anything else that is wrong
— a record that fails its checksum with data after it, records missing, repeated or out of
order, a journal shorter than the tip says, a damaged snapshot, tip or ``keys.json`` — opens
the palace read-only with everything that still verifies: boot reads every record that
verifies (past damaged bytes), replays them in sequence order, falls back to the previous
generation when the newest snapshot is damaged, and says in ``status.damage`` and
``status.problem`` what is damaged and what was read. No write, compaction or cleanup touches
the files until :meth:`PalaceStore.repair` (``palazzo repair --yes``): it sets aside the
records that no longer apply (``rejected-…``, with their text in its report), moves every
damaged file aside (``damaged-…``), and writes what was recovered as a new generation.

**Replay is exact.** A record keeps what the operation did that its arguments and clock do not
determine: the embedder it ran with and every vector it made
(:mod:`palazzo.embed.recorded`). Replay runs each record with exactly those vectors, so links,
paths and deposits come out as they did, whichever embedder the host attaches afterwards (its
own fingerprint then decides, as for a snapshot, which vectors stay), and nothing is embedded
again. Swarms are seeded; signing keys are loaded from ``keys.json`` after replay. A record
that fails on replay is never deleted: boot replays the records after it, opens read-only and
names it (``status.set_aside``, ``status.stopped_at``); repair sets it aside.

**Operations are atomic.** A mutating operation whose arguments fail their schema changes
nothing; one that fails while it runs may have changed memory part-way, so the store then
reloads the palace from disk (a boot) before it re-raises: memory equals what was
acknowledged. Operations registered ``atomic`` (adding, editing and deleting drawers, wings
and rooms; bulk replace) check everything before they change anything, so their refusals
(a wrong drawer id) cost no reload. Only a successful operation is journaled.

**Readers see what was acknowledged.** A read-only boot that races a compaction (it read
snapshot N, then the writer wrote N+1 and deleted N-1's files) notices that the files changed
under it and reads again.

**Many processes write one palace** (:class:`palazzo.persist.directory.PalaceDirectory`): a
store is the writer only while its process holds the lock for one write, and before the write,
or before any read, :meth:`PalaceStore.follow` replays what the others appended since (the
journal's tail; across another's compaction, the rest of the old journal and then the new one,
since snapshot N+1 holds exactly journal N's records) or boots when that cannot explain the
files (an import, damage). Every store keeps its latest writes and follows in ``changes`` for a
change feed.

Compaction writes snapshot N+1 whole, reads it back and verifies it, writes an empty journal
N+1 and the tip, then deletes generation N-1 (generation N stays, for a fallback). A crash
between any two steps leaves a bootable state. No rename is needed, so OPFS and IndexedDB
spaces can do the same with plain writes. An import, whose durable record is a snapshot (it
carries a whole palace), takes a sequence number and first appends a ``saved`` marker to the
journal before it, so a fallback past its snapshot knows what it lacks. A ``reindex`` step is
an ordinary record carrying the vectors it made, so embedding a big palace in steps is
durable step by step: a reload or a crash loses no step that returned.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import json
import re
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from palazzo.embed.recorded import RecordedEmbedder, RecordingEmbedder
from palazzo.errors import (
    NotFound,
    NotLoaded,
    PalaceDamaged,
    PalazzoError,
    ReadOnly,
    SnapshotDamaged,
    StorageError,
    ValidationError,
)
from palazzo.formats import snapshot
from palazzo.formats.palacefile import read_palace
from palazzo.formats.salvage import salvage
from palazzo.ops import REGISTRY, Operation, Registry, upkeep
from palazzo.palace import Palace
from palazzo.persist import journal, recovery
from palazzo.persist.journal import Record, Tip
from palazzo.persist.recovery import Entry, Finding
from palazzo.persist.storage import Space

SNAPSHOT = re.compile(r"snapshot-(\d{8})\.pz")
JOURNAL = re.compile(r"journal-(\d{8})\.log")
KEYS = "keys.json"
EMBEDDER_STATE = "embedder.json"
TIP = "journal.tip"
BOOT_TRIES = 20  # a read-only boot that keeps racing compactions gives up after this many
COMPACT_RECORDS = 500
COMPACT_BYTES = 32 << 20
# Operations whose durable record is a new snapshot rather than a journal record: an import
# carries a whole palace.
SNAPSHOT_OPS = frozenset({"import"})
SAVED = "saved"  # the journal's marker of a snapshot operation (what a fallback lacks)
CHANGES = 4096  # writes a store remembers for a change feed (older ones are dropped)
ID_KEYS = ("id", "drawer_id", "ids", "drawer_ids", "turn_id", "fact_id", "entity_id")


def change(seq: int, op: str, result: Any) -> dict[str, Any]:
    """Return a change feed's entry for write ``seq`` (operation ``op``): the ids its result
    names at its top level (``drawer_id``, ``ids`` …; none for operations that name none).
    Cost: a look at the result's top-level keys."""
    ids: list[str] = []
    if isinstance(result, dict):
        for key in ID_KEYS:
            value = result.get(key)
            if isinstance(value, str):
                ids.append(value)
            elif isinstance(value, list):
                ids += [v for v in value if isinstance(v, str)]
    return {"seq": seq, "op": op, "ids": ids}


def snapshot_name(gen: int) -> str:
    return f"snapshot-{gen:08d}.pz"


def journal_name(gen: int) -> str:
    return f"journal-{gen:08d}.log"


def rejected_name(gen: int, seq: int) -> str:
    return f"rejected-{gen:08d}-{seq:06d}.log"


def generation_of(name: str) -> int | None:
    """Return the generation a snapshot or journal file belongs to, or None for other files."""
    m = SNAPSHOT.fullmatch(name) or JOURNAL.fullmatch(name)
    return int(m.group(1)) if m else None


@dataclass(slots=True)
class Status:
    """What boot found and what has been written since.

    ``damage`` lists what is wrong with the files (each ``{"file", "what"}``), ``set_aside``
    the records that verified but did not apply (each :func:`recovery.describe`), ``missing``
    the sequence ranges no file holds any more; any of them makes the palace read-only until
    it is repaired. ``dropped_bytes`` is a torn tail (a crash's, never acknowledged)."""

    generation: int = 0
    snapshot: bool = False
    replayed: int = 0
    dropped_bytes: int = 0
    problem: str | None = None
    skipped_snapshots: list[str] = field(default_factory=list)
    journal_records: int = 0
    journal_bytes: int = 0
    last_saved: float | None = None
    read_only: bool = False
    stopped_at: int | None = None  # seq of the first journal record that failed on replay
    damage: list[dict[str, str]] = field(default_factory=list)
    set_aside: list[dict[str, Any]] = field(default_factory=list)
    missing: list[list[int]] = field(default_factory=list)
    fallback: int | None = None  # the older generation boot fell back on
    signing: bool = True
    salvaged: dict[str, Any] | None = None  # what a snapshot rebuilt around damage lost

    @property
    def damaged(self) -> bool:
        """Return whether anything in the files needs a repair."""
        return bool(self.damage or self.set_aside or self.missing)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able status (for the status line and the CLI)."""
        return {"generation": self.generation, "snapshot": self.snapshot,
                "replayed": self.replayed, "dropped_bytes": self.dropped_bytes,
                "problem": self.problem, "skipped_snapshots": list(self.skipped_snapshots),
                "journal_records": self.journal_records, "journal_bytes": self.journal_bytes,
                "last_saved": self.last_saved, "read_only": self.read_only,
                "stopped_at": self.stopped_at, "damaged": self.damaged,
                "damage": list(self.damage), "set_aside": list(self.set_aside),
                "missing": [list(m) for m in self.missing], "fallback": self.fallback,
                "signing": self.signing, "salvaged": self.salvaged}


class _FrozenClock:
    """Context manager: the palace's clock returns ``t`` while an operation runs."""

    def __init__(self, palace: Palace, t: float) -> None:
        self.palace, self.t = palace, t

    def __enter__(self) -> None:
        self.saved = self.palace.clock
        self.palace.clock = lambda: self.t

    def __exit__(self, *exc: object) -> None:
        self.palace.clock = self.saved


@dataclass(slots=True)
class _Base:
    """The snapshot boot starts from: its palace, generation and the sequence number it
    holds up to (None: written before snapshots kept it)."""

    palace: Palace
    generation: int
    seq: int | None
    keys: list[str] = field(default_factory=list)  # ids of the signing keys it knew of


class PalaceStore:
    """One open palace bound to its space: boot, journaled calls, compaction, repair.

    ``read_only`` says this process may not write (another holds the lock); a store whose boot
    found damage is read-only too, but may :meth:`repair` (it is the writer).
    """

    def __init__(self, space: Space, make_palace: Callable[..., Palace],
                 registry: Registry = REGISTRY, clock: Callable[[], float] = time.time,
                 read_only: bool = False, compact_records: int = COMPACT_RECORDS,
                 compact_bytes: int = COMPACT_BYTES,
                 locked_elsewhere: Callable[[], bool] | None = None) -> None:
        self.space = space
        # Whether another writer holds the palace's lock now (None: no way to tell). A
        # reader that boots while it does may meet a snapshot that a compaction aside is
        # writing and has not adopted yet: that is no crash's, and not said as one.
        self.locked_elsewhere = locked_elsewhere
        self.make_palace = make_palace
        self.registry = registry
        self.clock = clock
        self.compact_records = compact_records
        self.compact_bytes = compact_bytes
        # False: a write never compacts; the host compacts when :attr:`compact_due` (the
        # palace server does it in a forked child, off the request path).
        self.compact_inline = True
        # The generation a compaction aside is writing (PalaceDirectory.compact_aside), while
        # it does: no other compaction may start then.
        self.aside: int | None = None
        self.boots = 0  # how many times this store booted (a compaction aside checks it)
        self.writer = not read_only
        self.status = Status(read_only=read_only)
        self.seq = 0
        self._keys: Any = None
        self._keys_raw: bytes | None = None  # keys.json as _follow_keys last read it
        self._host: Any = None
        self._snapshot_bytes = 0  # size of the snapshot the journal follows
        self._failed: list[tuple[Record, str]] = []  # records set aside (verified, no apply)
        self._aside: set[str] = set()  # damaged files that repair moves aside
        self._words_only = False  # within words_first: drawers are added without vectors
        self._blocked_tip: bytes | None = None  # the tip a blocked store last saw (follow)
        # The latest writes this store made or followed, for a change feed (palazzo serve):
        # {"seq", "op", "ids"} each; a boot that follows others adds one "reloaded".
        self.changes: collections.deque[dict[str, Any]] = collections.deque(maxlen=CHANGES)
        fresh = not space.names()
        self.boot()
        if fresh and self.writer:
            self.compact()  # a new palace's creation time and settings are on disk at once

    @property
    def compact_due(self) -> bool:
        """Whether the journal has grown enough to be compacted: :attr:`compact_records`
        records, or as many bytes as the snapshot (at least :attr:`compact_bytes`)."""
        st = self.status
        return st.journal_records >= self.compact_records or \
            st.journal_bytes >= max(self.compact_bytes, self._snapshot_bytes)

    @property
    def blocked(self) -> bool:
        """Whether writes fail here whoever holds the lock: damaged files (until a repair),
        or a palace this palazzo refuses to write."""
        return self.status.damaged or self._refused is not None

    # -- boot ---------------------------------------------------------------------------------
    def _make_bare(self, **kw: Any) -> Palace:
        """Return ``make_palace(**kw)`` with its embedder taken off (kept as the host's): a
        snapshot then keeps its vectors under their own fingerprint and records replay with
        the vectors they recorded; :meth:`_attach_host` puts the host's embedder back."""
        palace = self.make_palace(**kw)
        self._host = palace.embedder
        palace.embedder = None
        palace.drawers.fingerprint = None
        palace.drawers.embedder_name = None
        return palace

    def _load_snapshot(self, gen: int) -> _Base | None:
        """Return the palace of snapshot ``gen``, or None when it is missing or does not read
        back whole (the reason is in ``self._why``; a whole one this palazzo refuses sets
        ``self._refused``)."""
        # A buffer of our own: the snapshot's arrays become the palace's without a copy.
        data = self.space.load(snapshot_name(gen))
        if data is None:
            self._why = "missing"
            return None
        self._snapshot_bytes = len(data)
        try:
            if snapshot.is_snapshot(data):
                opened = snapshot.open_snapshot(data)
                seq = opened.store.get("seq")
                keys = opened.store.get("keys")
                return _Base(snapshot.palace_of(opened, self._make_bare), gen,
                             seq if isinstance(seq, int) else None,
                             keys if isinstance(keys, list) else [])
            # A palace JSON snapshot (before the columnar format): read, and written in the
            # columnar format at the next compaction.
            found = journal.scan(bytes(data))
            if len(found.records) != 1 or found.problem or found.records[0].op != "snapshot":
                self._why = found.problem or "not a palace snapshot"
                return None
            return _Base(read_palace(found.records[0].args, self._make_bare), gen, None)
        except SnapshotDamaged as err:
            self._why = str(err)
            if err.partial is not None and self._partial is None:
                self._partial = (gen, err.partial)
            return None
        except PalazzoError as err:
            # A whole, checksummed snapshot this palazzo refuses (written by a palazzo whose
            # checks were laxer, or a newer one) is not damage: falling back to an older or an
            # empty palace and then compacting would destroy it. Open read-only instead.
            self._refused = f"{snapshot_name(gen)} is whole but cannot be read here: {err}"
            return None

    def boot(self) -> Status:
        """Load the newest whole snapshot and replay the journals after it; return the status.

        Never raises for damaged files: what verifies is read, what does not is named in the
        status (``damage``, ``set_aside``, ``missing``, ``problem``) and the palace opens
        read-only with every file kept as it is; only a crash's torn tail (or an unfinished
        compaction) is dropped quietly, and only a writer cuts it off. A read-only boot that
        raced a compaction reads again. Raises StorageError only when the space itself cannot
        be read. Cost: reading the snapshot plus replaying the journal (decoding recorded
        vectors, never embedding); with damage, reading past it and the fallback's files.
        """
        self.boots += 1
        for _ in range(BOOT_TRIES):
            before = self._journal_names()
            status = self._boot_once()
            if self.writer or self._journal_names() == before:
                return status
        return status  # still racing: what was read is a state that was acknowledged once

    def _journal_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.space.names() if generation_of(n) is not None)

    def _read_tip(self, names: set[str], findings: list[Finding]) -> Tip | None:
        if TIP not in names:
            return None
        raw = self.space.read(TIP) or b""
        tip = Tip.decode(raw)
        if tip is None and raw:  # an empty tip is a crash while it was first made
            findings.append(Finding(TIP, "damaged: whether the journal is whole cannot be "
                                    "checked"))
            self._aside.add(TIP)
        return tip

    def _base(self, snaps: list[int], jgens: set[int], tip: Tip | None,
              findings: list[Finding]) -> _Base | None:
        """Return the newest snapshot that reads back whole (None: none does, or one this
        palazzo refuses, ``self._refused``). Damaged ones are findings; one newer than the
        tip whose generation has no journal is a compaction a crash cut short, dropped."""
        for g in snaps:
            try:
                base = self._load_snapshot(g)
            except NotLoaded:  # the host reads it now and boots again (the browser)
                findings.append(Finding(snapshot_name(g), "not read from storage yet"))
                self._partial = None  # no rebuild around damage before the fallback is read
                return None
            name = snapshot_name(g)
            if base is not None and g not in jgens and (tip is None or g > tip.generation) \
                    and self._runs_past(g - 1, base.seq):
                # Written aside while writes went on (PalaceDirectory.compact_aside) and
                # never adopted (no journal of its own): the journal before it, synced at
                # every append, holds more. (Not the tip: it is never synced, and may lag.)
                self._unfinished.append(name)
                continue
            if base is not None or self._refused is not None:
                return base
            if tip is not None and g > tip.generation and g not in jgens:
                self._unfinished.append(name)
                if self._partial is not None and self._partial[0] == g:
                    self._partial = None  # never acknowledged: nothing in it to rebuild
                continue
            findings.append(Finding(name, f"damaged: {self._why}"))
            self._aside.add(name)
            self.status.skipped_snapshots.append(name)
        return None

    def _runs_past(self, gen: int, seq: int | None) -> bool:
        """Return whether journal ``gen`` holds a whole record numbered after ``seq`` (False
        when there is no such journal, or ``seq`` is unknown). Cost: reading the journal."""
        if seq is None or gen < 1:
            return False
        try:
            data = self.space.read(journal_name(gen))
        except NotLoaded:
            return False
        return data is not None and any(r.seq > seq for r in journal.scan(data).records)

    def _boot_once(self) -> Status:
        st = self.status = Status(read_only=not self.writer)
        self._host = None
        self._refused = None
        self._failed, self._aside, self._unfinished = [], set(), []
        self._partial: tuple[int, snapshot.Opened] | None = None
        findings: list[Finding] = []
        names = set(self.space.names())
        snaps = sorted((g for n in names if (m := SNAPSHOT.fullmatch(n))
                        for g in [int(m.group(1))]), reverse=True)
        jgens = {int(m.group(1)) for n in names if (m := JOURNAL.fullmatch(n))}
        tip = self._read_tip(names, findings)
        base = self._base(snaps, jgens, tip, findings)
        if self._refused is not None:
            st.read_only = True
            st.problem = f"{self._refused}; the palace is read-only here so nothing overwrites it"
            self.palace = self._make_bare()
            self._attach_host(self.palace)
            self._keys = self.palace.provenance.keyring_to_json()
            return st
        if base is None:  # never compacted, or every snapshot is damaged: an empty palace
            base = _Base(self._make_bare(), 0, 0)
            self._snapshot_bytes = 0
        live = [g for g in snaps if snapshot_name(g) not in self._unfinished]
        newest = max([base.generation, *live, *jgens, tip.generation if tip else 0])
        base = self._salvaged(base, newest, jgens, findings)
        for g in sorted(jgens):
            if base.generation < g and g not in snaps:
                # Compaction writes a snapshot before its journal: a journal without its
                # snapshot means the snapshot was lost (the fallback replays around it).
                findings.append(Finding(snapshot_name(g), "missing (its journal is here)"))
        entries, lengths, torn = self._chain(base.generation, newest, jgens, findings)
        ordered = recovery.order(entries, base.seq, journal_name)
        findings += ordered.findings
        kept = ordered.kept
        if kept and kept[-1].record.op == SAVED and kept[-1].generation == newest:
            # An import's marker with no snapshot after it: the import's compaction did not
            # finish (a crash or a failed write), so the import was never acknowledged.
            pending = kept.pop()
            torn = journal.Span(pending.start, lengths[newest], "an import's marker with no "
                                "snapshot after it")
        last = max([base.seq or 0, *(e.record.seq for e in kept),
                    *(e.record.seq for e in ordered.conflicts)])
        self._failed += [(e.record, "a second, different record with its sequence number")
                         for e in ordered.conflicts]
        missing = [list(m) for m in ordered.missing]
        if tip is not None:
            gens = {*live, *jgens, *(int(m.group(1)) for n in st.skipped_snapshots
                                     if (m := SNAPSHOT.fullmatch(n)))}
            if tip.generation >= base.generation:
                short = recovery.check_tip(tip, lengths, gens, last, journal_name)
                if short and tip.generation in lengths:
                    self._aside.add(journal_name(tip.generation))  # kept, as it was found
                findings += short
            elif last < tip.seq:
                findings.append(Finding(snapshot_name(base.generation), f"holds records up "
                                        f"to {last}, but {tip.seq} were acknowledged"))
            if last < tip.seq:  # acknowledged records no file holds any more
                missing.append([last + 1, tip.seq])
        palace, applied = self._replay_all(base, kept)
        st.generation = newest
        st.snapshot = base.generation > 0
        st.fallback = base.generation if base.generation < newest and snaps else None
        st.replayed = len(applied)
        self.seq = last
        self.palace = palace
        self._attach_host(palace)
        self._load_keys(palace, base.keys, findings)
        self._keys = palace.provenance.keyring_to_json()
        st.missing = missing
        st.damage = [f.to_dict() for f in findings]
        st.set_aside = [recovery.describe(r, why) for r, why in
                        sorted(self._failed, key=lambda x: x[0].seq)]
        st.stopped_at = min((r.seq for r, _ in self._failed), default=None)
        st.journal_records = sum(e.generation == newest for e in applied)
        st.journal_bytes = torn.start if torn is not None else lengths.get(newest, 0)
        if torn is not None:
            st.dropped_bytes = torn.end - torn.start
        st.problem = self._problem(findings, torn)
        if st.damaged:
            st.read_only = True
        elif self.writer:
            # Only what a crash leaves: a torn tail, snapshots of an unfinished compaction.
            if torn is not None:
                self.space.truncate(journal_name(newest), torn.start)
            for name in self._unfinished:
                self.space.delete(name)
        if palace.text_index.retokenised and self.writer and not st.read_only:
            # The snapshot's word index was tokenised the old way and rebuilt on reading
            # (seconds at 20k drawers): save it now so later opens read it as it is. A save
            # that fails leaves the palace open as read; the next open rebuilds again.
            try:
                self.compact()
                palace.text_index.retokenised = False
            except (PalazzoError, OSError):
                pass
        return st

    def _salvaged(self, base: _Base, newest: int, jgens: set[int], findings: list[Finding]
                  ) -> _Base:
        """Return the base to replay from when the newest snapshot is damaged: the older
        whole one when its journals lead without a gap to the damaged one (exact), else the
        damaged one rebuilt around its damaged pages (:mod:`palazzo.formats.salvage`), which
        loses only what those pages held. Cost: a scan of the older chain; a salvage copies
        the snapshot's arrays once."""
        if self._partial is None or self._partial[0] <= base.generation:
            return base
        gen, partial = self._partial
        entries, _, _ = self._chain(base.generation, newest, jgens, [])
        ordered = recovery.order(entries, base.seq, journal_name)
        exact = base.generation > 0 and not ordered.missing and not any(
            e.record.op == SAVED and e.generation < gen for e in ordered.kept)
        if exact:
            return base
        palace, report = salvage(partial, self._make_bare)
        upkeep.repair(palace, fix=True)  # the links that follow from the drawers kept
        self.status.salvaged = report
        lost = report["drawers_lost_count"]
        findings.append(Finding(snapshot_name(gen), f"rebuilt around its damaged pages: "
                                f"{lost} drawer(s) lost, {report['vectors_dropped']} to embed "
                                "again" + "".join(f", {s} lost" for s in report[
                                    "sections_lost"])))
        seq = partial.store.get("seq")
        keys = partial.store.get("keys")
        return _Base(palace, gen, seq if isinstance(seq, int) else None,
                     keys if isinstance(keys, list) else [])

    def _chain(self, base: int, newest: int, jgens: set[int], findings: list[Finding]
               ) -> tuple[list[Entry], dict[int, int], journal.Span | None]:
        """Return (every record that verifies in the journals of generations ``base`` to
        ``newest``, each journal's length, the newest journal's torn tail). Damaged spans, and
        a torn tail in a journal a later generation follows, are findings."""
        entries: list[Entry] = []
        lengths: dict[int, int] = {}
        torn = None
        for g in sorted(x for x in jgens if x >= base):
            name = journal_name(g)
            try:
                data = self.space.read(name) or b""
            except NotLoaded:  # an older generation's, not read yet: the host reads it and
                findings.append(Finding(name, "not read from storage yet"))  # boots again
                continue
            lengths[g] = len(data)
            found = journal.scan(data)
            for span in found.damaged:
                findings.append(Finding(name, span.reason))
                self._aside.add(name)
            if found.torn is not None:
                if g == newest:
                    torn = found.torn
                else:
                    findings.append(Finding(name, f"{found.torn.reason}, in a journal that a "
                                            "later generation follows"))
                    self._aside.add(name)
            entries += [Entry(r, g, a, b) for r, a, b in
                        zip(found.records, found.starts, found.ends, strict=True)]
        return entries, lengths, torn

    def _replay_all(self, base: _Base, kept: list[Entry]) -> tuple[Palace, list[Entry]]:
        """Replay ``kept`` on the base palace; return (the palace, the entries applied). A
        record that fails is set aside (``self._failed``) and the records after it still
        replay; when it may have changed memory part-way, the palace is replayed again up to
        it. Cost: one replay, plus one per failure that is not a clean refusal."""
        palace = base.palace
        applied: list[Entry] = []
        for e in kept:
            try:
                self._replay(palace, e.record)
            except Exception as err:  # a bug on replay must not cost the records after it
                why = str(err) if isinstance(err, PalazzoError) else \
                    f"{type(err).__name__}: {err}"
                self._failed.append((e.record, why))
                clean = isinstance(err, _Saved) or (
                    isinstance(err, ValidationError | NotFound) and
                    e.record.op in self.registry.names() and
                    self.registry.get(e.record.op).atomic)
                if not clean:
                    palace = self._replay_prefix(base, [a.record for a in applied])
                continue
            applied.append(e)
        return palace, applied

    def _problem(self, findings: list[Finding], torn: journal.Span | None) -> str | None:
        """Return the status line's problem: what is damaged and what was still read."""
        st = self.status
        parts = []
        if findings:
            f = findings[0]
            more = f" (and {len(findings) - 1} more: see status.damage)" if \
                len(findings) > 1 else ""
            parts.append(f"{f.file}: {f.what}{more}")
        if self._failed:
            r, why = min(self._failed, key=lambda x: x[0].seq)
            more = f" (and {len(self._failed) - 1} more)" if len(self._failed) > 1 else ""
            parts.append(f"journal record {r.seq} ({r.op}) failed on replay: {why}{more}")
        if st.damaged:
            read = f"{st.replayed} journal record(s) replayed"
            if st.fallback is not None:
                read = (f"fell back to generation {st.fallback} (its snapshot and the "
                        f"journals since), {read}")
            parts.append(f"{read}; read-only until it is repaired (`palazzo repair --yes` "
                         "recovers what verifies and keeps every damaged file)")
        elif torn is not None:
            parts.append(f"{torn.reason}: a write a crash cut short was dropped")
        elif self._unfinished and not (not self.writer and self.locked_elsewhere is not None
                                       and self.locked_elsewhere()):
            parts.append("a compaction a crash cut short was dropped: " +
                         ", ".join(self._unfinished))
        return "; ".join(parts) or None

    def _load_keys(self, palace: Palace, known: list[str], findings: list[Finding]) -> None:
        """Give ``palace`` the signing keys of ``keys.json``; a damaged file, or one missing
        keys the snapshot knew of (``known``), is a finding and turns signing off (a damaged
        file is kept for repair to salvage what still verifies)."""
        data = self.space.read(KEYS)
        try:
            if data is None:
                if known:
                    raise ValidationError(f"missing, and the snapshot knew of {len(known)} "
                                          "signing key(s)")
                return
            value = recovery.read_keys(data)
            lost = set(known) - {k["key_id"] for k in value["keys"]}
            if lost:
                raise ValidationError(f"{len(lost)} signing key(s) the snapshot knew of are "
                                      "missing")
            palace.provenance.keyring_from_json(value)
        except ValidationError as err:
            findings.append(Finding(KEYS, f"damaged ({err}): signing is off, and tokens its "
                                    "keys signed cannot be checked"))
            if data is not None:
                self._aside.add(KEYS)
            self.status.signing = False

    def follow(self) -> str:
        """:meth:`_follow`, and a "reloaded" change (:attr:`changes`) when it booted: what
        the others wrote since is not known one by one then."""
        how = self._follow()
        if how == "boot":
            self.changes.append({"seq": self.seq, "op": "reloaded", "ids": []})
        elif how == "none" and not self.blocked:
            # A key stored by a read (a slice's first, a rotation) leaves no journal record.
            self._follow_keys()
        return how

    def _follow(self) -> str:
        """Bring memory up to what other processes acknowledged since this store last read
        or wrote, and return what it took: "none" (nothing new), "tail" (the journals' new
        records replayed on the palace in memory) or "boot" (damage, an import, or anything
        else a tail cannot explain: a whole boot).

        Why: many processes write one palace (a write takes the lock, follows, appends,
        releases), and a process that follows the others by booting pays for the whole
        palace each time another one adds a drawer; the tail costs what was appended.
        Another process's compaction (generation N+1) is followed by the tail too: its
        snapshot holds exactly the records of journal N, which stays on disk until the next
        compaction, so the rest of journal N and then journal N+1 are replayed and the new
        snapshot is never read. Only whole records that verify and go on from this store's
        sequence number are read; a torn last record is another process's append in
        progress (or a crash's leftover, which a writer's boot cuts) and waits. The signing
        keys are read again when another process stored a new one. Cost: reading the tip
        (28 bytes) and, when something was written, the new records and their replay
        (decoding recorded vectors, never embedding)."""
        raw = self.space.read(TIP) or b""
        if self.blocked:
            # Read-only until repaired: a reboot would find the same, unless the files were
            # written since (another process repaired them).
            if raw == self._blocked_tip:
                return "none"
            self.boot()
            self._blocked_tip = raw if self.blocked else None
            return "boot"
        tip = Tip.decode(raw)
        gen = self.status.generation
        if tip is None:
            if gen == 0 and not self.space.names():
                return "none"  # nothing written yet, by anyone
            self.boot()
            return "boot"
        if tip.generation == gen and tip.seq <= self.seq and not self.writer:
            return "none"  # (a writer reads on: a crash may have left a record the tip lags)
        if tip.generation not in (gen, gen + 1):
            self.boot()
            return "boot"
        tails = [(gen, self.space.read_from(journal_name(gen), self.status.journal_bytes))]
        if tip.generation == gen + 1:
            tails.append((gen + 1, self.space.read_from(journal_name(gen + 1), 0)))
        records: list[Record] = []
        last = None
        for g, data in tails:
            if data is None:  # a journal deleted by a later compaction: boot decides
                self.boot()
                return "boot"
            found = journal.scan(data)
            torn_here = found.torn is not None and (self.writer or g != tip.generation)
            if torn_here or found.damaged or found.repaired_headers:
                # A crash's torn tail (a writer cuts it), damage: what boot is for. A reader
                # leaves a torn tail of the newest journal: an append in progress.
                self.boot()
                return "boot"
            if g != gen:  # a compaction aside repeats the records appended meanwhile
                upto = records[-1].seq if records else self.seq
                records += [r for r in found.records if r.seq > upto]
            else:
                records += found.records
            last = (g, found)
        if any(r.seq != self.seq + 1 + i or r.op == SAVED for i, r in enumerate(records)):
            self.boot()  # a gap, or an import (its effect is in its snapshot alone)
            return "boot"
        if not records and tip.generation == gen:
            if tip.seq > self.seq:  # acknowledged records no journal shows here: boot
                self.boot()
                return "boot"
            return "none"
        if tip.generation == gen + 1 and not last[1].records and \
                (records[-1].seq if records else self.seq) != tip.seq:
            # A new generation with nothing appended yet holds exactly the tip's records; a
            # count that differs is not a compaction of what this store read (a repair that
            # set records aside): boot.
            self.boot()
            return "boot"
        try:
            done = [(r, self._replay(self.palace, r)) for r in records]
        except Exception:
            self.boot()  # a record that fails here is for boot to name
            return "boot"
        self.changes.extend(change(r.seq, r.op, result) for r, result in done)
        self._attach_host(self.palace)
        self._follow_keys()
        g, found = last
        if g != gen:
            self.status.generation = g
            self.status.snapshot = True
            self.status.journal_records = 0
            self._snapshot_bytes = self.space.size(snapshot_name(g)) or self._snapshot_bytes
            self.space.release(journal_name(gen))
            self.status.journal_bytes = 0
        if records:
            self.seq = records[-1].seq
            self.status.last_saved = records[-1].clock
        self.status.journal_records += len(found.records)
        self.status.journal_bytes += found.good_bytes
        return "tail"

    def _follow_keys(self) -> None:
        """Take the signing keys another process stored (``keys.json`` changed) into the
        palace, so this process verifies what they sign and never stores a keyring without
        them. Cost: reading ``keys.json`` (a few hundred bytes); parsing it only when its
        bytes changed."""
        data = self.space.read(KEYS)
        if data is None or data == self._keys_raw:
            return
        self._keys_raw = data
        try:
            value = recovery.read_keys(data)
        except ValidationError:
            return  # being damaged is for the next boot to name
        if value != self._keys:
            self.palace.provenance.keyring_from_json(value)
            self._keys = self.palace.provenance.keyring_to_json()

    def _replay_prefix(self, base: _Base, records: list[Record]) -> Palace:
        again = self._load_snapshot(base.generation) if base.generation else None
        palace = again.palace if again is not None else self._make_bare()
        for record in records:
            self._replay(palace, record)
        return palace

    def _replay(self, palace: Palace, record: Record) -> Any:
        """Run ``record`` again on ``palace`` with its clock and the embedder (and vectors) it
        ran with (a record written before effects existed runs with the host's embedder);
        return the operation's result."""
        if record.op == SAVED:
            _replay_saved(record)
            return None
        effects = record.effects
        if effects is None:
            if self._host is not None:
                palace.set_embedder(self._host)
        else:
            effect = effects.get("embedder")
            if effect is None:
                palace.embedder = None
            else:
                try:
                    palace.set_embedder(RecordedEmbedder.from_effects(effect))
                except ValueError as err:
                    raise ValidationError(str(err)) from None
        # Extraction on add runs again only for records written with it on: a record of an
        # older palazzo replays to what it did then, not to more.
        live = palace.extract_on_add
        palace.extract_on_add = bool((effects or {}).get("extract", False))
        try:
            with _FrozenClock(palace, record.clock):
                return self.registry.call(palace, record.op, copy.deepcopy(record.args))
        finally:
            palace.extract_on_add = live

    def _attach_host(self, palace: Palace) -> None:
        """Give ``palace`` the host's embedder after a boot (a fitted one gets its stored
        fit first, so its vectors stay); with no host embedder the vectors stay under their
        own fingerprint for the one attached later."""
        host = self._host
        if host is None:
            palace.embedder = None
            return
        _restore_fit(host, self.space.read(EMBEDDER_STATE), palace.drawers.fingerprint)
        palace.set_embedder(host)
        if self._words_only:  # inside words_first: the vectors' fingerprint, no embedding
            palace.embedder = None

    # -- calls --------------------------------------------------------------------------------
    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run the operation ``name``: :meth:`run` after checking ``args`` against its schema
        (bad arguments raise ValidationError; nothing ran, nothing to undo)."""
        args = {} if args is None else args
        return self.run(self.registry.check(name, args), args)

    def run(self, op: Operation, args: dict[str, Any]) -> dict[str, Any]:
        """Run ``op`` (from this store's ``registry.check``, so ``args`` fit its schema); a
        mutating one is journaled and synced before this returns.

        Returns the operation's result. Raises what the operation raises (nothing changed,
        nothing written: a failure part-way reloads the palace from disk first), ReadOnly for a
        write on a read-only store (PalaceDamaged when its files are damaged; and ReadOnly for
        a read that would have to store a new signing key), StorageError when the record could
        not be written (the store then reloads from disk). Hosts that already looked the
        operation up (the bridge) call this directly.
        """
        name = op.name
        if not op.mutates:
            result = op.run(self.palace, args)
            self._save_keys()
            return result
        if self.status.read_only:
            raise self.read_only_error()
        if name in SNAPSHOT_OPS:
            with _FrozenClock(self.palace, float(self.clock())):
                result = self._run(op, args)
            self._save_as_snapshot(name)
            return result
        try:
            args_copy = copy.deepcopy(args)
            journal.encode(Record(self.seq + 1, name, args_copy, 0.0))
        except (TypeError, ValueError, RecursionError) as err:
            raise ValidationError(f"arguments of {name!r} are not JSON: {err}") from None
        clock = float(self.clock())
        recorder = None
        if self.palace.embedder is not None:
            recorder = RecordingEmbedder(self.palace.embedder)
        host = self.palace.embedder
        self.palace.embedder = recorder
        try:
            with _FrozenClock(self.palace, clock):
                result = self._run(op, args)
        finally:
            if self.palace.embedder is recorder:  # (a rollback made a new palace)
                self.palace.embedder = host
        effects = {"embedder": None if recorder is None else recorder.effects(),
                   "extract": self.palace.extract_on_add}
        if op.replay is not None:
            args_copy = op.replay(args_copy, result)
        record = Record(self.seq + 1, name, args_copy, clock, effects)
        try:
            data = journal.encode(record)
            if len(data) > journal.MAX_RECORD:
                raise ValidationError(
                    f"{name} made a journal record of {len(data)} bytes, more than the "
                    f"{journal.MAX_RECORD} a record may hold; nothing was changed (split it)")
            self.space.append(journal_name(self.status.generation), data)
            self._write_tip(record.seq, self.status.journal_bytes + len(data))
            self._save_keys()
        except Exception as err:
            self.boot()  # memory must not hold what the disk does not
            if isinstance(err, (StorageError, ValidationError)):
                raise
            raise StorageError(f"the change was not saved: {err}") from None
        self.seq = record.seq
        self.changes.append(change(record.seq, name, result))
        self.status.journal_records += 1
        self.status.journal_bytes += len(data)
        self.status.last_saved = record.clock
        # The journal may grow as large as the snapshot before a compaction rewrites it: a long
        # import then writes snapshots of geometrically growing size (a few in all), not one
        # every COMPACT_BYTES of journal (each as big as the whole palace).
        if self.compact_inline and self.aside is None and self.compact_due:
            self.compact_or_note()
        return result

    def compact_or_note(self) -> None:
        """Compact after acknowledged writes: a failure is noted in the status's problem
        (the journal goes on) and raises nothing, as the writes before it stay acknowledged;
        the store boots again so the generation on disk decides where the next record goes.
        Returns None. Cost: :meth:`compact`."""
        try:
            self.compact()
        except Exception as err:  # the writes before are durable: they stay acknowledged
            self.note_compaction_failed(err)

    def note_compaction_failed(self, err: Exception) -> None:
        """Boot again (the generation on disk decides where the next record goes) and say in
        the status's problem that compaction failed with ``err``. Returns None."""
        self.boot()
        self.status.problem = "; ".join(filter(None, [
            self.status.problem, f"compaction failed (the journal goes on): {err}"]))

    def _save_as_snapshot(self, name: str) -> None:
        """Make the result of snapshot operation ``name`` durable: a compaction. An import
        first appends a ``saved`` marker (its own sequence number, which the snapshot holds)
        to the journal before it, so that a fallback past a damaged snapshot names the import
        it lacks instead of missing it without a word. A marker that no snapshot followed (a
        failure or crash before the compaction finished) was never acknowledged: removed here,
        or by the next writer's boot."""
        gen, at = self.status.generation, self.status.journal_bytes
        marked = name == "import"
        try:
            if marked:
                marker = Record(self.seq + 1, SAVED, {"op": name, "snapshot": snapshot_name(
                    gen + 1), "drawers": self.palace.counts()["drawers"]}, float(self.clock()))
                self.space.append(journal_name(gen), journal.encode(marker))
                self.seq = marker.seq
            self.compact()
        except Exception as err:
            if marked:
                with contextlib.suppress(PalazzoError, OSError):
                    self.space.truncate(journal_name(gen), at)
            self.boot()
            if isinstance(err, StorageError):
                raise
            raise StorageError(f"the change was not saved: {err}") from None

    @contextlib.contextmanager
    def words_first(self) -> Iterator[None]:
        """Within the block, drawers are added without vectors: searchable by their words at
        once, embedded afterwards in durable ``reindex`` steps (an import of thousands of
        messages then shows its drawers in the first minute and loses no embedding work to a
        crash, instead of embedding inside every batch). The palace keeps its vectors and
        their fingerprint; the embedder comes back when the block ends. Cost: none."""
        embedder = self.palace.embedder
        self._words_only = True  # (a boot or a follow in the block leaves it off too)
        self.palace.embedder = None
        try:
            yield
        finally:
            self._words_only = False
            if self.palace.embedder is None:
                self.palace.embedder = embedder

    def _write_tip(self, seq: int, length: int) -> None:
        """Record that the journal of the current generation holds ``length`` acknowledged
        bytes up to record ``seq``. Cost: one small write, no sync (see Space.mark)."""
        self.space.mark(TIP, Tip(self.status.generation, seq, length).encode())

    def _run(self, op: Operation, args: dict[str, Any]) -> dict[str, Any]:
        """Run a mutating operation; if it fails part-way, reload the palace from disk (so
        memory holds exactly what was acknowledged) and re-raise. An ``atomic`` operation's
        PalazzoError came before any change, so it needs no reload."""
        try:
            return op.run(self.palace, args)
        except (ValidationError, NotFound):
            # An atomic operation refuses with these before it changes anything.
            if not op.atomic:
                self.boot()
            raise
        except BaseException:
            self.boot()
            raise

    def read_only_error(self) -> ReadOnly:
        """Return the error a write on this read-only store raises, saying why it is."""
        if self.status.damaged:
            return PalaceDamaged(
                f"this palace is damaged ({self.status.problem.split('; read-only')[0]}); it "
                "is read-only until it is repaired: `palazzo repair --yes` (or Repair in the "
                "browser's Palaces tab) recovers what verifies and keeps every damaged file")
        if self.status.problem and self._refused is not None:
            return ReadOnly(self.status.problem)
        return ReadOnly("this palace is open for writing elsewhere (another tab or process); "
                        "it is read-only here")

    def _save_keys(self) -> None:
        keys = self.palace.provenance.keyring_to_json()
        if keys == self._keys:
            return
        if self.status.read_only or not self.status.signing:
            # A key made here could never be stored, so nothing it signed would verify later.
            self.palace.provenance.keyring_from_json(self._keys)
            if not self.status.signing:
                raise PalaceDamaged(f"signing is off: {KEYS} is damaged; repair the palace "
                                    "(`palazzo repair --yes`) to sign again")
            raise ReadOnly("signing needs a new key, and this read-only copy of the palace "
                           "cannot store one: sign where the palace is open for writing")
        self.space.write(KEYS, recovery.keys_bytes(keys))
        self._keys = keys

    # -- compaction, check and repair ---------------------------------------------------------
    def compact(self, keep_previous: bool = True, release: bool = True) -> Status:
        """Write the palace as snapshot N+1, read it back and verify it, start journal N+1,
        then delete the generations before N (``keep_previous``; else every older one), and
        (``release``) tell the space neither snapshot is read again soon (the browser's
        mirror then drops its copies; a caller that boots from the new one at once keeps
        it).

        Returns the status. Raises ReadOnly on a read-only store, StorageError when the
        snapshot would be too large or did not read back whole (it is deleted again, and the
        palace stays at generation N). Cost: writing the palace once and reading it back (a
        CRC-32 over the file); on disk, the previous generation stays until the next one.
        """
        if self.status.read_only:
            raise self.read_only_error()
        if self.aside is not None:
            raise StorageError(f"snapshot {self.aside} is being written aside; compact after it")
        new = self.status.generation + 1
        size = self.write_snapshot(new)
        return self.adopt_snapshot(new, size, keep_previous=keep_previous, release=release)

    def write_snapshot(self, gen: int) -> int:
        """Write the palace in memory as snapshot ``gen`` (and the fitted embedder's state),
        read it back and verify it; return its size in bytes. The first half of
        :meth:`compact`: it reads memory and writes one new file, which nothing reads until
        :meth:`adopt_snapshot` moves the tip to it, so a forked child may run it while its
        parent goes on answering reads (:meth:`PalaceDirectory.compact_aside`).

        Raises StorageError when the snapshot would be too large or did not read back whole
        (then it is deleted again). Cost: encoding the palace, writing it with one fsync, and
        reading it back (a CRC-32 over the file)."""
        keys = [k["key_id"] for k in (self._keys or {}).get("keys", [])]
        pieces = snapshot.snapshot_parts(self.palace, {"seq": self.seq, "keys": keys})
        size = sum(len(p) for p in pieces)
        if size > journal.MAX_RECORD:  # what boot reads back: keep generation N
            raise StorageError(f"the palace is {size} bytes as a snapshot, more than "
                               f"the {journal.MAX_RECORD} one may hold; it stays as it is")
        state = _fit_state(self.palace)
        if state is not None:
            self.space.write(EMBEDDER_STATE, state)
        name = snapshot_name(gen)
        self.space.write(name, pieces)  # a directory writes piece by piece
        del pieces
        if getattr(self.space, "reads_back", True):  # (else the host reads back itself)
            self._verify(name)
        return size

    def adopt_snapshot(self, gen: int, size: int, keep_previous: bool = True,
                       release: bool = True, since: tuple[int, int] | None = None) -> Status:
        """Make snapshot ``gen`` (written by :meth:`write_snapshot`, ``size`` bytes) the
        current generation: start its journal, move the tip to it, then delete the
        generations before the previous one (``keep_previous``; else every older one), and
        (``release``) tell the space neither snapshot is read again soon. The second half of
        :meth:`compact`; returns the status.

        ``since`` = (the sequence number the snapshot holds up to, the journal's length
        then): a snapshot written aside while writes went on; the records appended to the
        current journal after that length are copied as the new journal's first (they stay
        in the old journal too, which a fallback reads; a follower skips the repeats). None:
        the snapshot holds everything, and the new journal starts empty.

        Raises StorageError when the records to copy are not whole and numbered on from the
        snapshot (nothing is adopted then). Cost: an empty file (or the copied records), the
        tip, and the deletions."""
        old = self.status.generation
        name = snapshot_name(gen)
        tail, count = b"", 0
        if since is not None and self.status.journal_bytes > since[1]:
            tail = (self.space.read_from(journal_name(old), since[1]) or b"")[
                :self.status.journal_bytes - since[1]]
            found = journal.scan(tail)
            numbers = [r.seq for r in found.records]
            if found.problem or found.good_bytes != len(tail) or \
                    numbers != list(range(since[0] + 1, self.seq + 1)):
                raise StorageError(f"the records written while {name} was written aside do "
                                   "not read back whole; it is not adopted")
            count = len(numbers)
        self.space.write(journal_name(gen), tail)
        self.status.generation = gen
        self._write_tip(self.seq, len(tail))
        keep = old if keep_previous else gen
        for n in self.space.names():
            g = generation_of(n)
            if g is not None and g < keep:
                self.space.delete(n)
        # Neither snapshot is read again unless a boot falls back on it: a host that keeps
        # copies of the files (the browser's mirror) need not hold them.
        self.space.release(snapshot_name(old))
        self.space.release(journal_name(old))  # (appended to no more)
        if release:
            self.space.release(name)
        self._snapshot_bytes = size
        self.status.snapshot = True
        self.status.journal_records = count
        self.status.journal_bytes = len(tail)
        self.status.last_saved = float(self.clock())
        return self.status

    def _verify(self, name: str) -> None:
        """Read the snapshot just written back from the space and check it whole (its
        checksums and the sequence number it holds); delete it and raise StorageError when it
        is not. Cost: reading the file once."""
        try:
            data = self.space.load(name)
            why = "it is missing"
            if data is not None:
                held = snapshot.open_snapshot(data).store.get("seq")
                why = None if held == self.seq else f"it holds record {held}, not {self.seq}"
        except (SnapshotDamaged, StorageError) as err:
            why = str(err)
        if why is not None:
            with contextlib.suppress(PalazzoError, OSError):
                self.space.delete(name)
            raise StorageError(f"{name} did not read back whole ({why}); the palace stays at "
                               f"generation {self.status.generation}")

    def repair(self) -> dict[str, Any]:
        """Recover everything that still verifies and open the palace for writing again;
        return what was done.

        Records that verified but no longer apply go to ``rejected-<gen>-<seq>.log`` (the
        journal's format) and are listed with their text; every damaged file is moved aside
        to ``damaged-<name>`` (never deleted); the signing keys that still verify are kept;
        then the palace as boot recovered it is written as a new generation (twice, so it has
        a previous generation at once). Returns {"repaired", "rejected", "records",
        "set_aside", "moved", "missing", "damage", "keys_dropped", "status"}; with nothing to
        repair, "repaired" is False and nothing is written. Raises ReadOnly when another
        process holds the palace, or when a whole snapshot this palazzo cannot read is there
        (a newer palazzo must open it). Cost: two compactions.
        """
        if not self.writer:
            raise ReadOnly("another process holds this palace; repair it there")
        if self._refused is not None:
            raise ReadOnly(self.status.problem or "this palace cannot be read here")
        st = self.status
        out: dict[str, Any] = {"repaired": False, "rejected": None, "records": 0,
                               "set_aside": list(st.set_aside), "moved": [],
                               "missing": list(st.missing), "damage": list(st.damage),
                               "keys_dropped": 0}
        if not st.damaged:
            out["status"] = st.to_dict()
            return out
        names = set(self.space.names())
        failed = sorted(self._failed, key=lambda x: x[0].seq)
        if failed:
            out["rejected"] = rejected_name(st.generation, failed[0][0].seq)
            self.space.write(out["rejected"], b"".join(journal.encode(r) for r, _ in failed))
            out["records"] = len(failed)
        keys = None
        if KEYS in self._aside:
            keys, out["keys_dropped"] = recovery.salvage_keys(self.space.read(KEYS) or b"")
        for name in sorted(self._aside):
            to = recovery.aside_name(name, names)
            self.space.rename(name, to)
            names.add(to)
            out["moved"].append({"file": name, "to": to})
        if keys is not None:
            self.palace.provenance.keyring_from_json(keys)
        st.read_only, st.signing = False, True
        st.damage, st.set_aside, st.missing = [], [], []
        self._failed, self._aside = [], set()
        self._keys = None
        self._save_keys()  # before the snapshots, which name the keys they knew of
        self.compact(keep_previous=False)
        self.compact(release=False)  # the boot below reads it (the mirror hands it over)
        self.boot()
        out["repaired"] = True
        out["status"] = self.status.to_dict()
        return out

    def check(self) -> dict[str, Any]:
        """Read every file of the palace and verify it; return {"ok", "files", "damage",
        "status"} without changing anything.

        ``files`` has one entry per file: its name, its role (current or previous
        generation, tip, keys, set aside, other) and what was found. A damaged file of the
        previous generation is reported but is not damage to the palace (only a fallback
        would need it). ``ok`` is False when the palace is damaged (the boot's findings) or
        any file of the current generation fails. Cost: reading every file once (every
        snapshot's checksums, every journal record).
        """
        names = sorted(self.space.names())
        gens = sorted({g for n in names if (g := generation_of(n)) is not None})
        current = self.status.generation
        files = []
        bad_current = False
        held: dict[int, int | None] = {}  # generation -> the record its snapshot holds up to
        seqs: dict[int, list[int]] = {}  # generation -> its journal's sequence numbers
        raw: dict[int, dict[int, bytes]] = {}  # generation -> its records' bytes by seq
        for name in names:
            g = generation_of(name)
            role = ("current" if g == current else "previous" if g is not None and g < current
                    else "newer" if g is not None else _role(name))
            found = self._check_file(name, g == current, held, seqs, raw)
            files.append({"file": name, "role": role, "bytes": len(self.space.read(name) or
                                                                    b""), **found})
            if not found["ok"] and role in ("current", "newer", "tip", "keys"):
                bad_current = True
        bad_current |= self._check_chain(files, held, seqs, raw)
        bad_current |= self._check_against_tip(files, seqs)
        for name in names:
            g = generation_of(name)
            if SNAPSHOT.fullmatch(name) or name.startswith(recovery.ASIDE) or (
                    g is not None and g < current):
                self.space.release(name)  # read for the check only
        ok = not self.status.damaged and not bad_current
        return {"ok": ok, "generations": gens, "files": files,
                "damage": list(self.status.damage), "status": self.status.to_dict()}

    def _check_against_tip(self, files: list[dict[str, Any]], seqs: dict[int, list[int]]
                           ) -> bool:
        """Mark the journal the tip names when it is shorter than what was acknowledged (cut
        at a record boundary, or its end torn past the acknowledged length); return whether
        it was."""
        tip = Tip.decode(self.space.read(TIP) or b"") if TIP in self.space.names() else None
        if tip is None:
            return False
        name = journal_name(tip.generation)
        entry = next((f for f in files if f["file"] == name), None)
        if entry is None:
            return False
        numbers = seqs.get(tip.generation, [])
        good = journal.scan(self.space.read(name) or b"").good_bytes
        if good >= tip.length and (not tip.length or (numbers and numbers[-1] >= tip.seq)):
            return False
        entry["ok"] = False
        entry["found"] += (f"; holds {good} whole bytes up to record "
                           f"{numbers[-1] if numbers else 'none'}, but {tip.length} bytes up "
                           f"to record {tip.seq} were acknowledged")
        return True

    @staticmethod
    def _check_chain(files: list[dict[str, Any]], held: dict[int, int | None],
                     seqs: dict[int, list[int]], raw: dict[int, dict[int, bytes]]) -> bool:
        """Mark each journal whose records do not lead from its snapshot to the next one:
        journal N holds the records after what snapshot N holds, up to what snapshot N+1
        holds (a record lost at either end, found only by this); the records it holds past
        that (a compaction aside's, written while the snapshot was) must be journal N+1's
        first ones, byte for byte (when journal N+1 exists: before, snapshot N+1 is one
        being written aside, or one that boot drops). Returns whether two journals disagree
        on a record: the palace read from the newer one is not what was acknowledged."""
        disagree = False
        for g, numbers in seqs.items():
            end = held.get(g + 1)
            past = [n for n in numbers if end is not None and n > end]
            if past and g + 1 in seqs and any(
                    raw.get(g + 1, {}).get(n) != raw.get(g, {}).get(n) for n in past):
                disagree = True
                for name in (journal_name(g), journal_name(g + 1)):
                    entry = next(f for f in files if f["file"] == name)
                    entry["ok"] = False
                    entry["found"] += (f"; records {past[0]}-{past[-1]} differ between "
                                       f"{journal_name(g)} and {journal_name(g + 1)}, which "
                                       "should begin with the same records")
        for g, numbers in seqs.items():
            start, end = held.get(g), held.get(g + 1)
            first = numbers[0] if numbers else None
            last = numbers[-1] if numbers else None
            why = None
            if start is not None and first is not None and first != start + 1:
                why = f"its first record is {first}, but its snapshot holds up to {start}"
            elif end is not None and (last if last is not None else start) is not None and \
                    (last if last is not None else start) < end:
                # (past it is fine: a compaction aside's next journal repeats those records)
                why = (f"it ends at record {last if last is not None else start}, but the "
                       f"next snapshot holds up to {end}")
            if why is not None:
                entry = next(f for f in files if f["file"] == journal_name(g))
                entry["ok"] = False
                entry["found"] += f"; {why}"
        return disagree

    def _check_file(self, name: str, current: bool, held: dict[int, int | None],
                    seqs: dict[int, list[int]], raw: dict[int, dict[int, bytes]]
                    ) -> dict[str, Any]:
        """Return {"ok", "found"} for one file (see :meth:`check`); note what a snapshot holds
        up to in ``held``, a journal's sequence numbers in ``seqs`` and its records' bytes
        in ``raw``."""
        data = self.space.read(name) or b""
        if m := SNAPSHOT.fullmatch(name):
            if not snapshot.is_snapshot(data):
                found = journal.scan(data)
                ok = len(found.records) == 1 and not found.problem
                return {"ok": ok, "found": "a palace JSON snapshot" if ok else
                        f"damaged: {found.problem or 'not a snapshot'}"}
            try:
                opened = snapshot.open_snapshot(bytearray(data))
            except SnapshotDamaged as err:
                return {"ok": False, "found": f"damaged: {err}"}
            except PalazzoError as err:
                return {"ok": True, "found": f"whole, but not read here: {err}"}
            seq = opened.store.get("seq")
            held[int(m.group(1))] = seq if isinstance(seq, int) else None
            return {"ok": True, "found": f"whole, holds records up to "
                    f"{seq if seq is not None else 'an unknown number'}"}
        if m := JOURNAL.fullmatch(name):
            found = journal.scan(data)
            numbers = [r.seq for r in found.records]
            seqs[int(m.group(1))] = numbers
            raw[int(m.group(1))] = {r.seq: bytes(data[a:b]) for r, a, b in zip(
                found.records, found.starts, found.ends, strict=True)}
            what = f"{len(numbers)} record(s)"
            if numbers:
                what += f", {numbers[0]}-{numbers[-1]}"
            problems = [s.reason for s in found.damaged]
            if numbers and numbers != list(range(numbers[0], numbers[0] + len(numbers))):
                problems.append("its records are not numbered one after another "
                                "(repeated, missing or out of order)")
            if found.torn is not None:
                problems.append(f"a torn tail ({found.torn.reason})" if current else
                                f"cut short ({found.torn.reason}) in a journal a later "
                                "generation follows")
            ok = not problems or (current and len(problems) == 1 and found.torn is not None)
            return {"ok": ok, "found": "; ".join([what, *problems])}
        if name == TIP:
            tip = Tip.decode(data)
            return {"ok": tip is not None, "found": "damaged" if tip is None else
                    f"generation {tip.generation}, record {tip.seq}, {tip.length} bytes"}
        if name == KEYS:
            try:
                keys = recovery.read_keys(data)
            except ValidationError as err:
                return {"ok": False, "found": f"damaged: {err}"}
            return {"ok": True, "found": f"{len(keys['keys'])} signing key(s)"}
        if name == EMBEDDER_STATE:
            ok = len(data) >= 4 and zlib.crc32(data[4:]).to_bytes(4, "little") == data[:4]
            return {"ok": ok, "found": "a fitted embedder" if ok else
                    "damaged: the fitted embedder's vectors will be made again"}
        return {"ok": True, "found": _role(name)}


class _Saved(StorageError):
    """Replay reached the marker of an import whose snapshot is not there (private: boot
    sets the record aside with this reason)."""


def _replay_saved(record: Record) -> None:
    """Replay a ``saved`` marker: the operation it marks lives only in its snapshot, so a
    boot that reaches the marker fell back past that snapshot and does not have it."""
    args = record.args
    raise _Saved(f"the {args.get('op', 'operation')} of {args.get('drawers', '?')} drawer(s) "
                 f"saved as {args.get('snapshot', 'a snapshot')} is only in that snapshot: "
                 "import its file again")


def _role(name: str) -> str:
    if name == TIP:
        return "tip"
    if name == KEYS:
        return "keys"
    if name == EMBEDDER_STATE:
        return "embedder"
    if name.startswith((recovery.ASIDE, "rejected-")):
        return "set aside"
    return "not a palace file (left alone)"


def _inner(embedder: Any) -> Any:
    return getattr(embedder, "inner", embedder)


def _fit_state(palace: Palace) -> bytes | None:
    """Return the palace embedder's fitted parameters as file bytes (a fitted tfidf), else
    None: vectors of a fitted embedder are only worth keeping with the fit that made them."""
    inner = _inner(palace.embedder)
    state = getattr(inner, "state", None)
    if state is None or not getattr(inner, "n_docs", 0):
        return None
    doc = {"fingerprint": inner.fingerprint, "state": state()}
    payload = json.dumps(doc, sort_keys=True, ensure_ascii=False).encode("utf-8")
    return zlib.crc32(payload).to_bytes(4, "little") + payload


def _restore_fit(host: Any, data: bytes | None, fingerprint: str | None) -> None:
    """Give ``host`` (a fitted kind of embedder) the fit stored in ``data`` when that fit made
    the palace's vectors (its fingerprint is theirs); anything else leaves it unchanged."""
    inner = _inner(host)
    restore = getattr(inner, "restore", None)
    if data is None or fingerprint is None or restore is None or len(data) < 4 or \
            inner.fingerprint == fingerprint:
        return
    payload = data[4:]
    if zlib.crc32(payload).to_bytes(4, "little") != data[:4]:
        return
    try:
        doc = json.loads(payload.decode("utf-8"))
        if doc.get("fingerprint") != fingerprint:
            return
        before = inner.state()
        restore(doc["state"])
        if inner.fingerprint != fingerprint:  # not the fit that made these vectors after all
            restore(before)
    except (ValueError, KeyError, TypeError, AttributeError):
        return
