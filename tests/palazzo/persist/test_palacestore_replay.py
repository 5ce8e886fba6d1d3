"""Replay is exact and never deletes: recorded vectors, stored fits, atomic operations, boots
that stop read-only at a failing record, readers racing a compaction, read-only signing."""

from unittest import mock

import numpy as np
import pytest

from palazzo.core.model import EdgeKind
from palazzo.embed import registry as embedders
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import PalazzoError, ReadOnly, StorageError, ValidationError
from palazzo.formats import snapshot
from palazzo.formats.palacefile import export_palace
from palazzo.ops import REGISTRY, Operation, Registry
from palazzo.ops.registry import obj
from palazzo.palace import MAX_CONTENT, Palace
from palazzo.persist import journal
from palazzo.persist.journal import Record
from palazzo.persist.palacestore import PalaceStore, journal_name
from palazzo.persist.storage import MemorySpace

TEXTS = ["the garden needs water in the morning", "water the garden in the evening",
         "morning walks by the river", "the river floods in spring", "spring garden plans",
         "evening walks and morning coffee", "coffee with friends by the river"]


def ticking(start=1_700_000_000.0):
    t = [start]

    def clock():
        t[0] += 1.0
        return t[0]

    return clock


def maker(embedder_factory, **settings):
    def make(**kw):
        return Palace(embedder=embedder_factory(), clock=lambda: 0.0,
                      **{"similar_threshold": 0.2, **settings, **kw})
    return make


def state(palace):
    return export_palace(palace, vectors="float32", exported_at=0.0)


def similar(palace):
    e = palace.edges
    return {(e.src[i], e.dst[i]) for i in e.live() if e.kind[i] is EdgeKind.SIMILAR_TO}


class Counting:
    """An embedder that counts the texts it is asked to embed (replay must ask for none)."""

    def __init__(self, inner):
        self.inner, self.texts = inner, 0
        self.name, self.dim = inner.name, inner.dim

    @property
    def fingerprint(self):
        return self.inner.fingerprint

    def embed(self, texts):
        self.texts += len(texts)
        return self.inner.embed(texts)


def test_reopening_with_another_embedder_replays_links_and_deposits_exactly():
    space = MemorySpace()
    store = PalaceStore(space, maker(lambda: HashEmbedder(384)), clock=ticking())
    for text in TEXTS:
        store.call("add_drawer", {"wing": "w", "room": "r", "content": text})
    links = similar(store.palace)
    src, dst = sorted(links)[0]
    store.call("pheromone_deposit", {"path": [[src, dst, "SIMILAR_TO"]]})
    store.call("pheromone_use", {"action": "helpful", "drawer_ids": [src],
                                 "query": "garden notes"})
    store.call("add_drawer", {"wing": "w", "room": "r2", "content": "one more garden note"})
    live = state(store.palace)
    assert live["palace"]["trails"]  # (the palace file holds them: compared below)
    # The other embedder would have linked differently: the test means something.
    other = maker(lambda: HashEmbedder(64))()
    for text in TEXTS:
        other.add_drawer("w", "r", text)
    assert similar(other) != links
    again = PalaceStore(space, maker(lambda: HashEmbedder(64)), clock=ticking())
    assert again.status.problem is None and again.status.replayed == len(TEXTS) + 3
    assert similar(again.palace) == similar(store.palace)
    mine = state(again.palace)["palace"]
    assert mine["edges"] == live["palace"]["edges"]  # pheromones included
    assert not again.palace.drawers.has_vector.any()  # other vectors wait for reindex
    # And back under the first embedder, the recorded vectors are all there.
    third = PalaceStore(space, maker(lambda: HashEmbedder(384)), clock=ticking())
    assert state(third.palace) == live


def test_replay_uses_recorded_vectors_and_embeds_nothing():
    space = MemorySpace()
    store = PalaceStore(space, maker(lambda: HashEmbedder()), clock=ticking())
    long_text = " ".join(f"sentence {i} about the long drawer." for i in range(300))
    store.call("add_drawer", {"wing": "w", "room": "r", "content": long_text})
    store.call("add_drawer", {"wing": "w", "room": "r", "content": TEXTS[0]})
    store.call("navigate", {"start": "w/r", "goal": "w", "deposit": True})
    counting = []

    def make(**kw):
        counting.append(Counting(HashEmbedder()))
        return Palace(embedder=counting[-1], clock=lambda: 0.0,
                      **{"similar_threshold": 0.2, **kw})

    again = PalaceStore(space, make, clock=ticking())
    assert again.status.replayed == 3 and again.status.problem is None
    assert sum(c.texts for c in counting) == 0
    assert state(again.palace) == state(store.palace)
    assert len(again.palace.drawers.chunks) > 1  # the long drawer's chunks came from the record


def test_a_tfidf_fit_survives_a_restart_and_later_records_replay():
    space = MemorySpace()
    make = maker(lambda: embedders.make("tfidf"))
    store = PalaceStore(space, make, clock=ticking())
    for text in TEXTS:
        store.call("add_drawer", {"wing": "w", "room": "r", "content": text})
    store.call("reindex")  # fits, then compacts
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "garden water river"})
    fp = store.palace.drawers.fingerprint
    again = PalaceStore(space, make, clock=ticking())
    assert again.status.problem is None
    assert again.palace.embedder.fingerprint == fp == again.palace.drawers.fingerprint
    assert int(again.palace.drawers.has_vector.sum()) == len(TEXTS) + 1
    assert state(again.palace) == state(store.palace)


def test_a_failure_part_way_leaves_memory_as_disk_and_journals_nothing():
    reg = Registry()
    for name in REGISTRY.names():
        reg.add(REGISTRY.get(name))

    def add_then_fail(palace, args):
        palace.add_drawer("w", "r", "half done")
        raise RuntimeError("the embedder fell over")

    reg.add(Operation("add_then_fail", "test", obj({}), add_then_fail, mutates=True))
    space = MemorySpace()
    store = PalaceStore(space, maker(lambda: HashEmbedder()), registry=reg, clock=ticking())
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "x marks it"})
    before, journal_before = state(store.palace), space.read(journal_name(1))
    with pytest.raises(RuntimeError):
        store.call("add_then_fail")
    assert state(store.palace) == before and space.read(journal_name(1)) == journal_before
    store.call("bulk_replace", {"find": "x", "replace": "xx"})
    again = PalaceStore(space, maker(lambda: HashEmbedder()), registry=reg, clock=ticking())
    assert again.status.problem is None and state(again.palace) == state(store.palace)


def test_a_bulk_replace_that_cannot_finish_changes_nothing():
    space = MemorySpace()
    store = PalaceStore(space, maker(lambda: HashEmbedder()), clock=ticking())
    store.call("add_drawer", {"wing": "w", "room": "a", "content": "x"})
    store.call("add_drawer", {"wing": "w", "room": "b", "content": "x" * (MAX_CONTENT // 2 + 1)})
    before = state(store.palace)
    with pytest.raises(ValidationError, match="longer than"):
        store.call("bulk_replace", {"find": "x", "replace": "xx"})
    assert state(store.palace) == before


def _append(space, gen, record):
    space.append(journal_name(gen), journal.encode(record))


def test_a_record_that_fails_on_replay_is_set_aside_alone_and_the_rest_replays():
    space = MemorySpace()
    make = maker(lambda: HashEmbedder())
    store = PalaceStore(space, make, clock=ticking())
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
    gen, seq = store.status.generation, store.seq
    bad = Record(seq + 1, "update_drawer", {"drawer_id": "drawer_nope", "content": "x"}, 5.0)
    _append(space, gen, bad)
    _append(space, gen, Record(seq + 2, "add_drawer",
                               {"wing": "later", "room": "r", "content": "after it"}, 6.0))
    data = space.read(journal_name(gen))
    again = PalaceStore(space, make, clock=ticking())
    assert again.status.read_only and again.status.stopped_at == seq + 1
    assert "journal record 2 (update_drawer) failed on replay" in again.status.problem
    assert again.status.set_aside[0]["op"] == "update_drawer"
    assert space.read(journal_name(gen)) == data  # nothing deleted
    assert again.palace.counts()["drawers"] == 2  # the record after it still replays
    with pytest.raises(ReadOnly, match="palazzo repair"):
        again.call("add_drawer", {"wing": "w", "room": "r", "content": "new"})
    # A second boot finds the same; repair sets the failing record aside, byte for byte.
    assert PalaceStore(space, make, clock=ticking()).status.stopped_at == seq + 1
    out = again.repair()
    assert out["records"] == 1 and out["set_aside"][0]["seq"] == seq + 1
    assert space.read(out["rejected"]) == journal.encode(bad)
    assert not again.status.read_only and again.status.problem is None
    again.call("add_drawer", {"wing": "w", "room": "r", "content": "new"})
    reopened = PalaceStore(space, make, clock=ticking())
    assert reopened.palace.counts()["drawers"] == 3
    assert "later" in reopened.palace.wings  # a wing written after the failing record stays
    assert out["rejected"] in space.names()  # compaction keeps rejected records


class RacingSpace(MemorySpace):
    """Runs ``hook`` once, the first time a journal is read (a writer compacting meanwhile)."""

    hook = None

    def read(self, name):
        if name.startswith("journal-") and self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return super().read(name)


def test_a_reader_that_races_a_compaction_reads_again():
    space = RacingSpace()
    make = maker(lambda: HashEmbedder())
    writer = PalaceStore(space, make, clock=ticking())
    for text in TEXTS[:3]:
        writer.call("add_drawer", {"wing": "w", "room": "r", "content": text})

    def compact_meanwhile():
        writer.call("add_drawer", {"wing": "w", "room": "r", "content": TEXTS[3]})
        writer.compact()

    space.hook = compact_meanwhile
    reader = PalaceStore(space, make, clock=ticking(), read_only=True)
    assert reader.palace.counts()["drawers"] == 4 == writer.palace.counts()["drawers"]
    assert reader.status.problem is None


def test_a_read_only_copy_never_signs_with_a_key_it_cannot_store():
    space = MemorySpace()
    make = maker(lambda: HashEmbedder())
    writer = PalaceStore(space, make, clock=ticking())
    writer.call("add_turn", {"conversation": "c", "role": "user", "content": "hello"})
    turn = writer.call("list_turns", {"conversation": "c"})["turns"][0]["id"]
    assert space.read("keys.json") is None  # nothing signed yet
    reader = PalaceStore(space, make, clock=ticking(), read_only=True)
    with pytest.raises(ReadOnly, match="cannot store"):
        reader.call("slice_context", {"anchor": turn})
    assert space.read("keys.json") is None
    bundle = writer.call("slice_context", {"anchor": turn})["bundle"]
    reader.boot()
    assert reader.call("slice_context", {"anchor": turn})["bundle"]["token"] == bundle["token"]


@pytest.mark.parametrize("name, args", [
    ("update_drawer", {"drawer_id": "drawer_nope", "content": "x"}),
    ("update_drawer", {"drawer_id": "@kept", "content": "other text"}),  # would merge two
    ("delete_drawer", {"drawer_id": "drawer_nope"}),
    ("add_drawer", {"wing": "new wing", "room": "new room", "content": "x", "closet": "\x00"}),
    ("add_room", {"wing": "new wing", "name": "bad\x00room"}),
    ("bulk_replace", {"find": "kept text", "replace": " "}),  # would leave a drawer empty
])
def test_refusals_of_atomic_operations_change_nothing_and_cost_no_reload(name, args):
    space = MemorySpace()
    store = PalaceStore(space, maker(lambda: HashEmbedder()), clock=ticking())
    kept = store.call("add_drawer", {"wing": "w", "room": "r", "content": "kept text"})
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "other text"})
    args = {k: kept["drawer_id"] if v == "@kept" else v for k, v in args.items()}
    assert REGISTRY.get(name).atomic
    palace, before = store.palace, state(store.palace)
    with pytest.raises(PalazzoError):
        store.call(name, args)
    assert store.palace is palace  # no reload was needed...
    assert state(store.palace) == before  # ...because nothing had changed


def test_reindex_steps_are_saved_even_when_the_last_step_writes_no_vector():
    space = MemorySpace()
    bare = PalaceStore(space, lambda **kw: Palace(clock=lambda: 0.0, **kw), clock=ticking())
    for i in range(16):
        bare.call("add_drawer", {"wing": "w", "room": "r", "content": f"garden note {i}"})
    for text in ("no", "d"):  # no token the hash embedder can read: never a vector
        bare.call("add_drawer", {"wing": "w", "room": "r", "content": text})
    make = maker(lambda: HashEmbedder())
    store = PalaceStore(space, make, clock=ticking())
    steps = []
    while True:
        steps.append(store.call("reindex", {"limit": 8}))
        if not steps[-1]["remaining"] or len(steps) > 20:
            break
    assert sum(s["embedded"] for s in steps) == 16
    again = PalaceStore(space, make, clock=ticking())
    assert int(again.palace.drawers.has_vector.sum()) == 16


def test_a_write_between_reindex_steps_saves_the_steps_first_so_replay_links_the_same():
    space = MemorySpace()
    bare = PalaceStore(space, lambda **kw: Palace(clock=lambda: 0.0, **kw), clock=ticking())
    for text in TEXTS:
        bare.call("add_drawer", {"wing": "w", "room": "r", "content": text})
    make = maker(lambda: HashEmbedder())
    store = PalaceStore(space, make, clock=ticking())
    step = store.call("reindex", {"limit": 4})
    assert step["remaining"]  # a run left unfinished
    first = store.palace.drawers.content[store.palace.row(step["tried"][0])]
    store.call("add_drawer", {"wing": "w", "room": "r", "content": first + " again"})
    links = similar(store.palace)
    assert links  # the new drawer linked to vectors of the unfinished run
    src, dst = sorted(links)[0]
    store.call("pheromone_deposit", {"path": [[src, dst, "SIMILAR_TO"]]})
    again = PalaceStore(space, make, clock=ticking())  # the run never finished: a crash
    assert again.status.problem is None and similar(again.palace) == links


class Failing:
    """An embedder that fails (a palazzo error) while an operation runs, after it changed
    the store."""

    name, dim, fingerprint = "failing", 16, "failing-16"

    def embed(self, texts):
        raise PalazzoError("the embedder gave up")


def test_an_atomic_operation_that_fails_after_a_change_still_reloads():
    space = MemorySpace()
    store = PalaceStore(space, lambda **kw: Palace(embedder=Failing(), clock=lambda: 0.0, **kw),
                        clock=ticking())
    before = state(store.palace)
    with pytest.raises(PalazzoError, match="gave up"):
        store.call("add_drawer", {"wing": "w", "room": "r", "content": "half added"})
    assert state(store.palace) == before and store.palace.counts()["drawers"] == 0


def test_a_record_too_large_to_read_back_is_refused_and_changes_nothing(monkeypatch):
    space = MemorySpace()
    store = PalaceStore(space, maker(lambda: HashEmbedder()), clock=ticking())
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "small"})
    before = state(store.palace)
    monkeypatch.setattr(journal, "MAX_RECORD", 4096)
    with pytest.raises(ValidationError, match="more than the 4096"):
        store.call("add_drawer", {"wing": "w", "room": "r", "content": "big " * 2000})
    assert state(store.palace) == before
    monkeypatch.setattr(journal, "MAX_RECORD", 1000)
    with pytest.raises(StorageError, match="more than the 1000"):
        store.compact()  # a snapshot boot could not read back is never written
    monkeypatch.undo()
    assert state(PalaceStore(space, maker(lambda: HashEmbedder()),
                             clock=ticking()).palace) == before


class CompactionFails(MemorySpace):
    fail = False

    def write(self, name, data):
        if self.fail and name.startswith("journal-"):
            raise StorageError("no space left")
        super().write(name, data)


def test_a_failed_automatic_compaction_keeps_the_acknowledged_write():
    space = CompactionFails()
    make = maker(lambda: HashEmbedder())
    store = PalaceStore(space, make, clock=ticking(), compact_records=2)
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "one"})
    space.fail = True
    out = store.call("add_drawer", {"wing": "w", "room": "r", "content": "two"})  # compacts
    assert out["created"] and "compaction failed" in store.status.problem
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "three"})
    space.fail = False
    again = PalaceStore(space, make, clock=ticking())
    assert again.palace.counts()["drawers"] == 3 == store.palace.counts()["drawers"]


def _json_snapshot_that_fails_its_checks(palace, data):
    """A palace JSON snapshot (the format before the columnar one) whose drawer id no longer
    matches its text."""
    doc = export_palace(palace, vectors="float32", exported_at=0.0)
    doc["palace"]["drawers"][0]["content"] = "changed, so the id no longer matches"
    return journal.encode(journal.Record(0, "snapshot", doc, 0.0))


def _columnar_snapshot_of_a_newer_version(palace, data):
    """The columnar snapshot as a palazzo writing version 9 would: whole, but unknown."""
    meta, arrays = snapshot.unpack(data)
    with mock.patch.object(snapshot, "VERSION", 9):
        return snapshot.pack(meta, arrays)


@pytest.mark.parametrize(("rewrite", "why"), [
    (_json_snapshot_that_fails_its_checks, "cannot be read here"),
    (_columnar_snapshot_of_a_newer_version, "version 9 is not read here")])
def test_a_whole_snapshot_this_version_refuses_opens_read_only_and_is_kept(rewrite, why):
    space = MemorySpace()
    make = maker(lambda: HashEmbedder())
    store = PalaceStore(space, make, clock=ticking())
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
    store.compact()
    name = f"snapshot-{store.status.generation:08d}.pz"
    space.write(name, rewrite(store.palace, space.read(name)))
    data = space.read(name)
    again = PalaceStore(space, make, clock=ticking())
    assert again.status.read_only and why in again.status.problem
    with pytest.raises(ReadOnly):
        again.call("add_drawer", {"wing": "w", "room": "r", "content": "new"})
    assert space.read(name) == data


def test_a_reindex_step_is_journaled_with_the_drawers_it_tried_so_any_order_replays_it(
        monkeypatch):
    space = MemorySpace()
    bare = PalaceStore(space, lambda **kw: Palace(clock=lambda: 0.0, **kw), clock=ticking())
    for text in TEXTS:
        bare.call("add_drawer", {"wing": "w", "room": "r", "content": text})
    make = maker(lambda: HashEmbedder())
    store = PalaceStore(space, make, clock=ticking())
    step = store.call("reindex", {"limit": 3})
    record = journal.scan(space.read(journal_name(store.status.generation))).records[-1]
    assert record.op == "reindex" and record.args["drawers"] == step["tried"]
    before = state(store.palace)
    # A later palazzo that would embed in another order replays the same step all the same.
    monkeypatch.setattr(Palace, "embedding_queue", lambda self: np.flatnonzero(
        ~self.drawers.has_vector[: self.drawers.size]))  # oldest first, row by row
    patched = [bare.palace.drawers.ids[int(r)] for r in bare.palace.embedding_queue()[:3]]
    assert set(patched) != set(step["tried"])  # the step alone would take other drawers
    again = PalaceStore(space, make, clock=ticking())
    assert again.status.problem is None and state(again.palace) == before


def test_opening_first_steps_replay_and_survive_compaction_with_the_rest_still_to_come():
    space = MemorySpace()
    bare = PalaceStore(space, lambda **kw: Palace(clock=lambda: 0.0, chunk_size=120, **kw),
                       clock=ticking())  # imported text-first, as the page does
    bare.call("import_conversation", {"conversation": "chat", "messages": [
        {"role": "user", "content": "How do I prune roses in winter without hurting buds? " * 6,
         "timestamp": 1_000.0},
        {"role": "assistant", "content": "Cut above a bud.", "timestamp": 1_001.0}]})
    make = maker(lambda: HashEmbedder(), chunk_size=120)
    store = PalaceStore(space, make, clock=ticking())
    first = store.call("reindex", {"limit": 8, "opening_first": True})
    assert first["remaining"] == 1 and len(store.palace.drawers.chunks.opening_rows()) == 1
    before = state(store.palace)
    again = PalaceStore(space, make, clock=ticking())  # the journal replayed
    assert state(again.palace) == before
    assert len(again.palace.drawers.chunks.opening_rows()) == 1
    again.compact()
    third = PalaceStore(space, make, clock=ticking())  # from the snapshot
    assert state(third.palace) == before
    rest = third.call("reindex", {"limit": 8, "opening_first": True})
    assert rest == {**rest, "embedded": 1, "remaining": 0}
    assert len(third.palace.drawers.chunks.opening_rows()) == 0
    done = state(third.palace)
    assert state(PalaceStore(space, make, clock=ticking()).palace) == done
