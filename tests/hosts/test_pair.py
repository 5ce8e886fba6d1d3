"""The palace server's two copies (``palazzo.hosts.server.pair``), in one process: reads on
the reader never take the writer lock; a read with a key to store goes to the writer, and
both copies then verify what it signed."""

import pytest

from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ReadOnly
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory

pytest.importorskip("fcntl")

from palazzo.hosts.server.pair import Pair  # noqa: E402  (the server's module needs uvicorn's)


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
