"""A palace directory shared by processes: a reader takes the writer lock only for a write and
gives it back, so it never becomes a lifelong writer that refuses every later CLI write.

The processes are real: ``python -m palazzo.hosts.mcp.server`` spoken to in JSON-RPC lines over
stdio, and ``python -m palazzo.hosts.cli`` commands, on one palace directory.
"""

import json
import os
import stat
import subprocess
import sys
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
def reader(tmp_path):
    """(palace, a read-only MCP server on it, the test's own PalaceDirectory that held the
    lock when the server started; it has let go since)."""
    palace = tmp_path / "atrium"
    holder = PalaceDirectory(palace, make)
    holder.call("add_drawer", {"wing": "w", "room": "r", "content": "by the first writer"})
    server = Server(palace)
    assert "read-only" in server.instructions
    holder.close()
    yield palace, server
    server.close()


def test_a_reader_that_served_a_read_does_not_block_a_later_cli_write(reader):
    palace, server = reader
    ok, text = server.tool("palace_status")
    assert ok and json.loads(text)["drawers"] == 1
    done = cli(palace, "add", "--wing", "w", "--room", "r", "by the command line")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("added\n")
    ok, text = server.tool("palace_status")  # and the reader follows that write
    assert ok and json.loads(text)["drawers"] == 2


def test_a_reader_that_wrote_gives_the_lock_back_and_loses_no_write(reader):
    palace, server = reader
    ok, text = server.tool("add_drawer", {"wing": "w", "room": "r", "content": "by the reader"})
    assert ok, text
    done = cli(palace, "add", "--wing", "w", "--room", "r", "by the command line")
    assert done.returncode == 0, done.stderr
    # The reader writes again on top of the command line's write, not over it.
    ok, text = server.tool("add_drawer", {"wing": "w", "room": "r", "content": "reader again"})
    assert ok, text
    ok, text = server.tool("palace_status")
    assert ok and json.loads(text)["drawers"] == 4
    assert cli(palace, "add", "--wing", "w", "--room", "r", "last").returncode == 0
    assert drawers_on_disk(palace) == sorted(["by the first writer", "by the reader",
                                              "by the command line", "reader again", "last"])


def test_a_reader_still_refuses_a_write_while_another_process_writes(reader):
    palace, server = reader
    holder = PalaceDirectory(palace, make)  # the writer again
    try:
        ok, text = server.tool("add_drawer", {"wing": "w", "room": "r", "content": "refused"})
        assert not ok and "read-only" in text
        holder.call("add_drawer", {"wing": "w", "room": "r", "content": "by the writer"})
        ok, text = server.tool("search", {"query": "writer"})
        assert ok and "by the writer" in text
    finally:
        holder.close()
    assert "refused" not in drawers_on_disk(palace)


def test_a_reader_gives_the_lock_back_after_each_reindex_step_with_its_vectors_saved(tmp_path):
    palace = tmp_path / "atrium"
    source = Palace(clock=lambda: 0.0)
    for i in range(3):
        source.add_drawer("w", "r", f"violin lesson number {i}")
    holder = PalaceDirectory(palace, make)
    holder.call("import", {"document": export_palace(source, vectors=None, exported_at=0.0),
                           "reindex": False})
    reader = PalaceDirectory(palace, make)
    assert reader.status.read_only
    holder.close()
    root = DirectoryRoot(tmp_path)
    try:
        step = reader.call("reindex", {"limit": 1})
        assert (step["embedded"], step["remaining"]) == (1, 2)
        assert root.lock("atrium")  # free between calls (an MCP server waits for its client)
        store = PalaceStore(DirectorySpace(palace), make, read_only=True)
        assert call(store.palace, "palace_status")["embedded"] == 1  # saved before it went
        root.unlock("atrium")
        step = reader.call("reindex", {"limit": 5})
        assert (step["embedded"], step["remaining"]) == (2, 0)
        store = PalaceStore(DirectorySpace(palace), make, read_only=True)
        assert call(store.palace, "palace_status")["embedded"] == 3
    finally:
        reader.close()


def test_a_reader_that_saw_a_torn_tail_cuts_it_before_its_own_write(tmp_path):
    palace = tmp_path / "atrium"
    holder = PalaceDirectory(palace, make)
    holder.call("add_drawer", {"wing": "w", "room": "r", "content": "acknowledged"})
    journal = next(palace.glob("journal-*.log"))
    with open(journal, "ab") as f:
        f.write(b"PZJ1\x00\x00\x07")  # a record torn by a crash: replay stops before it
    reader = PalaceDirectory(palace, make)
    assert reader.status.read_only and reader.status.dropped_bytes == 7
    holder.close()
    try:
        reader.call("add_drawer", {"wing": "w", "room": "r", "content": "by the reader"})
    finally:
        reader.close()
    assert drawers_on_disk(palace) == ["acknowledged", "by the reader"]


def test_the_writer_narrows_palace_files_an_older_version_left_readable(tmp_path):
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
    PalaceDirectory(palace, make).close()  # opened by its writer
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in palace.iterdir()}
    assert modes.pop("notes.txt") == 0o644  # not a palace file: left alone
    assert modes == dict.fromkeys(modes, 0o600)


def test_a_reader_that_gave_the_lock_back_stays_read_only_after_it_reloads(tmp_path):
    palace = tmp_path / "atrium"
    holder = PalaceDirectory(palace, make)
    reader = PalaceDirectory(palace, make)
    holder.call("add_drawer", {"wing": "w", "room": "r", "content": "first"})
    holder.close()
    try:  # the files changed since the reader read them: it boots as the writer for this
        reader.call("add_drawer", {"wing": "w", "room": "r", "content": "by the reader"})
        assert reader.status.read_only and not reader.writer
        holder = PalaceDirectory(palace, make)  # a writer again, for good
        holder.call("add_drawer", {"wing": "w", "room": "r", "content": "by the writer"})
        assert reader.call("palace_status")["drawers"] == 3  # reloaded...
        assert reader.status.read_only  # ...and still read-only
        with pytest.raises(ReadOnly):
            reader.call("add_drawer", {"wing": "w", "room": "r", "content": "refused"})
        holder.call("add_drawer", {"wing": "w", "room": "r", "content": "writer again"})
    finally:
        reader.close()
        holder.close()
    assert drawers_on_disk(palace) == ["by the reader", "by the writer", "first",
                                       "writer again"]


def test_a_reader_stores_the_first_signing_key_before_it_returns_a_token(tmp_path):
    palace = tmp_path / "atrium"
    holder = PalaceDirectory(palace, make)
    holder.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = holder.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    reader = PalaceDirectory(palace, make)
    try:
        with pytest.raises(ReadOnly):  # the writer is there: sign there
            reader.call("slice_context", {"anchor": turn})
        holder.close()
        bundle = reader.call("slice_context", {"anchor": turn})["bundle"]
        assert reader.status.read_only and (palace / "keys.json").exists()
    finally:
        reader.close()
    again = PalaceDirectory(palace, make)
    try:
        assert again.call("verify_token", {"bundle": bundle})["valid"] is True
    finally:
        again.close()


def test_a_with_block_gives_the_lock_back_when_it_ends(tmp_path):
    palace = tmp_path / "atrium"
    with PalaceDirectory(palace, make) as first:
        assert first.writer
        first.call("add_drawer", {"wing": "w", "room": "r", "content": "in the block"})
        with PalaceDirectory(palace, make) as meanwhile:  # the lock is held: read-only
            assert meanwhile.status.read_only and not meanwhile.writer
    with PalaceDirectory(palace, make) as second:  # another writer opens it
        assert second.writer and not second.status.read_only
        second.call("add_drawer", {"wing": "w", "room": "r", "content": "after the block"})
    assert drawers_on_disk(palace) == ["after the block", "in the block"]


def test_a_with_block_gives_the_lock_back_when_it_raises(tmp_path):
    palace = tmp_path / "atrium"
    with pytest.raises(RuntimeError, match="mid-block"), \
            PalaceDirectory(palace, make) as first:
        first.call("add_drawer", {"wing": "w", "room": "r", "content": "before the error"})
        raise RuntimeError("mid-block")
    with PalaceDirectory(palace, make) as second:
        assert second.writer and not second.status.read_only
        second.call("add_drawer", {"wing": "w", "room": "r", "content": "after the error"})
    assert drawers_on_disk(palace) == ["after the error", "before the error"]


def test_a_directory_that_fails_to_open_gives_the_lock_back(tmp_path):
    def broken(**kw):
        raise RuntimeError("no palace today")

    with pytest.raises(RuntimeError, match="no palace today"):
        PalaceDirectory(tmp_path / "atrium", broken)
    with PalaceDirectory(tmp_path / "atrium", make) as d:
        assert d.writer


def test_close_is_idempotent_and_a_closed_directory_refuses_calls(tmp_path):
    palace = tmp_path / "atrium"
    with PalaceDirectory(palace, make) as d:
        d.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
    d.close()  # again, after the block: nothing happens
    with PalaceDirectory(palace, make) as holder:  # the lock is someone else's now...
        with pytest.raises(StorageError, match="was closed"):
            d.call("add_drawer", {"wing": "w", "room": "r", "content": "unguarded"})
        d.close()  # ...and closing again does not release it
        assert holder.writer
        with PalaceDirectory(palace, make) as third:
            assert third.status.read_only
    assert drawers_on_disk(palace) == ["kept"]


def test_compact_writes_a_snapshot_and_gives_the_lock_back(tmp_path):
    path = tmp_path / "atrium"
    with PalaceDirectory(path, make) as d:
        d.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
        gen = d.status.generation
        d.compact()
        assert d.status.generation == gen + 1 and d.status.journal_bytes == 0
    with PalaceDirectory(path, make) as again:  # the lock came back; the palace is whole
        assert again.writer and again.call("palace_status")["drawers"] == 1
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
