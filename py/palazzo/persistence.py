"""Persistence that loses nothing: a snapshot plus an append-only journal of operations.

A palace's space holds generation-numbered files::

    snapshot-00000007.pz   the palace JSON (vectors float32) in one checksummed record
    journal-00000007.log   mutating operations run since that snapshot (:mod:`palazzo.journal`)
    keys.json              the provenance signing keys (local only, never exported)

Boot takes the newest snapshot that reads back whole (a torn or corrupt one is skipped; no
snapshot means an empty palace), replays its journal with each record's clock value, and drops
a torn or corrupt tail, saying so in :attr:`PalaceStore.status`. A mutating operation is
acknowledged (its result returned) only after its record was appended and synced; if that
write fails the store reloads from disk, so memory never holds what disk lost.

Compaction writes snapshot N+1 whole, then an empty journal N+1, then deletes generation N.
A crash between any two steps leaves a bootable state: snapshot N+1 torn means generation N
is still complete; journal N+1 missing means it is empty. No rename is needed, so OPFS and
IndexedDB spaces can do the same with plain writes.

Replay runs operations again, so it yields the same palace only if operations are
deterministic given (args, clock): the palace's clock is frozen at the recorded value for
each call; swarms are seeded; signing keys are not re-made on replay but loaded from
``keys.json`` afterwards. Embeddings come from whichever embedder the host attached before
boot; drawers replayed without one are embedded later by ``reindex``.
"""

from __future__ import annotations

import copy
import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from palazzo import journal
from palazzo.errors import PalazzoError, ValidationError
from palazzo.journal import Record
from palazzo.ops import REGISTRY, Registry
from palazzo.palace import Palace
from palazzo.palacefile import export_palace, read_palace
from palazzo.storage import Space, StorageError

SNAPSHOT = re.compile(r"snapshot-(\d{8})\.pz")
KEYS = "keys.json"
COMPACT_RECORDS = 500
COMPACT_BYTES = 32 << 20
# Operations whose durable record is a new snapshot rather than a journal record: an import
# carries a whole palace, and reindex only adds vectors (derived data that replay without the
# embedder could not remake).
SNAPSHOT_OPS = frozenset({"import", "reindex"})


class ReadOnly(PalazzoError):
    """The palace is open for writing elsewhere (another tab or process); this copy reads."""

    code = "read_only"


def snapshot_name(gen: int) -> str:
    return f"snapshot-{gen:08d}.pz"


def journal_name(gen: int) -> str:
    return f"journal-{gen:08d}.log"


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

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able status (for the status line and the CLI)."""
        return {"generation": self.generation, "snapshot": self.snapshot,
                "replayed": self.replayed, "dropped_bytes": self.dropped_bytes,
                "problem": self.problem, "skipped_snapshots": list(self.skipped_snapshots),
                "journal_records": self.journal_records, "journal_bytes": self.journal_bytes,
                "last_saved": self.last_saved, "read_only": self.read_only}


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
    """One open palace bound to its space: boot, journaled calls, compaction."""

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
        self.status = Status(read_only=read_only)
        self.seq = 0
        self._keys: Any = None
        fresh = not space.names()
        self.boot()
        if fresh and not read_only:
            self.compact()  # a new palace's creation time and settings are on disk at once

    # -- boot ---------------------------------------------------------------------------------
    def _load_snapshot(self, gen: int) -> Palace | None:
        data = self.space.read(snapshot_name(gen))
        if data is None:
            return None
        found = journal.scan(data)
        if len(found.records) != 1 or found.problem or found.records[0].op != "snapshot":
            return None
        try:
            return read_palace(found.records[0].args, self.make_palace)
        except PalazzoError:
            return None

    def boot(self) -> Status:
        """Load the newest whole snapshot and replay its journal; return the status.

        Never raises for damaged files: a bad snapshot is skipped (named in the status), a bad
        journal tail is cut off (its size and the reason are in the status). Raises
        StorageError only when the space itself cannot be read.
        """
        read_only = self.status.read_only
        self.status = Status(read_only=read_only)
        gens = sorted((int(m.group(1)) for n in self.space.names()
                       if (m := SNAPSHOT.fullmatch(n))), reverse=True)
        palace, gen = None, 0
        for g in gens:
            palace = self._load_snapshot(g)
            if palace is not None:
                gen = g
                break
            self.status.skipped_snapshots.append(snapshot_name(g))
        if palace is None:  # never compacted (or every snapshot is damaged): generation 0
            palace = self.make_palace()
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
                with _FrozenClock(palace, record.clock):
                    self.registry.call(palace, record.op, copy.deepcopy(record.args))
            except PalazzoError as err:
                problem = f"record {record.seq} ({record.op}) failed on replay: {err}"
                break
            replayed += 1
        good = found.ends[replayed - 1] if replayed else 0
        self.seq = found.records[replayed - 1].seq if replayed else 0
        if good < len(data) and not read_only:
            self.space.truncate(journal_name(gen), good)
        self.status.replayed = replayed
        self.status.dropped_bytes = len(data) - good
        if problem:
            self.status.problem = "; ".join(filter(None, [self.status.problem, problem]))
        self.status.journal_records = replayed
        self.status.journal_bytes = good
        _load_keyring(palace, self.space.read(KEYS))
        self._keys = palace.provenance.keyring_to_json()
        self.palace = palace
        return self.status

    # -- calls --------------------------------------------------------------------------------
    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation; a mutating one is journaled and synced before this returns.

        Returns the operation's result. Raises what the operation raises (nothing changed,
        nothing written), ReadOnly for a write on a read-only store, StorageError when the
        record could not be written (the store then reloads from disk).
        """
        op = self.registry.get(name)
        args = {} if args is None else args
        if not op.mutates:
            result = self.registry.call(self.palace, name, args)
            self._save_keys()
            return result
        if self.status.read_only:
            raise ReadOnly("this palace is open for writing elsewhere (another tab or "
                           "process); it is read-only here")
        if name in SNAPSHOT_OPS:
            with _FrozenClock(self.palace, float(self.clock())):
                result = self.registry.call(self.palace, name, args)
            # Vectors are derived data: a partial reindex (a host embedding in steps) stays in
            # memory and is saved with the step that finishes; after a crash the missing
            # ones are embedded again.
            if name == "reindex" and (not result.get("embedded") or result.get("remaining")):
                return result
            try:
                self.compact()
            except Exception as err:
                self.boot()
                if isinstance(err, StorageError):
                    raise
                raise StorageError(f"the change was not saved: {err}") from None
            return result
        record = Record(self.seq + 1, name, copy.deepcopy(args), float(self.clock()))
        try:
            data = journal.encode(record)
        except (TypeError, ValueError) as err:
            raise ValidationError(f"arguments of {name!r} are not JSON: {err}") from None
        with _FrozenClock(self.palace, record.clock):
            result = self.registry.call(self.palace, name, args)
        try:
            self.space.append(journal_name(self.status.generation), data)
            self._save_keys()
        except Exception as err:
            self.boot()  # memory must not hold what the disk does not
            if isinstance(err, StorageError):
                raise
            raise StorageError(f"the change was not saved: {err}") from None
        self.seq = record.seq
        self.status.journal_records += 1
        self.status.journal_bytes += len(data)
        self.status.last_saved = record.clock
        if self.status.journal_records >= self.compact_records or \
                self.status.journal_bytes >= self.compact_bytes:
            self.compact()
        return result

    def _save_keys(self) -> None:
        keys = self.palace.provenance.keyring_to_json()
        if keys != self._keys and not self.status.read_only:
            self.space.write(KEYS, json.dumps(keys, sort_keys=True).encode("utf-8"))
            self._keys = keys

    def compact(self) -> Status:
        """Write the palace as snapshot N+1, start journal N+1, delete generation N."""
        if self.status.read_only:
            raise ReadOnly("a read-only palace cannot be compacted")
        old = self.status.generation
        new = old + 1
        doc = export_palace(self.palace, vectors="float32", exported_at=float(self.clock()))
        self.space.write(snapshot_name(new), journal.encode(Record(0, "snapshot", doc, 0.0)))
        self.space.write(journal_name(new), b"")
        for name in self.space.names():
            m = SNAPSHOT.fullmatch(name)
            if (m and int(m.group(1)) < new) or (name.startswith("journal-") and
                                                  name != journal_name(new)):
                self.space.delete(name)
        self.status.generation = new
        self.status.snapshot = True
        self.status.journal_records = 0
        self.status.journal_bytes = 0
        self.status.last_saved = float(self.clock())
        return self.status
