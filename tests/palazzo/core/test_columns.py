import numpy as np
import pytest

from palazzo.core.columns import DrawerStore, EdgeTable
from palazzo.core.model import EdgeKind


def _add(store, i, wing="w", room="r"):
    return store.add(f"d{i}", f"text {i}", wing, room, None, "", "", {"importance": 0.5})


def test_rows_grow_amortised_and_are_reused_after_deletion():
    store = DrawerStore(dim=4, capacity=2)
    rows = [_add(store, i) for i in range(5)]
    assert rows == [0, 1, 2, 3, 4] and store.capacity >= 5
    store.set_vector(2, np.array([1, 0, 0, 0], np.float32))
    assert store.remove("d2") == 2
    assert not store.alive[2] and not store.has_vector[2] and not store.vectors[2].any()
    assert _add(store, 9) == 2  # the freed row comes back first
    assert len(store) == 5 and store.row_of["d9"] == 2


def test_mask_filters_live_rows_by_wing_and_room():
    store = DrawerStore(dim=2)
    _add(store, 0, "a", "x")
    _add(store, 1, "a", "y")
    _add(store, 2, "b", "x")
    store.remove("d0")
    assert store.mask().tolist() == [False, True, True]
    assert store.mask(wing="a").tolist() == [False, True, False]
    assert store.mask(room="x").tolist() == [False, False, True]


def test_switching_embedder_drops_vectors():
    store = DrawerStore(dim=2)
    store.set_fingerprint("hash-2")
    _add(store, 0)
    store.set_vector(0, np.array([0.6, 0.8], np.float32))
    store.set_fingerprint("hash-2")
    assert store.has_vector[0]
    store.set_fingerprint("other")
    assert not store.has_vector[0] and not store.vectors.any()


def test_edges_deduplicate_and_keep_adjacency():
    edges = EdgeTable()
    a = edges.add(EdgeKind.HALL, "room:w/a", "room:w/b", {"hall_type": "corridor"})
    assert edges.add(EdgeKind.HALL, "room:w/a", "room:w/b") == a
    b = edges.add(EdgeKind.TUNNEL, "room:w/a", "room:v/a")
    assert edges.columns["base_cost"][a] == 0.5 and edges.columns["base_cost"][b] == 0.7
    assert sorted(edges.touching("room:w/a")) == [a, b]
    for _ in range(40):  # growth past the initial capacity
        edges.add(EdgeKind.RELATES_TO, f"e{_}", "x")
    edges.remove(a)
    assert edges.find(EdgeKind.HALL, "room:w/a", "room:w/b") is None
    assert edges.touching("room:w/a") == [b]
    assert len(edges) == 41


def test_chunk_rows_are_freed_reused_and_scored_by_the_best_chunk():
    store = DrawerStore(dim=2)
    for i in range(3):
        _add(store, i)
    e0, e1 = np.eye(2, dtype=np.float32)
    store.set_chunks(0, np.stack([e0, e1]))
    store.set_chunks(2, np.stack([e1, e1, np.zeros(2, np.float32)]))  # zero chunk left out
    assert len(store.chunks) == 4 and store.chunks.of_row == {0: [0, 1], 2: [2, 3]}
    assert np.allclose(store.vectors[0], [2**-0.5, 2**-0.5]) and store.has_vector[0]
    best = store.chunks.best(e0, store.size)
    assert best.tolist() == [1.0, -np.inf, 0.0]
    assert store.chunks.drawer_row.dtype == np.intp
    store.remove("d0")
    assert len(store.chunks) == 2 and not store.chunks.alive[:2].any()
    store.set_chunks(1, np.stack([e0, e1, e0]))
    assert sorted(store.chunks.of_row[1]) == [0, 1, 4]  # freed slots first, then growth
    store.set_vector(1, e0)  # a single vector replaces the chunks
    assert 1 not in store.chunks.of_row and len(store.chunks) == 2


def test_a_text_column_decodes_each_text_when_asked_and_takes_writes():
    from palazzo.core.columns import TextColumn

    texts = ["café", "", "naïve 日本", "last"]
    raw = [t.encode() for t in texts]
    offsets = np.cumsum([0, *map(len, raw)])
    column = TextColumn(offsets, np.frombuffer(b"".join(raw), np.uint8))
    assert len(column) == 4 and column[2] == "naïve 日本" and column[-1] == "last"
    column[0] = "changed"
    column.append("new")
    assert list(column) == ["changed", "", "naïve 日本", "last", "new"]
    assert column == ["changed", "", "naïve 日本", "last", "new"]
    with pytest.raises(IndexError):
        column[5]
    empty = TextColumn(np.zeros(1, np.int64), np.zeros(0, np.uint8))
    assert len(empty) == 0 and list(empty) == []


def test_edges_read_as_columns_build_their_adjacency_when_first_walked():
    edges = EdgeTable()
    a = edges.add(EdgeKind.HALL, "r1", "r2")
    b = edges.add(EdgeKind.TUNNEL, "r1", "r3")
    edges.remove(a)
    read = EdgeTable.from_columns(list(edges.kind), list(edges.src), list(edges.dst),
                                  [dict(p) for p in edges.props], edges.alive[:2].copy(),
                                  {k: v[:2].copy() for k, v in edges.columns.items()})
    assert read.touching("r1") == [b] and read.find(EdgeKind.HALL, "r1", "r2") is None
    c = read.add(EdgeKind.HALL, "r2", "r3")  # grows past the capacity it was read with
    assert c == 2 and read.out["r2"] == [c] and len(read) == 2


def test_a_text_column_encodes_to_the_block_it_was_read_from_plus_what_changed():
    from palazzo.core.columns import TextColumn

    texts = ["café", "", "naïve 日本", "last"]
    raw = [t.encode() for t in texts]
    offsets = np.cumsum([0, *map(len, raw)])
    block = np.frombuffer(b"".join(raw), np.uint8)
    column = TextColumn(offsets, block)
    assert column[0] == "café"  # read, not written: still the block it came from
    same_offsets, same_block = column.encoded()
    assert same_offsets is offsets and np.shares_memory(same_block, block)
    column[2] = "ünïcode"
    column.append("new")
    new_offsets, new_block = column.encoded()
    expected = ["café", "", "ünïcode", "last", "new"]
    assert new_block.tobytes() == "".join(expected).encode()
    assert new_offsets.tolist() == np.cumsum([0, *(len(t.encode()) for t in expected)]).tolist()
