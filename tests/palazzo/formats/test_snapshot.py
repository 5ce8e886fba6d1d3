"""The columnar snapshot gives back the palace it was written from: the same export, the same
search results, the same rows, free lists and chunks, and the same palace after further
operations; a damaged or foreign file is refused whole."""

import json
from unittest import mock

import numpy as np
import pytest

from palazzo import bind, call
from palazzo.core import columns
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ImportRejected, SnapshotDamaged
from palazzo.formats import snapshot
from palazzo.formats.palacefile import export_palace
from palazzo.hosts import demo
from palazzo.palace import Palace


def make(**kw):
    return Palace(embedder=HashEmbedder(dim=32), clock=lambda: 1_700_000_000.0,
                  **{"chunk_size": 120, **kw})


def rich_palace() -> Palace:
    """A palace with every kind of state: the demo (drawers, facts, a conversation, a diary),
    a long drawer cut into chunks, an edited drawer (an alias), deleted drawers (free rows),
    pheromones, an agent and a slice policy."""
    palace = make()
    demo.build(bind(palace))
    long_text = " ".join(f"Sentence {i} about the orchard and its pears." for i in range(40))
    long_text += " Yesterday we picked the last pears. My aunt Rosa sold hers last week."
    call(palace, "add_drawer", {"wing": "garden", "room": "orchard", "content": long_text})
    ids = [d["id"] for d in call(palace, "list_drawers", {"limit": 1000})["drawers"]]
    call(palace, "delete_drawer", {"drawer_id": ids[3]})
    call(palace, "delete_drawer", {"drawer_id": ids[5]})
    call(palace, "update_drawer", {"drawer_id": ids[7], "content": "An edited text."})
    call(palace, "pheromone_deposit", {"drawer_ids": ids[8:11], "reward": 1.0})
    call(palace, "pheromone_deposit", {"drawer_ids": ids[11:13], "query": "pears orchard"})
    call(palace, "add_agent", {"name": "Scout", "archetype": "explorer", "focus": "garden"})
    call(palace, "register_policy", {"name": "tight", "max_nodes": 4})
    return palace


def queries(palace):
    return [call(palace, "search", {"query": q, "mode": mode, "limit": 5})["results"]
            for q in ("pears orchard", "basil sun", "edited text", "launch friday")
            for mode in ("bm25", "vector", "hybrid")]


def test_a_palace_comes_back_whole():
    palace = rich_palace()
    again = snapshot.read_snapshot(snapshot.write_snapshot(palace), make)
    assert export_palace(again, exported_at=0.0) == export_palace(palace, exported_at=0.0)
    assert queries(again) == queries(palace)
    s, t = palace.drawers, again.drawers
    assert (t.size, t.free, t.row_of, t.aliases) == (s.size, s.free, s.row_of, s.aliases)
    assert t.chunks.of_row == s.chunks.of_row and len(t.chunks) == len(s.chunks) > 0
    assert np.array_equal(t.chunks.kind[: t.chunks.size], s.chunks.kind[: s.chunks.size])
    assert set(s.chunks.kind[: s.chunks.size].tolist()) == {0, 1, 2}  # windows and events
    assert np.array_equal(t.vectors[: t.size], s.vectors[: s.size])
    assert again.edges.out == palace.edges.out and again.edges.index == palace.edges.index
    assert again.trails.by_terms == palace.trails.by_terms and len(again.trails) == 2
    learned = {"query": "pears orchard", "pheromone": 1.0, "limit": 5}
    assert call(again, "search", learned) == call(palace, "search", learned)


def test_the_restored_palace_goes_on_as_the_original():
    palace = rich_palace()
    again = snapshot.read_snapshot(snapshot.write_snapshot(palace), make)
    for p in (palace, again):  # a freed row is reused, the BM25 log grows, a room is added
        call(p, "add_drawer", {"wing": "garden", "room": "pond", "content": "Frogs at dusk."})
        first = call(p, "list_drawers", {"limit": 1})["drawers"][0]["id"]
        call(p, "delete_drawer", {"drawer_id": first})
        call(p, "kg_add", {"subject": "Frog", "predicate": "lives_in", "object": "pond"})
    assert export_palace(again, exported_at=0.0) == export_palace(palace, exported_at=0.0)
    assert queries(again) == queries(palace)


def test_an_empty_palace_comes_back():
    palace = make()
    again = snapshot.read_snapshot(snapshot.write_snapshot(palace), make)
    assert export_palace(again, exported_at=0.0) == export_palace(palace, exported_at=0.0)
    call(again, "add_drawer", {"wing": "w", "room": "r", "content": "first"})
    assert call(again, "search", {"query": "first"})["results"][0]["content"] == "first"


def test_another_embedder_drops_the_vectors_and_keeps_the_rest():
    palace = rich_palace()
    other = snapshot.read_snapshot(
        snapshot.write_snapshot(palace),
        lambda **kw: Palace(embedder=HashEmbedder(dim=64), **kw))
    assert not other.drawers.has_vector.any() and other.drawers.dim == 64
    assert other.drawers.fingerprint == HashEmbedder(dim=64).fingerprint
    assert call(other, "palace_status")["drawers"] == call(palace, "palace_status")["drawers"]
    assert call(other, "reindex", {})["embedded"] > 0


def _padding(data) -> set[int]:
    """Return the offsets of the zero bytes that align each array (no data: no checksum)."""
    head_len = snapshot.PREFIX.unpack_from(data)[1]
    start = snapshot.PREFIX.size + head_len
    head = json.loads(bytes(data[snapshot.PREFIX.size:start]))
    out = set()
    for _, _, offset, nbytes in head["arrays"].values():
        end = offset + nbytes
        out.update(range(start + end, start + end + (-end % snapshot.ALIGN)))
    return out


def test_any_damage_is_refused_and_says_which_pages():
    palace = rich_palace()
    data = snapshot.write_snapshot(palace)
    padding = _padding(data)
    for at in range(0, len(data), max(1, len(data) // 300)):
        bad = bytearray(data)
        bad[at] ^= 0x40
        if at in padding:  # between two arrays: the palace read is the same palace
            same = snapshot.read_snapshot(bytes(bad), make)
            assert export_palace(same, exported_at=0.0) == export_palace(palace,
                                                                         exported_at=0.0)
            continue
        with pytest.raises(SnapshotDamaged):
            snapshot.read_snapshot(bytes(bad), make)
    for cut in (0, 5, snapshot.PREFIX.size + 3, len(data) // 2, len(data) - 1):
        with pytest.raises(SnapshotDamaged):
            snapshot.read_snapshot(data[:cut], make)
    with pytest.raises(SnapshotDamaged):
        snapshot.read_snapshot(b'{"format": "palazzo"}', make)


def test_a_newer_version_is_refused_as_such_not_as_damage():
    meta, arrays = snapshot.unpack(snapshot.write_snapshot(make()))
    with mock.patch.object(snapshot, "VERSION", 4):  # a whole file, written by a newer palazzo
        patched = snapshot.pack(meta, arrays)
    with pytest.raises(ImportRejected, match="version 4 is not read here"):
        snapshot.read_snapshot(patched, make)


def test_opening_leaves_sections_texts_and_adjacency_unread_until_used():
    palace = rich_palace()
    data = snapshot.write_snapshot(palace)
    again = snapshot.read_snapshot(data, make)
    assert all(again.unread(name) is not None for name in snapshot.SECTIONS)
    assert all(x is columns._UNREAD for x in again.drawers.content._items)  # none decoded
    assert again.edges._out is None
    # a compaction of an untouched palace stores each section's bytes as they were read
    _, before = snapshot.unpack(data)
    _, after = snapshot.unpack(snapshot.write_snapshot(again))
    for name in snapshot.SECTIONS:
        assert after[f"s.{name}"].tobytes() == before[f"s.{name}"].tobytes()
    # each is made on first use, and is then what the original's was
    assert again.conversations.to_json() == palace.conversations.to_json()
    assert again.unread("conversations") is None and again.unread("kg") is not None
    assert again.kg.to_json() == palace.kg.to_json()
    assert again.edges.out == palace.edges.out and again.edges._out is not None


def test_the_palace_owns_the_buffer_it_was_read_from_and_bytes_are_never_changed():
    palace = rich_palace()
    data = bytes(snapshot.write_snapshot(palace))
    buffer = bytearray(data)
    viewed = snapshot.read_snapshot(buffer, make)  # a writable buffer: its arrays are views
    assert np.shares_memory(viewed.drawers.vectors, np.frombuffer(buffer, np.uint8))
    copied = snapshot.read_snapshot(data, make)  # read-only bytes: copied once, never changed
    for p in (viewed, copied):
        ids = [d["id"] for d in call(p, "list_drawers", {"limit": 1000})["drawers"]]
        call(p, "pheromone_deposit", {"drawer_ids": ids[:3], "reward": 1.0})
        call(p, "delete_drawer", {"drawer_id": ids[4]})
        call(p, "add_drawer", {"wing": "garden", "room": "new", "content": "Fresh text."})
    assert bytes(buffer) != data and export_palace(viewed, exported_at=0.0) == \
        export_palace(copied, exported_at=0.0)
    snapshot.unpack(data)  # still whole


def test_a_text_index_saved_before_stemming_is_rebuilt_stemmed_on_opening():
    from palazzo.retrieval.bm25 import BM25Index, Tokenizer

    palace = rich_palace()
    palace.add_drawer("trips", "walks", "We went hiking on two consecutive weekends")
    old = BM25Index(tokenizer=Tokenizer(stemmer=None))
    for row in palace.drawers.live_rows():
        old.add(int(row), palace.drawers.content[row])
    palace.text_index = old
    real_state = BM25Index.state

    def unstemmed_state(self):  # the state of a snapshot written before stemming
        state = real_state(self)
        state.pop("stemmer")
        return state

    with mock.patch.object(BM25Index, "state", unstemmed_state):
        data = snapshot.write_snapshot(palace)
    assert "stemmer" not in snapshot.unpack(data)[0]["bm25"]
    again = snapshot.read_snapshot(data, make)
    assert again.text_index.tokenizer.stemmer == "english+russian"
    hits = call(again, "search", {"query": "hikes", "mode": "bm25"})["results"]
    assert [h["room"] for h in hits] == ["walks"]
    fresh = BM25Index()
    for row in again.drawers.live_rows():
        fresh.add(int(row), again.drawers.content[row])
    for q in ("pears orchard", "basil sun", "launch friday"):
        assert np.array_equal(again.text_index.scores(q), fresh.scores(q))


def test_a_snapshot_written_before_event_sentences_reads_every_chunk_as_a_window():
    palace = rich_palace()
    real = snapshot._drawers

    def without_kinds(store, arrays):  # what a snapshot before event sentences held
        meta = real(store, arrays)
        arrays.pop("c.kind")
        return meta

    with mock.patch.object(snapshot, "_drawers", without_kinds):
        data = snapshot.write_snapshot(palace)
    again = snapshot.read_snapshot(data, make)
    assert len(again.drawers.chunks) == len(palace.drawers.chunks)
    assert not again.drawers.chunks.kind.any() and not again.drawers.chunks.has_events()


def test_joined_is_the_pieces_one_after_the_other():
    import numpy as np

    from palazzo.formats.snapshot import joined

    a = np.arange(5, dtype="<f4")
    pieces = [memoryview(b"head"), memoryview(a.view(np.uint8)), memoryview(b""), b"tail"]
    out = joined(pieces)
    assert isinstance(out, bytearray)
    assert bytes(out) == b"head" + a.tobytes() + b"tail"
    assert joined([]) == bytearray()
