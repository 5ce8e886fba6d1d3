"""A palace directory shared by processes that all write: each takes the writer lock for a
write alone, follows what the others acknowledged, and gives it back.

The processes are real: ``python -m palazzo.hosts.mcp.server`` spoken to in JSON-RPC lines over
stdio, and ``python -m palazzo.hosts.cli`` commands, on one palace directory; two
:class:`PalaceDirectory` objects in this process stand for two more (each has its own lock
file descriptor, and ``flock`` locks exclude each other across descriptors).
"""

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import palazzo
from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ReadOnly, StorageError
from palazzo.formats.palacefile import export_palace
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import DirectoryRoot, DirectorySpace

pytestmark = pytest.mark.cpython_only

# The child processes run the same engine as this one.
ENV = {"PYTHONPATH": str(Path(palazzo.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}


def make(**kw):
    return Palace(embedder=HashEmbedder(), **kw)


class Server:
    """``python -m palazzo.hosts.mcp.server`` on a palace, spoken to one JSON-RPC line at a time."""

    def __init__(self, palace: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "palazzo.hosts.mcp.server", "--palace", str(palace),
             "--embedder", "hash"], env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
        self.next_id = 0
        self.instructions = self.request("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"}})["instructions"]

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                                          "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        assert reply["id"] == self.next_id and "error" not in reply, reply
        return reply["result"]

    def tool(self, name: str, args: dict | None = None) -> tuple[bool, str]:
        """Return (ok, text) of a tools/call."""
        out = self.request("tools/call", {"name": name, "arguments": args or {}})
        return not out["isError"], out["content"][0]["text"]

    def close(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0


def cli(palace: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "palazzo.hosts.cli", *argv,
                           "--palace", str(palace),
                           "--embedder", "hash"], env=ENV, capture_output=True, text=True,
                          timeout=120)


def drawers_on_disk(palace: Path) -> list[str]:
    store = PalaceStore(DirectorySpace(palace), make, read_only=True)
    s = store.palace.drawers
    return sorted(s.content[r] for r in s.live_rows())


@pytest.fixture
def palace(tmp_path):
    """A palace with one drawer, made by a process that is done with it."""
    path = tmp_path / "atrium"
    with PalaceDirectory(path, make) as first:
        first.call("add_drawer", {"wing": "w", "room": "r", "content": "by the first writer"})
    return path


def add(d, content):
    return d.call("add_drawer", {"wing": "w", "room": "r", "content": content})


def test_an_mcp_server_and_the_command_line_both_write_and_see_each_other(palace):
    server = Server(palace)
    try:
        assert "read-only" not in server.instructions
        ok, text = server.tool("add_drawer", {"wing": "w", "room": "r",
                                              "content": "by the server"})
        assert ok, text
        done = cli(palace, "add", "--wing", "w", "--room", "r", "by the command line")
        assert done.returncode == 0, done.stderr
        assert done.stdout.endswith("added\n")
        ok, text = server.tool("search", {"query": "command line"})  # follows that write
        assert ok and "by the command line" in text
        ok, text = server.tool("add_drawer", {"wing": "w", "room": "r",
                                              "content": "server again"})
        assert ok, text
        ok, text = server.tool("palace_status")
        assert ok and json.loads(text)["drawers"] == 4
    finally:
        server.close()
    assert drawers_on_disk(palace) == sorted(["by the first writer", "by the server",
                                              "by the command line", "server again"])


def test_two_servers_and_the_command_line_interleave_writes_and_lose_none(palace):
    servers = [Server(palace), Server(palace)]
    written = ["by the first writer"]
    try:
        for i in range(3):
            for k, server in enumerate(servers):
                text = f"server {k} note {i}"
                ok, out = server.tool("add_drawer", {"wing": "w", "room": "r",
                                                     "content": text})
                assert ok, out
                written.append(text)
            done = cli(palace, "add", "--wing", "w", "--room", "r", f"command line {i}")
            assert done.returncode == 0, done.stderr
            written.append(f"command line {i}")
        for server in servers:  # each reads every other's writes
            ok, text = server.tool("palace_status")
            assert ok and json.loads(text)["drawers"] == len(written)
    finally:
        for server in servers:
            server.close()
    assert drawers_on_disk(palace) == sorted(written)  # nothing lost, nothing twice


def test_a_write_waits_for_another_processes_write_and_then_goes_on_top(palace):
    holder = PalaceDirectory(palace, make)
    with holder.hold():  # another process mid-write, for a second
        started = time.monotonic()
        child = subprocess.Popen(
            [sys.executable, "-m", "palazzo.hosts.cli", "add", "--wing", "w", "--room", "r",
             "waited", "--palace", str(palace), "--embedder", "hash"], env=ENV,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(1.0)
        assert child.poll() is None  # it waits for the lock...
        add(holder, "held")
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err  # ...and writes once it is given back
    assert time.monotonic() - started >= 1.0
    assert drawers_on_disk(palace) == ["by the first writer", "held", "waited"]
    holder.close()


def test_a_write_that_waits_too_long_is_refused_and_changes_nothing(palace):
    holder = PalaceDirectory(palace, make)
    hasty = PalaceDirectory(palace, make, lock_wait=0.2)
    try:
        with holder.hold():
            with pytest.raises(ReadOnly, match="more than 0.2 s"):
                add(hasty, "refused")
            assert hasty.call("palace_status")["drawers"] == 1  # reads never wait
        add(hasty, "later")
    finally:
        holder.close()
        hasty.close()
    assert drawers_on_disk(palace) == ["by the first writer", "later"]


def test_a_read_sees_every_write_acknowledged_before_it_and_follows_by_the_tail(palace):
    a, b = PalaceDirectory(palace, make), PalaceDirectory(palace, make)
    try:
        for i in range(5):
            add(a, f"a{i}")
            assert b.call("palace_status")["drawers"] == 2 + 2 * i  # a's write, at once
            add(b, f"b{i}")
            assert a.call("palace_status")["drawers"] == 3 + 2 * i
        add(a, "one more")
        assert b.store.follow() == "tail" and b.store.follow() == "none"
        assert b.store.seq == a.store.seq and b.status.journal_bytes == a.status.journal_bytes
        add(a, "before a compaction")
        a.compact()  # a new generation: the rest of the old journal and the new one's tail
        add(a, "after it")
        assert b.store.follow() == "tail" and b.status.generation == a.status.generation
        assert (b.store.seq, b.status.journal_bytes, b.status.journal_records) == \
            (a.store.seq, a.status.journal_bytes, a.status.journal_records)
        did = add(b, "after the compaction")["drawer_id"]
        assert a.call("get_drawer", {"drawer_id": did})["drawer"]["content"] == \
            "after the compaction"
        a.compact()
        a.compact()  # two generations on: the journal b would need is gone, so it boots
        assert b.store.follow() == "boot" and b.status.generation == a.status.generation
        fresh = PalaceStore(DirectorySpace(palace), make, read_only=True)
        assert export_palace(b.store.palace, exported_at=0.0) == \
            export_palace(fresh.palace, exported_at=0.0)  # memory is what the files hold
    finally:
        a.close()
        b.close()
    assert len(drawers_on_disk(palace)) == 15


def test_another_processes_import_is_followed_by_a_boot(palace):
    a, b = PalaceDirectory(palace, make), PalaceDirectory(palace, make)
    source = Palace(clock=lambda: 0.0)
    source.add_drawer("w", "imported", "a drawer from a palace file")
    try:
        a.call("import", {"document": export_palace(source, vectors=None, exported_at=0.0),
                          "reindex": False})
        assert b.store.follow() == "boot"  # an import's record is its snapshot
        assert b.call("palace_status")["drawers"] == a.call("palace_status")["drawers"]
        assert b.call("search", {"query": "palace file"})["results"][0]["content"] == \
            "a drawer from a palace file"
    finally:
        a.close()
        b.close()


def test_a_process_gives_the_lock_back_after_each_reindex_step_with_its_vectors_saved(
        tmp_path):
    palace = tmp_path / "atrium"
    source = Palace(clock=lambda: 0.0)
    for i in range(3):
        source.add_drawer("w", "r", f"violin lesson number {i}")
    with PalaceDirectory(palace, make) as first:
        first.call("import", {"document": export_palace(source, vectors=None,
                                                        exported_at=0.0), "reindex": False})
    root = DirectoryRoot(tmp_path)
    with PalaceDirectory(palace, make) as d:
        step = d.call("reindex", {"limit": 1})
        assert (step["embedded"], step["remaining"]) == (1, 2)
        assert root.lock("atrium")  # free between calls (an MCP server waits for its client)
        store = PalaceStore(DirectorySpace(palace), make, read_only=True)
        assert call(store.palace, "palace_status")["embedded"] == 1  # saved before it went
        root.unlock("atrium")
        step = d.call("reindex", {"limit": 5})
        assert (step["embedded"], step["remaining"]) == (2, 0)
    store = PalaceStore(DirectorySpace(palace), make, read_only=True)
    assert call(store.palace, "palace_status")["embedded"] == 3


def test_a_process_that_saw_a_torn_tail_cuts_it_before_its_own_write(palace):
    journal = next(palace.glob("journal-*.log"))
    d = PalaceDirectory(palace, make)
    with open(journal, "ab") as f:
        f.write(b"PZ\x00\x00\x07")  # a record torn by a crash: replay stops before it
    try:
        assert d.call("palace_status")["drawers"] == 1  # a reader leaves it (in progress?)
        add(d, "by the next writer")  # a writer knows better: a crash's, cut
    finally:
        d.close()
    assert drawers_on_disk(palace) == ["by the first writer", "by the next writer"]
    again = PalaceStore(DirectorySpace(palace), make, read_only=True)
    assert not again.status.dropped_bytes and not again.status.problem


def test_the_first_write_narrows_palace_files_an_older_version_left_readable(tmp_path):
    palace = tmp_path / "atrium"
    first = PalaceDirectory(palace, make)
    first.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = first.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    first.call("slice_context", {"anchor": turn})
    first.close()
    mine = [p for p in palace.iterdir() if p.name != ".lock"]
    assert {p.name for p in mine} >= {"keys.json"}
    for p in [*mine, palace / ".lock"]:
        os.chmod(p, 0o644)  # as an older version made them
    (palace / "notes.txt").write_text("the user's own file")
    os.chmod(palace / "notes.txt", 0o644)
    with PalaceDirectory(palace, make) as d:
        d.call("palace_status")  # a read changes no file
        assert stat.S_IMODE((palace / "keys.json").stat().st_mode) == 0o644
        add(d, "a write")
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in palace.iterdir()}
    assert modes.pop("notes.txt") == 0o644  # not a palace file: left alone
    assert modes == dict.fromkeys(modes, 0o600)


def test_signing_keys_one_process_stored_are_the_others_too(tmp_path):
    palace = tmp_path / "atrium"
    a, b = PalaceDirectory(palace, make), PalaceDirectory(palace, make)
    try:
        a.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
        turn = a.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
        bundle = a.call("slice_context", {"anchor": turn})["bundle"]  # a stores the first key
        assert (palace / "keys.json").exists()
        assert b.call("verify_token", {"bundle": bundle})["valid"] is True
        again = b.call("slice_context", {"anchor": turn})["bundle"]  # signed with that key
        assert a.call("verify_token", {"bundle": again})["valid"] is True
    finally:
        a.close()
        b.close()
    with PalaceDirectory(palace, make) as c:
        assert c.call("verify_token", {"bundle": bundle})["valid"] is True
        assert c.call("verify_token", {"bundle": again})["valid"] is True


def test_a_hold_gives_the_lock_back_when_its_block_raises(palace):
    d = PalaceDirectory(palace, make)
    with pytest.raises(RuntimeError, match="mid-block"), d.hold():
        add(d, "before the error")
        raise RuntimeError("mid-block")
    assert not d.writer
    root = DirectoryRoot(palace.parent)
    assert root.lock("atrium")  # free again
    root.unlock("atrium")
    d.close()
    assert drawers_on_disk(palace) == ["before the error", "by the first writer"]


def test_a_directory_that_fails_to_open_gives_the_lock_back(tmp_path):
    def broken(**kw):
        raise RuntimeError("no palace today")

    with pytest.raises(RuntimeError, match="no palace today"):
        PalaceDirectory(tmp_path / "atrium", broken)
    with PalaceDirectory(tmp_path / "atrium", make) as d:
        add(d, "made after all")
        assert d.call("palace_status")["drawers"] == 1


def test_close_is_idempotent_and_a_closed_directory_refuses_calls(palace):
    d = PalaceDirectory(palace, make)
    holder = PalaceDirectory(palace, make)
    with holder.hold():
        d.close()
        d.close()  # again: nothing happens, and it does not release another's lock
        with pytest.raises(StorageError, match="was closed"):
            add(d, "unguarded")
        assert holder.writer
        assert not DirectoryRoot(palace.parent).lock("atrium")
    holder.close()
    assert drawers_on_disk(palace) == ["by the first writer"]


def test_compact_writes_a_snapshot_and_gives_the_lock_back(palace):
    with PalaceDirectory(palace, make) as d:
        add(d, "kept")
        gen = d.status.generation
        d.compact()
        assert d.status.generation == gen + 1 and d.status.journal_bytes == 0
        assert not d.writer
    with PalaceDirectory(palace, make) as again:
        assert again.call("palace_status")["drawers"] == 2
        assert again.status.replayed == 0


def test_an_import_that_journaled_much_ends_with_a_snapshot(tmp_path):
    from palazzo.bench.exportgen import write_export

    export = tmp_path / "conversations.json"
    write_export(export, 1500, seed=1)
    out = cli(tmp_path / "p", "import-chats", str(export))
    assert out.returncode == 0, out.stderr
    files = sorted(p.name for p in (tmp_path / "p").iterdir() if not p.name.startswith("."))
    journal = tmp_path.joinpath("p", [f for f in files if f.startswith("journal-")][-1])
    assert journal.stat().st_size == 0  # all in the snapshot: the next open replays nothing


def test_writes_interleave_with_a_command_line_import_batch_by_batch(tmp_path):
    from palazzo.bench.exportgen import write_export

    export = tmp_path / "conversations.json"
    write_export(export, 3000, seed=2)
    palace = tmp_path / "p"
    with PalaceDirectory(palace, make) as d:
        add(d, "before the import")
    child = subprocess.Popen(
        [sys.executable, "-m", "palazzo.hosts.cli", "import-chats", str(export),
         "--palace", str(palace), "--embedder", "hash"], env=ENV,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    mine, seen = [], set()
    with PalaceDirectory(palace, make, lock_wait=60) as d:
        while child.poll() is None or not mine:
            mine.append(f"written during the import {len(mine)}")
            add(d, mine[-1])  # never refused: the import holds the lock a batch at a time
            seen.add(d.call("palace_status")["drawers"])
            time.sleep(0.05)
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        status = d.call("palace_status")
    assert len(seen) > 2  # the import's batches landed between these writes
    alone = tmp_path / "alone"  # the same import with nobody else writing
    assert cli(alone, "import-chats", str(export)).returncode == 0
    on_disk = drawers_on_disk(palace)
    assert len(on_disk) == status["drawers"]
    assert on_disk == sorted([*drawers_on_disk(alone), "before the import", *mine])
    assert status["embedded"] == status["drawers"]  # and the import's vectors came after


def test_a_process_that_saw_damage_follows_another_processes_repair(palace):
    with PalaceDirectory(palace, make) as d:
        add(d, "second")
        add(d, "third")
    journal = max(palace.glob("journal-*.log"))
    data = bytearray(journal.read_bytes())
    data[-3] ^= 0xFF  # the last record's checksum fails: damage, not a crash
    journal.write_bytes(bytes(data))
    seen = PalaceDirectory(palace, make)
    try:
        assert seen.status.damaged and seen.status.read_only
        with pytest.raises(ReadOnly, match="damaged"):
            add(seen, "refused")
        assert seen.store.follow() == "none"  # nothing changed on disk: no boot each call
        with PalaceDirectory(palace, make) as fixer:
            assert fixer.repair()["repaired"]
        assert seen.call("palace_status")["drawers"] == 2  # it read the repaired palace
        assert not seen.status.read_only
        add(seen, "after the repair")
    finally:
        seen.close()
    assert drawers_on_disk(palace) == ["after the repair", "by the first writer", "second"]


def test_a_new_generation_that_holds_more_than_the_old_journal_shows_is_followed_by_a_boot(
        palace):
    a, b = PalaceDirectory(palace, make), PalaceDirectory(palace, make)
    try:
        a.call("palace_status")
        old = palace / f"journal-{a.status.generation:08d}.log"
        at = old.stat().st_size
        add(b, "one")
        add(b, "two")
        b.compact()
        os.truncate(old, at)  # the old journal no longer shows what the new snapshot holds
        assert a.store.follow() == "boot"  # not a tail that would miss "one" and "two"
        assert a.call("palace_status")["drawers"] == 3
    finally:
        a.close()
        b.close()


def _deferred(d, records=3):
    """Make ``d`` compact only when asked, after ``records`` journal records (as the server)."""
    d.store.compact_inline = False
    d.store.compact_records = records


def test_a_compaction_aside_writes_the_snapshot_in_a_child_and_keeps_every_write(palace):
    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        assert d.compact_aside() is False  # not due: nothing done
        for i in range(4):
            add(d, f"note {i}")
        gen = d.status.generation
        assert d.store.compact_due and d.status.journal_records == 5  # none compacted
        assert d.compact_aside() is True
        assert d.status.generation == gen + 1 and d.status.journal_bytes == 0
        assert not d.writer and not d.store.compact_due
        add(d, "after")
    with PalaceDirectory(palace, make) as again:
        assert again.status.replayed == 1 and again.status.generation == gen + 1
    assert drawers_on_disk(palace) == sorted(
        ["by the first writer", "after", *(f"note {i}" for i in range(4))])


def _slow_child(d, seconds=2.0):
    """Make the compaction's child of ``d`` take ``seconds`` longer (a slow disk)."""
    write = d.store.write_snapshot
    d.store.write_snapshot = lambda g: (time.sleep(seconds), write(g))[1]


def test_reads_and_writes_go_on_while_the_child_writes_and_the_new_journal_keeps_them(palace):
    import threading

    follower = PalaceDirectory(palace, make)
    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        for i in range(4):
            add(d, f"note {i}")
        assert follower.call("palace_status")["drawers"] == 5
        gen = d.status.generation
        _slow_child(d)
        aside = threading.Thread(target=d.compact_aside)
        aside.start()
        time.sleep(0.5)
        assert aside.is_alive()  # the child is writing...
        t0 = time.monotonic()
        hits = d.call("search", {"query": "note 2", "limit": 1})["results"]
        assert hits and hits[0]["content"] == "note 2"
        for i in range(3):  # ...and this process reads and writes meanwhile
            add(d, f"meanwhile {i}")
        assert time.monotonic() - t0 < 1.0 and aside.is_alive()
        beside = PalaceStore(DirectorySpace(palace), make, read_only=True)  # `palazzo check`
        assert beside.check()["ok"] and beside.palace.counts()["drawers"] == 8
        other = subprocess.Popen(  # another process's write waits for the lock
            [sys.executable, "-m", "palazzo.hosts.cli", "add", "--wing", "w", "--room", "r",
             "from elsewhere", "--palace", str(palace), "--embedder", "hash"], env=ENV,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        assert other.poll() is None and aside.is_alive()
        aside.join(timeout=60)
        out, err = other.communicate(timeout=120)
        assert other.returncode == 0, err
        d.refresh()
        assert d.status.generation == gen + 1
        assert d.status.journal_records == 4  # the three written meanwhile, and the other's
        boots = follower.store.boots
        assert follower.call("palace_status")["drawers"] == 9
        assert follower.store.boots == boots  # followed by the tail, the repeats skipped
        report = d.store.check()
        assert report["ok"], [f for f in report["files"] if not f["ok"]]
    follower.close()
    expected = sorted(["by the first writer", "from elsewhere", *(f"note {i}" for i in range(4)),
                       *(f"meanwhile {i}" for i in range(3))])
    with PalaceDirectory(palace, make) as again:
        assert again.status.replayed == 4 and not again.status.damage
    assert drawers_on_disk(palace) == expected
    # Without the new snapshot, the one before it and both journals give the same palace.
    (palace / f"snapshot-{gen + 1:08d}.pz").unlink()
    store = PalaceStore(DirectorySpace(palace), make, read_only=True)
    assert sorted(store.palace.drawers.content[r] for r in store.palace.drawers.live_rows()
                  ) == expected
    assert [f["what"] for f in store.status.damage] == ["missing (its journal is here)"]


KILLED = """
import os, signal, sys, threading, time
from pathlib import Path
from palazzo.embed.hashing import HashEmbedder
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory
d = PalaceDirectory(Path(sys.argv[1]), lambda **kw: Palace(embedder=HashEmbedder(), **kw))
d.store.compact_inline = False
d.store.compact_records = 3
for i in range(4):
    d.call("add_drawer", {"wing": "w", "room": "r", "content": f"note {i}"})
write = d.store.write_snapshot
d.store.write_snapshot = lambda g: (time.sleep(1.5), write(g))[1]
threading.Thread(target=d.compact_aside).start()
time.sleep(0.3)
for i in range(3):
    d.call("add_drawer", {"wing": "w", "room": "r", "content": f"meanwhile {i}"})
    print(f"meanwhile {i}", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_process_killed_while_its_child_writes_loses_nothing(palace):
    proc = subprocess.run([sys.executable, "-c", KILLED, str(palace)], env=ENV,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == -9 and proc.stdout.split("\n")[:3] == [
        f"meanwhile {i}" for i in range(3)]
    # The child still holds the lock it inherited; it finishes its snapshot and goes.
    with PalaceDirectory(palace, make) as d:
        add(d, "after")  # (waits for the lock)
        assert not d.status.damage and not d.status.read_only
        assert "compaction a crash cut short was dropped" in d.status.problem  # (said)
        assert d.status.generation == 1  # the child's snapshot is not the palace's...
        d.compact()  # ...and the next compaction writes over it
    expected = sorted(["by the first writer", "after", *(f"note {i}" for i in range(4)),
                       *(f"meanwhile {i}" for i in range(3))])
    assert drawers_on_disk(palace) == expected
    with PalaceDirectory(palace, make) as again:
        assert again.status.generation == 2 and not again.status.problem


def test_a_child_that_fails_leaves_the_compaction_to_the_parent(palace):
    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        for i in range(4):
            add(d, f"note {i}")
        gen, parent = d.status.generation, os.getpid()
        write = d.store.write_snapshot

        def failing_in_child(g):
            if os.getpid() != parent:
                raise OSError("no space left on device")
            return write(g)

        d.store.write_snapshot = failing_in_child
        assert d.compact_aside() is True  # done inline after the child failed
        assert d.status.generation == gen + 1 and not d.status.problem
        assert not d.writer
    assert len(drawers_on_disk(palace)) == 5


def test_an_unadopted_snapshot_is_dropped_by_what_the_journal_holds_not_by_the_tip(palace):
    from palazzo.persist.palacestore import TIP

    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        with d.hold():
            gen = d.status.generation + 1
            d.store.write_snapshot(gen)  # what a child leaves: snapshot N+1, not adopted
            tip = (palace / TIP).read_bytes()
            for i in range(3):
                add(d, f"acknowledged {i}")  # journal N, synced
            (palace / TIP).write_bytes(tip)  # a power loss: the tip (never synced) lags
    expected = sorted(["by the first writer", *(f"acknowledged {i}" for i in range(3))])
    assert drawers_on_disk(palace) == expected
    with PalaceDirectory(palace, make) as d:
        add(d, "next")
        assert d.status.generation == gen - 1 and not d.status.damage
        assert d.store.check()["ok"]
    assert drawers_on_disk(palace) == sorted([*expected, "next"])


def _aside_started(d):
    """Start a compaction aside of ``d`` (four notes written, its child slowed by a second)
    in a thread, and return the thread once the child is at work."""
    import threading

    _deferred(d)
    for i in range(4):
        add(d, f"note {i}")
    _slow_child(d, 1.0)
    aside = threading.Thread(target=d.compact_aside)
    aside.start()
    time.sleep(0.3)
    return aside


def test_a_journal_past_the_next_snapshot_must_go_on_in_the_next_journal(palace):
    with PalaceDirectory(palace, make) as d:
        aside = _aside_started(d)
        add(d, "meanwhile")
        aside.join(timeout=60)
        gen = d.status.generation
        assert d.store.check()["ok"]
    # The new journal's copy of the record written meanwhile says something else (a record
    # that verifies on its own): the palace read from it is not what was acknowledged.
    from palazzo.persist import journal

    new = palace / f"journal-{gen:08d}.log"
    found = journal.scan(new.read_bytes())
    first = found.records[0]
    args = {**first.args, "content": "MEANWHILE"}
    forged = journal.Record(first.seq, first.op, args, first.clock, first.effects)
    new.write_bytes(journal.encode(forged) + new.read_bytes()[found.ends[0]:])
    store = PalaceStore(DirectorySpace(palace), make, read_only=True)
    report = store.check()
    assert not report["ok"]
    for g in (gen - 1, gen):
        entry = next(f for f in report["files"] if f["file"] == f"journal-{g:08d}.log")
        assert "should begin with the same records" in entry["found"]


def test_compact_in_one_thread_and_a_compaction_aside_in_another_do_not_deadlock(palace):
    import threading

    with PalaceDirectory(palace, make) as d:
        aside = _aside_started(d)
        other = threading.Thread(target=d.compact)
        other.start()
        aside.join(timeout=30)
        other.join(timeout=30)
        assert not aside.is_alive() and not other.is_alive()
        assert d.call("palace_status")["drawers"] == 5


def test_a_failure_after_the_new_journal_was_written_keeps_the_new_generation(palace):
    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        for i in range(4):
            add(d, f"note {i}")
        gen = d.status.generation + 1
        release = d.store.space.release

        def failing(name):  # (the last step of adopting: after the journal and the tip)
            raise StorageError("the disk went away")

        d.store.space.release = failing
        assert d.compact_aside() is True
        d.store.space.release = release
        assert "compaction failed" in (d.status.problem or "")
    with PalaceDirectory(palace, make) as again:
        assert again.status.generation == gen and not again.status.damage
    assert len(drawers_on_disk(palace)) == 5


def test_a_reader_on_a_generation_whose_records_it_lacks_reads_again(palace):
    """A reader that took a child's snapshot (seq S) as its palace, then a tip of that
    generation with more records and an empty journal (an inline compaction after the aside
    was not adopted): it boots, it does not stay behind."""
    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        with d.hold():
            gen = d.status.generation + 1
            d.store.write_snapshot(gen)
            reader = PalaceDirectory(palace, make)
            assert reader.status.generation == gen  # (nothing after S yet: it is whole)
            for i in range(3):
                add(d, f"after {i}")
            d.store.compact()  # inline: snapshot gen again, at the newest record
        assert reader.call("palace_status")["drawers"] == 4
        reader.close()


def test_a_reader_opening_during_a_compaction_aside_is_told_of_no_crash(palace, tmp_path):
    """While the child's snapshot waits to be adopted, a process that opens the palace
    reads past it (journal N holds more) without calling it a crash's; the same files with
    nobody holding the lock are one (the parent died before adopting it)."""
    import threading

    marker = tmp_path / "written"
    with PalaceDirectory(palace, make) as d:
        _deferred(d)
        for i in range(4):
            add(d, f"note {i}")
        write = d.store.write_snapshot
        d.store.write_snapshot = lambda g: (write(g), marker.touch(), time.sleep(2.0))[0]
        aside = threading.Thread(target=d.compact_aside)
        aside.start()
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        add(d, "meanwhile")  # journal N runs past the snapshot the child wrote
        with PalaceDirectory(palace, make) as reader:
            assert reader.status.problem is None and not reader.status.damage
            found = reader.call("search", {"query": "meanwhile"})["results"]
            assert found[0]["content"] == "meanwhile"
        aside.join(timeout=60)
        assert d.store.check()["ok"]
        d.store.write_snapshot = write
        with d.hold():  # what a parent killed before adopting leaves
            d.store.write_snapshot(d.status.generation + 1)
            add(d, "after the crash")
    with PalaceDirectory(palace, make) as again:
        assert "a compaction a crash cut short" in again.status.problem


def test_a_key_another_process_stored_by_a_read_is_followed_without_a_new_record(tmp_path):
    """A slice's first key (or a rotation) is stored by a read and leaves no journal record:
    a process that had followed everything else still reads the new keys.json."""
    palace = tmp_path / "atrium"
    a, b = PalaceDirectory(palace, make), PalaceDirectory(palace, make)
    try:
        a.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
        turn = b.call("list_turns", {"conversation": "c"})["turns"][0]["id"]  # b follows
        bundle = a.call("slice_context", {"anchor": turn})["bundle"]  # a stores the key
        assert b.call("verify_token", {"bundle": bundle})["valid"] is True
        b.call("rotate_key", {})  # b's keyring, stored, keeps a's key
    finally:
        a.close()
        b.close()
    with PalaceDirectory(palace, make) as c:
        assert c.call("verify_token", {"bundle": bundle})["valid"] is True


# -- heavy reads in a forked child (PalaceDirectory.reads_aside: the palace server's) -----------

def _slow_in_children(d: PalaceDirectory, marks: Path, monkeypatch, seconds: float = 3.0,
                      die: bool = False) -> None:
    """Make ``communities`` take ``seconds`` (or die at once) when it runs in a process other
    than this one, leaving a file named by that process's id in ``marks``."""
    real, parent = d.store.call, os.getpid()

    def call(name, args=None):
        if name == "communities" and os.getpid() != parent:
            (marks / str(os.getpid())).write_text(name)
            if die:
                os._exit(3)
            time.sleep(seconds)
        return real(name, args)

    monkeypatch.setattr(d.store, "call", call)


def _with_notes(path: Path, n: int = 12) -> PalaceDirectory:
    d = PalaceDirectory(path, make)
    for i in range(n):
        weather = "rain" if i % 2 else "sun"
        d.call("add_drawer", {"wing": "w", "room": "r",
                              "content": f"note {i} about lanterns and {weather}"})
    return d


def test_a_heavy_read_runs_in_a_child_and_holds_up_no_call(tmp_path, monkeypatch):
    """With reads_aside, communities runs in a forked child: the answer is the one the
    palace gives here, other reads and a write answer while the child works, and the child
    is gone afterwards."""
    import threading

    d = _with_notes(tmp_path / "atrium")
    try:
        with d.another() as elsewhere:  # (computed elsewhere: none kept here)
            inline = elsewhere.call("communities", {})
        d.reads_aside = True
        marks = tmp_path / "marks"
        marks.mkdir()
        _slow_in_children(d, marks, monkeypatch)
        out = {}
        heavy = threading.Thread(target=lambda: out.update(c=d.call("communities", {})))
        heavy.start()
        deadline = time.monotonic() + 10
        while not list(marks.iterdir()):
            assert time.monotonic() < deadline, "no child ran communities"
            time.sleep(0.02)
        t0 = time.monotonic()
        assert d.call("search", {"query": "lanterns"})["results"]
        d.call("add_drawer", {"wing": "w", "room": "r", "content": "written meanwhile"})
        assert time.monotonic() - t0 < 2.0 and heavy.is_alive()
        heavy.join(timeout=30)
        assert {**out["c"], "seconds": None} == {**inline, "seconds": None}
        child = int(next(marks.iterdir()).name)
        assert child != os.getpid()
        with pytest.raises(ProcessLookupError):
            os.kill(child, 0)  # (waited for: no zombie left)
    finally:
        d.close()


def test_a_heavy_reads_error_is_raised_here_and_a_child_without_an_answer_says_so(
        tmp_path, monkeypatch):
    """The child's error is raised here as itself; a child that dies (or runs out of time)
    before answering is a StorageError, and the read is not run again in this process."""
    from palazzo.errors import ValidationError

    d = _with_notes(tmp_path / "atrium")
    try:
        d.reads_aside = True
        with pytest.raises(ValidationError) as err:
            d.call("communities", {"k": 0})
        assert err.value.field is not None
        marks = tmp_path / "marks"
        marks.mkdir()
        _slow_in_children(d, marks, monkeypatch, die=True)
        with pytest.raises(StorageError, match="gave no answer"):
            d.call("communities", {})
        assert len(list(marks.iterdir())) == 1
        d.aside_limit = 1.0
        _slow_in_children(d, marks, monkeypatch, seconds=30)
        t0 = time.monotonic()
        with pytest.raises(StorageError, match="gave no answer within 1 s"):
            d.call("communities", {})
        assert time.monotonic() - t0 < 10
        assert d.store.palace.communities.state() is None  # (nothing ran here)
    finally:
        d.close()


def test_the_communities_a_child_computed_are_kept_here_while_the_palace_is_the_same(
        tmp_path):
    d = _with_notes(tmp_path / "atrium")
    try:
        d.reads_aside = True
        assert d.store.palace.communities.state() is None
        out = d.call("communities", {})
        key, kept = d.store.palace.communities.state()
        assert len(kept.communities) == out["total"]
        from palazzo.ops.communities import communities_of
        assert communities_of(d.store.palace) is kept  # (a hit: not computed again)
        d.call("add_drawer", {"wing": "w", "room": "r", "content": "a new note on lanterns"})
        state = (key, kept)
        assert d.store.palace.communities.adopt(state) is False  # (no longer this palace's)
    finally:
        d.close()


def test_a_heavy_reads_child_keeps_neither_the_lock_nor_the_servers_socket(tmp_path,
                                                                           monkeypatch):
    """A child forked while this process holds the writer lock (for a write on the server's
    other copy) and listens on a socket keeps neither: the lock is free for another process
    as soon as this one lets go, and the port can be listened on again, while the child
    still works."""
    import socket
    import threading

    d = _with_notes(tmp_path / "atrium")
    writer = d.another()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    try:
        d.reads_aside = True
        marks = tmp_path / "marks"
        marks.mkdir()
        _slow_in_children(d, marks, monkeypatch, seconds=4.0)
        heavy = threading.Thread(target=lambda: d.call("communities", {}))
        with writer.hold():
            heavy.start()
            deadline = time.monotonic() + 10
            while not list(marks.iterdir()):
                assert time.monotonic() < deadline, "no child ran communities"
                time.sleep(0.02)
        listener.close()
        with PalaceDirectory(tmp_path / "atrium", make, lock_wait=0) as other:
            other.call("add_drawer", {"wing": "w", "room": "r", "content": "another's write"})
        again = socket.socket()
        again.bind(("127.0.0.1", port))
        again.listen()
        again.close()
        assert heavy.is_alive()  # (the child was still at work throughout)
        heavy.join(timeout=30)
    finally:
        listener.close()
        writer.close()
        d.close()
