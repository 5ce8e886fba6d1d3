"""The palace worker's Python side over storage it reads lazily (as ``workers/palace.worker.js``
does): an older generation's snapshot stays in storage until boot wants it for a fallback
(``wanted`` / ``supply``), a check reads every file first (``unread``), a file storage no
longer holds is forgotten instead of asked for after every call, and a repair's changes
(renames included) come out of ``drain`` for the worker to write."""

import re

from palazzo.hosts import worker
from palazzo.persist.palacestore import COMPACT_RECORDS

SNAPSHOT = re.compile(r"^snapshot-(\d{8})\.pz$")
GENERATION = re.compile(r"^(?:snapshot-(\d{8})\.pz|journal-(\d{8})\.log)$")


class Storage:
    """What workers/storage.js keeps: {(palace, file): bytes}, read as it reads them."""

    def __init__(self) -> None:
        self.files: dict[tuple[str, str], bytes] = {}

    def names(self, palace):
        return sorted(f for p, f in self.files if p == palace)

    def read_all(self, palace, only=None):
        names = self.names(palace)
        snaps = [n for n in names if SNAPSHOT.match(n)]
        newest = int(SNAPSHOT.match(snaps[-1]).group(1)) if snaps else 0

        def older(n):  # a generation before the newest snapshot's: its snapshot and journal
            m = GENERATION.match(n)
            return m is not None and int(m.group(1) or m.group(2)) < newest

        later = {n for n in names if older(n) or n.startswith("damaged-")}
        return {n: (None if only is None and n in later else self.files[(palace, n)])
                for n in names if only is None or n in only}

    def apply(self, changes):
        for op, palace, file, data in changes:
            key = (palace, file)
            if op in ("write", "mark"):
                self.files[key] = bytes(data)
            elif op == "append":
                self.files[key] = self.files.get(key, b"") + bytes(data)
            elif op == "truncate":
                self.files[key] = self.files.get(key, b"")[:data]
            elif op == "delete":
                self.files.pop(key, None)
            elif op == "rename":
                if key in self.files:
                    self.files[(palace, data)] = self.files.pop(key)
            elif op == "remove":
                for k in [k for k in self.files if k[0] == palace]:
                    del self.files[k]


def flush(bridge, storage):
    """The worker's flush: settle what boot wanted, then write the changes."""
    for _ in range(3):
        want = worker.wanted(bridge)
        if not want:
            break
        palace = want[0][0]
        names = [f for p, f in want if p == palace]
        worker.supply(bridge, palace, storage.read_all(palace, names), True, names)
    storage.apply(worker.drain(bridge))


def boot(storage, name="P"):
    bridge = worker.start_engine("memory", [name], True, name, storage.read_all(name))
    flush(bridge, storage)
    return bridge


def call(bridge, storage, name, args=None):
    try:
        return bridge.call(name, args or {})
    finally:
        flush(bridge, storage)


def two_generations():
    """Palace P: drawers a-c, enough more to compact (generation 2), drawers d-e after it."""
    storage = Storage()
    bridge = worker.start_engine("memory", [], True, None, None)
    worker.grant(bridge, "P", True)  # the worker takes the palace's lock first
    call(bridge, storage, "new_palace", {"name": "P"})
    for t in ("apples", "bananas", "cherries"):
        call(bridge, storage, "add_drawer", {"wing": "w", "room": "r", "content": t})
    for i in range(COMPACT_RECORDS - 3):  # past the compaction threshold: generation 2
        call(bridge, storage, "add_drawer", {"wing": "fill", "room": "f",
                                             "content": f"filler {i}"})
    assert bridge.call("storage_status")["status"]["generation"] == 2
    # The compaction let the mirror forget generation 1 (read again only for a fallback).
    mirror = bridge.library.root.spaces["P"]
    assert {"snapshot-00000001.pz", "journal-00000001.log"} <= mirror.deferred
    for t in ("dates", "elderberries"):
        call(bridge, storage, "add_drawer", {"wing": "w", "room": "r", "content": t})
    return storage


def contents(bridge):
    doc = bridge.call("export", {"vectors": "none"})["document"]
    return sorted(d["content"] for d in doc["palace"]["drawers"] if d["wing"] == "w")


ALL = ["apples", "bananas", "cherries", "dates", "elderberries"]


def test_the_older_snapshot_is_read_only_when_boot_falls_back_on_it():
    storage = two_generations()
    first = storage.read_all("P")
    assert first["snapshot-00000001.pz"] is None and first["journal-00000001.log"] is None
    bridge = boot(storage)
    assert contents(bridge) == ALL and not bridge.call("storage_status")["status"]["damaged"]
    # Neither snapshot stays in the mirror: the older one was never read, and the palace took
    # the newest one's buffer as its own (no second copy in the tab); nor does the older
    # generation's journal, which only a fallback reads.
    assert worker.unread(bridge, "P") == ["journal-00000001.log", "snapshot-00000001.pz",
                                          "snapshot-00000002.pz"]

    newest = ("P", "snapshot-00000002.pz")
    data = bytearray(storage.files[newest])
    data[len(data) // 2] ^= 0xFF
    storage.files[newest] = bytes(data)
    bridge = boot(storage)
    st = bridge.call("storage_status")["status"]
    assert st["damaged"] and st["read_only"] and st["fallback"] == 1
    assert contents(bridge) == ALL
    assert worker.wanted(bridge) == [] and worker.read_only_palace(bridge) is None  # lock kept

    out = call(bridge, storage, "repair_palace")["repair"]
    assert out["moved"] == [{"file": "snapshot-00000002.pz", "to": "damaged-snapshot-00000002.pz"}]
    assert ("P", "damaged-snapshot-00000002.pz") in storage.files
    bridge = boot(storage)
    assert not bridge.call("storage_status")["status"]["damaged"] and contents(bridge) == ALL
    call(bridge, storage, "add_drawer", {"wing": "w", "room": "r", "content": "figs"})
    assert contents(boot(storage)) == [*ALL, "figs"]


def test_a_check_reads_every_file_first_and_a_file_gone_from_storage_is_forgotten():
    storage = two_generations()
    bridge = boot(storage)
    unread = worker.unread(bridge, "P")
    worker.supply(bridge, "P", storage.read_all("P", unread), False, unread)
    assert worker.unread(bridge, "P") == []
    files = {f["file"]: f for f in bridge.call("check_palace")["check"]["files"]}
    assert files["snapshot-00000001.pz"]["role"] == "previous"
    assert files["snapshot-00000001.pz"]["ok"]

    # Left unread, then removed from storage (another tab's compaction): asked for once,
    # found gone, and forgotten, so the next call does not ask again.
    bridge = boot(storage)
    del storage.files[("P", "snapshot-00000001.pz")]
    unread = worker.unread(bridge, "P")
    worker.supply(bridge, "P", storage.read_all("P", unread), False, unread)
    assert worker.unread(bridge, "P") == [] and worker.wanted(bridge) == []
    assert "snapshot-00000001.pz" not in bridge.library.root.spaces["P"].names()


class Failing:
    """An embedder that gives up in the middle of an operation (after the palace changed)."""

    name, dim, fingerprint = "failing", 16, "failing-16"

    def embed(self, texts):
        from palazzo.errors import PalazzoError

        raise PalazzoError("the embedder gave up")


def test_an_operation_failing_part_way_reboots_from_storage_and_the_palace_writes_on():
    storage = two_generations()
    bridge = boot(storage)
    host = bridge.palace.embedder
    bridge.palace.embedder = Failing()
    reply = bridge.handle({"id": 1, "name": "add_drawer",
                           "args": {"wing": "w", "room": "r", "content": "grapes"}})
    assert reply["ok"] is False
    flush(bridge, storage)  # the worker's flush after the call: the snapshot it needs, read
    st = bridge.call("storage_status")["status"]
    assert not st["damaged"] and not st["read_only"] and contents(bridge) == ALL
    bridge.palace.embedder = host
    call(bridge, storage, "add_drawer", {"wing": "w", "room": "r", "content": "grapes"})
    assert contents(boot(storage)) == [*ALL, "grapes"]
