"""The palace server's two copies (``palazzo.hosts.server.pair``), in one process: reads on
the reader never take the writer lock; a read with a key to store goes to the writer, and
both copies then verify what it signed."""

import threading
import time

import pytest

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ReadOnly
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory

pytest.importorskip("fcntl")

from palazzo.hosts.server import pair as pair_module  # noqa: E402  (needs the serve extra)
from palazzo.hosts.server.pair import Pair  # noqa: E402


def make(**kw):
    return Palace(embedder=HashEmbedder(), **kw)


@pytest.fixture
def pair(tmp_path):
    writer = PalaceDirectory(tmp_path / "atrium", make)
    p = Pair(writer, writer.another(reads_only=True))
    yield p
    p.close()
    writer.close()


def test_reads_go_to_the_reader_and_see_every_acknowledged_write(pair):
    out = pair.call("add_drawer", {"wing": "w", "room": "r", "content": "a lantern note"})
    found = pair.call("search", {"query": "lantern"})["results"]
    assert [h["drawer_id"] for h in found] == [out["drawer_id"]]
    assert pair.reader.store.palace.drawers.row_of.get(out["drawer_id"]) is not None
    assert not pair.reader.writer


def test_the_reader_answers_while_another_holds_the_lock(pair, tmp_path):
    pair.call("add_drawer", {"wing": "w", "room": "r", "content": "a lantern note"})
    with PalaceDirectory(tmp_path / "atrium", make, lock_wait=0) as other, other.hold():
        assert pair.call("search", {"query": "lantern"})["results"]
        with pytest.raises(ReadOnly):  # (the reader never writes, even when asked)
            pair.reader.call("add_drawer", {"wing": "w", "room": "r", "content": "no"})


def test_a_key_a_read_stores_goes_to_the_writer_and_both_copies_verify_it(pair, tmp_path):
    pair.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = pair.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    bundle = pair.call("slice_context", {"anchor": turn})["bundle"]  # the first key, stored
    assert (tmp_path / "atrium" / "keys.json").exists()
    assert pair.call("verify_token", {"bundle": bundle})["valid"] is True  # on the reader
    assert pair.writer.call("verify_token", {"bundle": bundle})["valid"] is True
    pair.call("rotate_key", {})  # the writer stores a keyring that still holds the first key
    again = pair.call("slice_context", {"anchor": turn})["bundle"]
    with PalaceDirectory(tmp_path / "atrium", make) as fresh:
        assert fresh.call("verify_token", {"bundle": bundle})["valid"] is True
        assert fresh.call("verify_token", {"bundle": again})["valid"] is True



class Slow:
    """One read made slow on one copy: ``palace_status`` waits there until :meth:`end`
    (as community colouring of a big palace would take its minutes), run by Pair.call in
    a thread of its own."""

    def __init__(self, pair, copy, monkeypatch):
        self.started, self.ended = threading.Event(), threading.Event()
        real = copy.store.call

        def call(name, args=None):
            if name == "palace_status":
                self.started.set()
                self.ended.wait(30)
            return real(name, args)

        monkeypatch.setattr(copy.store, "call", call)
        self.thread = threading.Thread(target=pair.call, args=("palace_status",))
        self.thread.start()
        assert self.started.wait(10)

    def end(self):
        self.ended.set()
        self.thread.join(timeout=10)


def in_thread(fn, *args):
    """Start ``fn(*args)`` in a thread; return (the thread, the dict its result goes to)."""
    out = {}
    t = threading.Thread(target=lambda: out.update(result=fn(*args)))
    t.start()
    return t, out


def test_a_slow_read_holds_up_no_other_read(pair, monkeypatch):
    """While a read holds the reader past SLOW_READ_S, the next reads are answered by the
    writer (with every acknowledged write); while the writer is busy too (a write runs),
    a read waits for the first copy to come free; once the slow read ends, reads go to the
    reader again."""
    out = pair.call("add_drawer", {"wing": "w", "room": "r", "content": "a lantern note"})
    slow = Slow(pair, pair.reader, monkeypatch)
    try:
        time.sleep(pair_module.SLOW_READ_S + 0.1)
        read, answer = in_thread(pair.call, "search", {"query": "lantern"})
        read.join(timeout=10)
        assert not read.is_alive(), "a slow read held up the next read"
        assert [h["drawer_id"] for h in answer["result"]["results"]] == [out["drawer_id"]]
        assert pair.spilled == 1
        with pair.writer.turn(5) as mine:  # (a write running on the writer)
            assert mine
            read, answer = in_thread(pair.call, "search", {"query": "lantern"})
            read.join(timeout=1)
            assert read.is_alive()
        read.join(timeout=10)
        assert not read.is_alive() and len(answer["result"]["results"]) == 1
        assert pair.spilled == 2
    finally:
        slow.end()
    pair.call("search", {"query": "lantern"})
    assert pair.spilled == 2  # (the reader answered)


def test_a_read_that_is_not_slow_yet_is_waited_for(pair, monkeypatch):
    """A read that has held the reader for less than SLOW_READ_S keeps the next read
    waiting for the reader rather than sent to the writer: under ordinary load the reads
    stay on the reader, as measured best."""
    monkeypatch.setattr(pair_module, "SLOW_READ_S", 3600.0)
    slow = Slow(pair, pair.reader, monkeypatch)
    try:
        read, answer = in_thread(pair.call, "search", {"query": "lantern"})
        read.join(timeout=1)
        assert read.is_alive() and pair.spilled == 0
    finally:
        slow.end()
    read.join(timeout=10)
    assert not read.is_alive() and "results" in answer["result"] and pair.spilled == 0
