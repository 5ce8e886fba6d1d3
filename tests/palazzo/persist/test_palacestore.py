"""Snapshot + journal persistence: fault injection at every byte, failed writes, compaction
crashes, read-only second writers."""

import contextlib

import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, PalaceDamaged, ReadOnly, StorageError, ValidationError
from palazzo.formats.palacefile import export_palace
from palazzo.palace import Palace
from palazzo.persist import journal
from palazzo.persist.journal import Tip
from palazzo.persist.library import Library
from palazzo.persist.palacestore import TIP, PalaceStore, journal_name
from palazzo.persist.storage import MemoryRoot, MemorySpace


def ticking(start=1_700_000_000.0):
    t = [start]

    def clock():
        t[0] += 1.0
        return t[0]

    return clock


def make(**kw):
    # A small dimension keeps records short: the byte-by-byte tests boot once per byte, and
    # a record carries the vectors its operation made.
    return Palace(embedder=HashEmbedder(dim=16), clock=lambda: 0.0, **kw)


def state(store):
    return export_palace(store.palace, vectors="float32", exported_at=0.0)


OPS = [
    ("add_drawer", {"wing": "work", "room": "palazzo", "content": "The journal is synced."}),
    ("add_drawer", {"wing": "work", "room": "notes", "content": "Snapshots compact it."}),
    ("add_drawer", {"wing": "home", "room": "notes", "content": "Buy lentils."}),
    ("pheromone_deposit", {"path": [["room:work/notes", "room:home/notes", "TUNNEL"]]}),
    ("decay_now", {"cycles": 3}),
    ("add_drawer", {"wing": "home", "room": "garden", "content": "Basil needs sun."}),
]


def copy_space(space, journal_bytes=None, gen=None, tip=None):
    out = MemorySpace()
    for name in space.names():
        out.write(name, space.read(name))
    if journal_bytes is not None:
        out.write(journal_name(gen), journal_bytes)
    if tip is not None:
        out.write(TIP, tip.encode())
    return out


def run_ops(store):
    states = [state(store)]
    for name, args in OPS:
        store.call(name, args)
        states.append(state(store))
    return states


def _ends(data):
    found = journal.scan(data)
    return [0, *found.ends], [r.seq for r in found.records]


def test_a_crash_at_every_byte_of_an_append_boots_to_the_last_acknowledged_state():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    states = run_ops(store)
    gen = store.status.generation
    data = space.read(journal_name(gen))
    assert store.status.journal_records == len(OPS)
    ends, seqs = _ends(data)
    start = ends[-4]  # the last three records, byte by byte
    for cut in range(start, len(data) + 1):
        whole = sum(e <= cut for e in ends[1:])
        # A crash during append k: records before it were acknowledged (and the tip says so).
        tip = Tip(gen, seqs[whole - 1], ends[whole])
        again = PalaceStore(copy_space(space, data[:cut], gen, tip), make, clock=ticking())
        assert state(again) == states[whole], cut
        assert again.status.replayed == whole
        assert again.status.dropped_bytes == cut - ends[whole]
        assert not again.status.damaged and not again.status.read_only, cut
        assert (again.status.problem is None) == (cut == ends[whole])
        assert again.space.read(journal_name(gen)) == data[:ends[whole]]  # the writer cut it


def test_a_journal_cut_below_what_was_acknowledged_is_damage_not_a_crash():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    states = run_ops(store)
    gen = store.status.generation
    data = space.read(journal_name(gen))
    ends, _ = _ends(data)
    for cut in (ends[3], ends[3] + 5, len(data) - 1):  # at a record boundary, and inside one
        again = PalaceStore(copy_space(space, data[:cut], gen), make, clock=ticking())
        whole = sum(e <= cut for e in ends[1:])
        assert state(again) == states[whole]  # everything that verifies is still read
        assert again.status.read_only and again.status.damaged
        assert "were acknowledged" in again.status.problem
        assert again.space.read(journal_name(gen)) == data[:cut]  # and nothing is cut
        with pytest.raises(PalaceDamaged, match="palazzo repair"):
            again.call(*OPS[0])


def test_a_flipped_byte_in_the_last_record_is_damage_and_repair_loses_only_that_record():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    states = run_ops(store)
    gen = store.status.generation
    data = bytearray(space.read(journal_name(gen)))
    data[-3] ^= 0xFF
    space.write(journal_name(gen), bytes(data))
    again = PalaceStore(space, make, clock=ticking())
    assert state(again) == states[-2]
    assert again.status.read_only and "checksum" in again.status.problem
    assert space.read(journal_name(gen)) == bytes(data)
    out = again.repair()
    assert out["repaired"] and out["moved"] == [
        {"file": journal_name(gen), "to": f"damaged-{journal_name(gen)}"}]
    assert space.read(f"damaged-{journal_name(gen)}") == bytes(data)  # kept, byte for byte
    assert not again.status.read_only and state(again) == states[-2]
    again.call("add_drawer", {"wing": "x", "room": "y", "content": "after the repair"})
    third = PalaceStore(space, make, clock=ticking())
    assert third.status.problem is None
    assert state(third) == state(again)


class FailingSpace(MemorySpace):
    def __init__(self):
        super().__init__()
        self.fail_appends = False
        self.writes_left = None

    def append(self, name, data):
        if self.fail_appends:
            raise StorageError("disk full")
        super().append(name, data)

    def write(self, name, data):
        if self.writes_left is not None:
            if self.writes_left == 0:
                raise StorageError("crash")
            self.writes_left -= 1
        super().write(name, data)


def test_a_failed_append_is_not_acknowledged_and_memory_matches_disk():
    space = FailingSpace()
    store = PalaceStore(space, make, clock=ticking())
    store.call(*OPS[0])
    before = state(store)
    space.fail_appends = True
    with pytest.raises(StorageError, match="disk full"):
        store.call(*OPS[1])
    assert state(store) == before
    space.fail_appends = False
    assert state(PalaceStore(space, make, clock=ticking())) == before


def test_a_crash_at_any_step_of_compaction_boots_to_the_same_palace():
    for steps in range(6):
        space = FailingSpace()
        store = PalaceStore(space, make, clock=ticking())
        states = run_ops(store)
        space.writes_left = steps
        with contextlib.suppress(StorageError):
            store.compact()
        space.writes_left = None
        assert state(PalaceStore(space, make, clock=ticking())) == states[-1], steps


def test_compaction_keeps_the_previous_generation_and_the_same_palace():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking(), compact_records=4)
    states = run_ops(store)
    gen = store.status.generation
    assert gen >= 2
    assert [n for n in space.names() if n.startswith(("snapshot-", "journal-"))] == [
        journal_name(gen - 1), journal_name(gen), f"snapshot-{gen - 1:08d}.pz",
        f"snapshot-{gen:08d}.pz"]
    assert state(PalaceStore(space, make, clock=ticking())) == states[-1]


def test_bad_operations_write_nothing_and_reads_are_not_journaled():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    with pytest.raises(ValidationError):
        store.call("add_drawer", {"wing": "w", "room": "r", "content": "   "})
    store.call("search", {"query": "anything"})
    store.call("palace_status")
    assert store.status.journal_records == 0
    assert space.read(journal_name(store.status.generation)) == b""


def test_replay_runs_with_the_recorded_clock():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking(5000.0))
    out = store.call("add_drawer", {"wing": "w", "room": "r", "content": "when?"})
    did = out["drawer_id"]
    when = store.palace.drawer(did).created_at
    assert when > 5000.0  # the store's clock at the call, not the palace's (0.0)
    assert PalaceStore(space, make, clock=ticking(9e9)).palace.drawer(did).created_at == when


def test_library_new_open_delete_and_read_only_second_writer():
    root = MemoryRoot()
    lib = Library(root, make, clock=ticking())
    lib.new_palace("Work notes")
    lib.store.call(*OPS[0])
    with pytest.raises(ValidationError, match="exists already"):
        lib.new_palace("Work notes")
    with pytest.raises(ValidationError):
        lib.new_palace("../escape")
    other = Library(root, make, clock=ticking())
    opened = other.open_palace("Work notes")
    assert opened["status"]["read_only"] is True
    with pytest.raises(ReadOnly):
        other.store.call(*OPS[1])
    assert other.store.palace.counts()["drawers"] == 1
    assert lib.list_palaces()["palaces"] == ["Work notes"]
    with pytest.raises(ValidationError, match="confirm"):
        lib.delete_palace("Work notes", confirm="work notes")
    lib.delete_palace("Work notes", confirm="Work notes")
    assert lib.list_palaces() == {"palaces": [], "open": None, "backend": "memory"}


def test_import_and_reindex_are_saved_as_snapshots_and_vectors_wait_for_their_embedder():
    space = MemorySpace()
    source = make()
    source.add_drawer("w", "r", "imported text")
    doc = export_palace(source, vectors="float32", exported_at=0.0)
    bare = PalaceStore(space, lambda **kw: Palace(clock=lambda: 0.0, **kw), clock=ticking())
    gen = bare.status.generation
    bare.call("import", {"document": doc, "reindex": False})
    assert bare.status.generation == gen + 1 and bare.status.journal_records == 0
    # Booted without an embedder (a browser before MiniLM): the vectors are kept...
    again = PalaceStore(space, lambda **kw: Palace(clock=lambda: 0.0, **kw), clock=ticking())
    assert again.palace.drawers.has_vector[0]
    assert export_palace(again.palace, vectors="float32", exported_at=0.0)["palace"][
        "vectors"] == doc["palace"]["vectors"]
    # ...and attaching the same embedder adopts them: nothing to re-embed.
    again.palace.set_embedder(HashEmbedder(dim=16))
    assert again.call("reindex")["embedded"] == 0
    assert call(again.palace, "search", {"query": "imported", "mode": "vector"})["results"]


def test_signing_keys_are_kept_beside_the_journal_and_tokens_verify_after_a_reboot():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    store.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = store.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    bundle = store.call("slice_context", {"anchor": turn})["bundle"]
    assert space.read("keys.json") is not None
    again = PalaceStore(space, make, clock=ticking())
    assert again.call("verify_token", {"bundle": bundle})["valid"] is True
    again.call("rotate_key")
    third = PalaceStore(space, make, clock=ticking())
    assert third.call("verify_token", {"bundle": bundle})["valid"] is True  # old key verifies
    section = export_palace(third.palace, vectors=None, exported_at=0)["palace"]["provenance"]
    assert section["keys"] == "not exported"


def test_a_batch_is_one_journal_record_and_replays_to_the_same_palace():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    calls = [{"name": "add_drawer", "args": {"wing": "w", "room": "r", "content": f"note {i}"}}
             for i in range(50)]
    store.call("batch", {"calls": calls})
    assert store.status.journal_records == 1
    again = PalaceStore(space, make, clock=ticking())
    assert again.status.replayed == 1
    assert export_palace(again.palace, exported_at=0.0) == \
        export_palace(store.palace, exported_at=0.0)


def test_a_batch_that_fails_part_way_lands_nowhere():
    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "before"})
    before = export_palace(store.palace, exported_at=0.0)
    with pytest.raises(NotFound):
        store.call("batch", {"calls": [
            {"name": "add_drawer", "args": {"wing": "w", "room": "r", "content": "lost"}},
            {"name": "delete_drawer", "args": {"drawer_id": "drawer_nope"}}]})
    assert export_palace(store.palace, exported_at=0.0) == before
    assert store.status.journal_records == 1
    again = PalaceStore(space, make, clock=ticking())
    assert export_palace(again.palace, exported_at=0.0) == before


def test_a_snapshot_whose_word_index_predates_stemming_is_saved_again_on_opening():
    from unittest import mock

    from palazzo.formats import snapshot
    from palazzo.retrieval.bm25 import BM25Index, Tokenizer

    space = MemorySpace()
    store = PalaceStore(space, make, clock=ticking())
    run_ops(store)
    store.call("add_drawer", {"wing": "home", "room": "walks", "content": "hiking at dawn"})
    old = BM25Index(tokenizer=Tokenizer(stemmer=None))
    for row in store.palace.drawers.live_rows():
        old.add(int(row), store.palace.drawers.content[row])
    store.palace.text_index = old
    real_state = BM25Index.state

    def unstemmed_state(self):  # what a palazzo before stemming wrote
        state = real_state(self)
        state.pop("stemmer")
        return state

    with mock.patch.object(BM25Index, "state", unstemmed_state):
        store.compact()
    gen = store.status.generation
    before = state(store)
    reader = PalaceStore(copy_space(space), make, clock=ticking(), read_only=True)
    assert reader.status.generation == gen  # a reader rebuilds in memory, writes nothing
    assert reader.palace.text_index.tokenizer.stemmer == "english+russian"
    again = PalaceStore(space, make, clock=ticking())
    assert again.status.generation == gen + 1 and state(again) == before
    meta, _ = snapshot.unpack(space.read(f"snapshot-{gen + 1:08d}.pz"))
    assert meta["bm25"]["stemmer"] == "english+russian"
    assert not again.palace.text_index.retokenised
    hits = again.call("search", {"query": "hikes", "mode": "bm25"})["results"]
    assert [h["room"] for h in hits] == ["walks"]
