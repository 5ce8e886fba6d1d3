"""Persistence that loses nothing: a snapshot plus an append-only journal of operations.

A palace's space holds generation-numbered files::

    snapshot-00000007.pz   the palace in the columnar snapshot format
                           (:mod:`palazzo.formats.snapshot`; before it, the palace JSON in
                           one checksummed record, still read and rewritten columnar at
                           the next compaction)
    journal-00000007.log   mutating operations run since that snapshot
                           (:mod:`palazzo.persist.journal`)
    keys.json              the provenance signing keys (local only, never exported)
    embedder.json          a fitted embedder's parameters (tfidf), so its vectors survive
    rejected-00000007-000012.log   journal records set aside by :meth:`PalaceStore.repair`

Boot takes the newest snapshot that reads back whole (a torn or corrupt one is skipped; no
snapshot means an empty palace), replays its journal with each record's clock value, and drops
a torn or corrupt tail, saying so in :attr:`PalaceStore.status`. A mutating operation is
acknowledged (its result returned) only after its record was appended and synced; if that
write fails the store reloads from disk, so memory never holds what disk lost.

**Replay is exact.** A record keeps what the operation did that its arguments and clock do not
determine: the embedder it ran with and every vector it made
(:mod:`palazzo.embed.recorded`). Replay runs each record with exactly those vectors, so links,
paths and deposits come out as they did, whichever embedder the host attaches afterwards (its
own fingerprint then decides, as for a snapshot, which vectors stay), and nothing is embedded
again. Swarms are seeded; signing keys are loaded from ``keys.json`` after replay.

**A record that fails on replay is never deleted.** Boot stops before it, opens the palace
read-only with ``status.stopped_at`` and a problem naming the record and the reason, and leaves
every file as it is; :meth:`PalaceStore.repair` (``palazzo repair``) moves that record and the
ones after it into a ``rejected-…`` file, where they stay, and opens the palace for writing.

**Operations are atomic.** A mutating operation whose arguments fail their schema changes
nothing; one that fails while it runs may have changed memory part-way, so the store then
reloads the palace from disk (a boot) before it re-raises: memory equals what was
acknowledged. Operations registered ``atomic`` (adding, editing and deleting drawers, wings
and rooms; bulk replace) check everything before they change anything, so their refusals
(a wrong drawer id) cost no reload. Only a successful operation is journaled.

**Readers see what was acknowledged.** A read-only boot that races a compaction (it read
snapshot N, then the writer wrote N+1 and deleted N's journal) notices that the files changed
under it and reads again.

Compaction writes snapshot N+1 whole, then an empty journal N+1, then deletes generation N.
A crash between any two steps leaves a bootable state: snapshot N+1 torn means generation N
is still complete; journal N+1 missing means it is empty. No rename is needed, so OPFS and
IndexedDB spaces can do the same with plain writes.
"""

from __future__ import annotations

import copy
import json
import re
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from palazzo.embed.recorded import RecordedEmbedder, RecordingEmbedder
from palazzo.errors import (
    NotFound,
    PalazzoError,
    ReadOnly,
    SnapshotDamaged,
    StorageError,
    ValidationError,
)
from palazzo.formats import snapshot
from palazzo.formats.palacefile import read_palace
from palazzo.ops import REGISTRY, Operation, Registry
from palazzo.palace import Palace
from palazzo.persist import journal
from palazzo.persist.journal import Record
from palazzo.persist.storage import Space

SNAPSHOT = re.compile(r"snapshot-(\d{8})\.pz")
KEYS = "keys.json"
EMBEDDER_STATE = "embedder.json"
BOOT_TRIES = 20  # a read-only boot that keeps racing compactions gives up after this many
COMPACT_RECORDS = 500
COMPACT_BYTES = 32 << 20
# Operations whose durable record is a new snapshot rather than a journal record: an import
# carries a whole palace, and reindex only adds vectors (derived data that replay without the
# embedder could not remake).
SNAPSHOT_OPS = frozenset({"import", "reindex"})




def snapshot_name(gen: int) -> str:
    return f"snapshot-{gen:08d}.pz"


def journal_name(gen: int) -> str:
    return f"journal-{gen:08d}.log"


def rejected_name(gen: int, seq: int) -> str:
    return f"rejected-{gen:08d}-{seq:06d}.log"


@dataclass(slots=True)
class Status:
    """What boot found and what has been written since."""

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
    stopped_at: int | None = None  # seq of the journal record replay stopped before

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able status (for the status line and the CLI)."""
        return {"generation": self.generation, "snapshot": self.snapshot,
                "replayed": self.replayed, "dropped_bytes": self.dropped_bytes,
                "problem": self.problem, "skipped_snapshots": list(self.skipped_snapshots),
                "journal_records": self.journal_records, "journal_bytes": self.journal_bytes,
                "last_saved": self.last_saved, "read_only": self.read_only,
                "stopped_at": self.stopped_at}


class _FrozenClock:
    """Context manager: the palace's clock returns ``t`` while an operation runs."""

    def __init__(self, palace: Palace, t: float) -> None:
        self.palace, self.t = palace, t

    def __enter__(self) -> None:
        self.saved = self.palace.clock
        self.palace.clock = lambda: self.t

    def __exit__(self, *exc: object) -> None:
        self.palace.clock = self.saved


def _load_keyring(palace: Palace, data: bytes | None) -> None:
    if data is None:
        return
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise StorageError(f"{KEYS} is unreadable: the signing keys are lost") from None
    palace.provenance.keyring_from_json(value)


class PalaceStore:
    """One open palace bound to its space: boot, journaled calls, compaction, repair.

    ``read_only`` says this process may not write (another holds the lock); a store whose boot
    stopped at a failing record is read-only too, but may :meth:`repair` (it is the writer).
    """

    def __init__(self, space: Space, make_palace: Callable[..., Palace],
                 registry: Registry = REGISTRY, clock: Callable[[], float] = time.time,
                 read_only: bool = False, compact_records: int = COMPACT_RECORDS,
                 compact_bytes: int = COMPACT_BYTES) -> None:
        self.space = space
        self.make_palace = make_palace
        self.registry = registry
        self.clock = clock
        self.compact_records = compact_records
        self.compact_bytes = compact_bytes
        self.writer = not read_only
        self.status = Status(read_only=read_only)
        self.seq = 0
        self._keys: Any = None
        self._host: Any = None
        self._unsaved_vectors = False  # reindex steps whose vectors no snapshot holds yet
        self._snapshot_bytes = 0  # size of the snapshot the journal follows
        fresh = not space.names()
        self.boot()
        if fresh and self.writer:
            self.compact()  # a new palace's creation time and settings are on disk at once

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

    def _load_snapshot(self, gen: int) -> Palace | None:
        # A buffer of our own: the snapshot's arrays become the palace's without a copy.
        data = self.space.load(snapshot_name(gen))
        if data is None:
            return None
        self._snapshot_bytes = len(data)
        try:
            if snapshot.is_snapshot(data):
                return snapshot.read_snapshot(data, self._make_bare)
            # A palace JSON snapshot (before the columnar format): read, and written in the
            # columnar format at the next compaction.
            found = journal.scan(bytes(data))
            if len(found.records) != 1 or found.problem or found.records[0].op != "snapshot":
                return None
            return read_palace(found.records[0].args, self._make_bare)
        except SnapshotDamaged:
            return None
        except PalazzoError as err:
            # A whole, checksummed snapshot this palazzo refuses (written by a palazzo whose
            # checks were laxer, or a newer one) is not damage: falling back to an older or an
            # empty palace and then compacting would destroy it. Open read-only instead.
            self._refused = f"{snapshot_name(gen)} is whole but cannot be read here: {err}"
            return None

    def _generations(self) -> list[int]:
        return sorted((int(m.group(1)) for n in self.space.names()
                       if (m := SNAPSHOT.fullmatch(n))), reverse=True)

    def boot(self) -> Status:
        """Load the newest whole snapshot and replay its journal; return the status.

        Never raises for damaged files: a bad snapshot is skipped (named in the status), a bad
        journal tail is cut off (its size and the reason are in the status; only a writer cuts
        it), and a record that fails on replay stops the boot read-only with every file kept
        (``status.stopped_at``). A read-only boot that raced a compaction reads again. Raises
        StorageError only when the space itself cannot be read. Cost: reading the snapshot
        plus replaying the journal (decoding recorded vectors, never embedding).
        """
        for _ in range(BOOT_TRIES):
            before = self._journal_names()
            status = self._boot_once()
            if self.writer or self._journal_names() == before:
                return status
        return status  # still racing: what was read is a state that was acknowledged once

    def _journal_names(self) -> tuple[str, ...]:
        return tuple(n for n in self.space.names()
                     if SNAPSHOT.fullmatch(n) or n.startswith("journal-"))

    def _boot_once(self) -> Status:
        self.status = Status(read_only=not self.writer)
        self._host = None
        self._unsaved_vectors = False
        palace, gen = None, 0
        self._refused = None
        for g in self._generations():
            palace = self._load_snapshot(g)
            if palace is not None:
                gen = g
                break
            if self._refused is not None:
                self.status.read_only = True
                self.status.problem = (f"{self._refused}; the palace is read-only here so "
                                       "nothing overwrites it")
                self.palace = self._make_bare()
                self._attach_host(self.palace)
                self._keys = self.palace.provenance.keyring_to_json()
                return self.status
            self.status.skipped_snapshots.append(snapshot_name(g))
        if palace is None:  # never compacted (or every snapshot is damaged): generation 0
            palace = self._make_bare()
            self._snapshot_bytes = 0
        self.status.snapshot = gen > 0
        self.status.generation = gen
        if self.status.skipped_snapshots:
            self.status.problem = "unreadable snapshot(s) skipped: " + ", ".join(
                self.status.skipped_snapshots)
        data = self.space.read(journal_name(gen)) or b""
        found = journal.scan(data)
        replayed = 0
        problem = found.problem
        for record in found.records:
            try:
                self._replay(palace, record)
            except Exception as err:  # a bug on replay must not cost the records after it
                why = str(err) if isinstance(err, PalazzoError) else \
                    f"{type(err).__name__}: {err}"
                problem = (f"journal record {record.seq} ({record.op}) failed on replay: {why}; "
                           f"it and the {len(found.records) - replayed - 1} record(s) after it "
                           "are kept on disk, and the palace is read-only until "
                           "`palazzo repair` sets them aside")
                self.status.stopped_at = record.seq
                self.status.read_only = True
                # The failed record may have changed memory part-way: replay again up to it.
                palace = self._replay_prefix(gen, found.records[:replayed])
                break
            replayed += 1
        good = found.ends[replayed - 1] if replayed else 0
        self.seq = found.records[replayed - 1].seq if replayed else 0
        if self.status.stopped_at is None and good < len(data) and self.writer:
            self.space.truncate(journal_name(gen), good)  # only a torn or corrupt tail
        self.status.replayed = replayed
        self.status.dropped_bytes = 0 if self.status.stopped_at is not None else len(data) - good
        if problem:
            self.status.problem = "; ".join(filter(None, [self.status.problem, problem]))
        self.status.journal_records = replayed
        self.status.journal_bytes = good
        self._attach_host(palace)
        _load_keyring(palace, self.space.read(KEYS))
        self._keys = palace.provenance.keyring_to_json()
        self.palace = palace
        if palace.text_index.retokenised and self.writer and not self.status.read_only:
            # The snapshot's word index was tokenised the old way and rebuilt on reading
            # (seconds at 20k drawers): save it now so later opens read it as it is. A save
            # that fails leaves the palace open as read; the next open rebuilds again.
            try:
                self.compact()
                palace.text_index.retokenised = False
            except (PalazzoError, OSError):
                pass
        return self.status

    def _replay_prefix(self, gen: int, records: list[Record]) -> Palace:
        palace = self._load_snapshot(gen) if gen else None
        if palace is None:
            palace = self._make_bare()
        for record in records:
            self._replay(palace, record)
        return palace

    def _replay(self, palace: Palace, record: Record) -> None:
        """Run ``record`` again on ``palace`` with its clock and the embedder (and vectors) it
        ran with; a record written before effects existed runs with the host's embedder."""
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
                self.registry.call(palace, record.op, copy.deepcopy(record.args))
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
        write on a read-only store (and for a read that would have to store a new signing
        key), StorageError when the record could not be written (the store then reloads from
        disk). Hosts that already looked the operation up (the bridge) call this directly.
        """
        name = op.name
        if not op.mutates:
            result = op.run(self.palace, args)
            self._save_keys()
            return result
        if self.status.read_only:
            raise ReadOnly(self._read_only_reason())
        if name in SNAPSHOT_OPS:
            with _FrozenClock(self.palace, float(self.clock())):
                result = self._run(op, args)
            # Vectors are derived data: a partial reindex (a host embedding in steps) stays in
            # memory and is saved with the step that finishes; after a crash the missing
            # ones are embedded again.
            if name == "reindex":
                self._unsaved_vectors |= bool(result.get("embedded"))
                if result.get("remaining") or not self._unsaved_vectors:
                    return result
            try:
                self.compact()
            except Exception as err:
                self.boot()
                if isinstance(err, StorageError):
                    raise
                raise StorageError(f"the change was not saved: {err}") from None
            return result
        try:
            args_copy = copy.deepcopy(args)
            journal.encode(Record(self.seq + 1, name, args_copy, 0.0))
        except (TypeError, ValueError, RecursionError) as err:
            raise ValidationError(f"arguments of {name!r} are not JSON: {err}") from None
        if self._unsaved_vectors:
            # Vectors of an unfinished reindex run live only in memory; an operation that
            # reads them (links, paths) would replay differently without them: save first.
            self.compact()
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
        record = Record(self.seq + 1, name, args_copy, clock, effects)
        try:
            data = journal.encode(record)
            if len(data) > journal.MAX_RECORD:
                raise ValidationError(
                    f"{name} made a journal record of {len(data)} bytes, more than the "
                    f"{journal.MAX_RECORD} a record may hold; nothing was changed (split it)")
            self.space.append(journal_name(self.status.generation), data)
            self._save_keys()
        except Exception as err:
            self.boot()  # memory must not hold what the disk does not
            if isinstance(err, (StorageError, ValidationError)):
                raise
            raise StorageError(f"the change was not saved: {err}") from None
        self.seq = record.seq
        self.status.journal_records += 1
        self.status.journal_bytes += len(data)
        self.status.last_saved = record.clock
        # The journal may grow as large as the snapshot before a compaction rewrites it: a long
        # import then writes snapshots of geometrically growing size (a few in all), not one
        # every COMPACT_BYTES of journal (each as big as the whole palace).
        if self.status.journal_records >= self.compact_records or \
                self.status.journal_bytes >= max(self.compact_bytes, self._snapshot_bytes):
            try:
                self.compact()
            except Exception as err:  # the write above is durable: it stays acknowledged
                self.boot()  # the generation on disk decides where the next record goes
                self.status.problem = "; ".join(filter(None, [
                    self.status.problem, f"compaction failed (the journal goes on): {err}"]))
        return result

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

    def _read_only_reason(self) -> str:
        if self.status.stopped_at is not None:
            return (f"this palace stopped at journal record {self.status.stopped_at} when it "
                    "was opened (see its status); it is read-only until `palazzo repair`")
        return ("this palace is open for writing elsewhere (another tab or process); it is "
                "read-only here")

    def _save_keys(self) -> None:
        keys = self.palace.provenance.keyring_to_json()
        if keys == self._keys:
            return
        if self.status.read_only:
            # A key made here could never be stored, so nothing it signed would verify later.
            self.palace.provenance.keyring_from_json(self._keys)
            raise ReadOnly("signing needs a new key, and this read-only copy of the palace "
                           "cannot store one: sign where the palace is open for writing")
        self.space.write(KEYS, json.dumps(keys, sort_keys=True).encode("utf-8"))
        self._keys = keys

    def compact(self) -> Status:
        """Write the palace as snapshot N+1, start journal N+1, delete generation N."""
        if self.status.read_only:
            raise ReadOnly(self._read_only_reason())
        old = self.status.generation
        new = old + 1
        pieces = snapshot.snapshot_parts(self.palace)
        size = sum(len(p) for p in pieces)
        if size > journal.MAX_RECORD:  # what boot reads back: keep generation N
            raise StorageError(f"the palace is {size} bytes as a snapshot, more than "
                               f"the {journal.MAX_RECORD} one may hold; it stays as it is")
        state = _fit_state(self.palace)
        if state is not None:
            self.space.write(EMBEDDER_STATE, state)
        self.space.write(snapshot_name(new), pieces)  # a directory writes piece by piece
        self.space.write(journal_name(new), b"")
        for name in self.space.names():
            m = SNAPSHOT.fullmatch(name)
            if (m and int(m.group(1)) < new) or (name.startswith("journal-") and
                                                  name != journal_name(new)):
                self.space.delete(name)
        self.status.generation = new
        self._snapshot_bytes = size
        self.status.snapshot = True
        self._unsaved_vectors = False
        self.status.journal_records = 0
        self.status.journal_bytes = 0
        self.status.last_saved = float(self.clock())
        return self.status

    def repair(self) -> dict[str, Any]:
        """Set aside the journal records boot could not replay and open the palace for
        writing; return {"rejected": file name, "records": count} (nothing to do: None and 0).

        The records are moved, not deleted: their bytes go to ``rejected-<gen>-<seq>.log``
        (synced) before the journal is cut, so a crash between the two leaves both. Raises
        ReadOnly when another process holds the palace.
        """
        if not self.writer:
            raise ReadOnly(self._read_only_reason() if self.status.stopped_at is None else
                           "another process holds this palace; repair it there")
        stop = self.status.stopped_at
        if stop is None:
            return {"rejected": None, "records": 0}
        gen = self.status.generation
        data = self.space.read(journal_name(gen)) or b""
        found = journal.scan(data)
        cut = found.ends[self.status.replayed - 1] if self.status.replayed else 0
        name = rejected_name(gen, stop)
        self.space.write(name, data[cut:])
        self.space.truncate(journal_name(gen), cut)
        self.boot()
        return {"rejected": name, "records": len(found.records) - self.status.replayed,
                "status": self.status.to_dict()}


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
