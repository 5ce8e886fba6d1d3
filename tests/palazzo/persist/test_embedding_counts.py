"""Counts are true: "embedded N" counts vectors written, drawers that cannot get a vector (no
token the hashing embedder can read) are named, and embedding in steps always ends."""

import itertools

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.formats.palacefile import export_palace
from palazzo.hosts.embedding import embedding_steps
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace

REASON = "no token the embedder can read"


def unembedded_palace(texts):
    """A palace JSON document holding ``texts`` as drawers (each in a room of its own, so
    equal texts stay apart), without vectors."""
    bare = Palace(clock=lambda: 0.0)
    for i, text in enumerate(texts):
        bare.add_drawer("w", f"r{i}", text)
    return export_palace(bare, vectors=None, exported_at=0.0)


def make(**kw):
    return Palace(embedder=HashEmbedder(), clock=lambda: 0.0, **kw)


def store_of(texts):
    store = PalaceStore(MemorySpace(), make)
    store.call("import", {"document": unembedded_palace(texts), "reindex": False})
    return store


def test_reindex_counts_vectors_written_and_names_drawers_without_one():
    store = store_of(["no", "d", "The launch is on friday.", "Basil needs sun."])
    out = store.call("reindex")
    assert out["embedded"] == 2 and out["remaining"] == 0
    assert out["total_embedded"] == store.call("palace_status")["embedded"] == 2
    ids = {store.palace.drawers.ids[r] for r in range(4)
           if store.palace.drawers.content[r] in ("no", "d")}
    assert out["no_vector"]["count"] == 2 and set(out["no_vector"]["drawer_ids"]) == ids
    assert out["no_vector"]["reason"] == REASON
    again = store.call("reindex")  # they are still missing, and still said so
    assert again["embedded"] == 0 and again["no_vector"]["count"] == 2
    forced = store.call("reindex", {"force": True})
    assert forced["embedded"] == 2 and forced["no_vector"]["count"] == 2


def test_the_list_of_drawers_without_a_vector_is_capped_but_counted():
    out = store_of(["no", "d", "...", "the"] * 15).call("reindex")
    assert out["embedded"] == 0
    assert out["no_vector"]["count"] == 60 and len(out["no_vector"]["drawer_ids"]) == 20


def test_steps_end_when_more_drawers_than_a_step_can_never_get_a_vector():
    # 40 drawers "no"-like first, then 30 real ones: a step of 16 used to try the same 16
    # hopeless drawers for ever, reporting 16 embedded each time.
    hopeless = ["no", "d", "a", "the"] * 10
    real = [f"Note {i}: the violin lesson moved to room {i}." for i in range(30)]
    store = store_of(hopeless + real)
    gen = store.status.generation
    steps = embedding_steps(store.call, 16)
    seen = list(itertools.islice(steps, 50))
    assert len(seen) < 50, "the steps never ended"
    assert seen[-1][:2] == (30, 70) and seen[-1][2] == "hash"
    done = [0] + [s[0] for s in seen]
    assert all(0 < b - a <= 16 for a, b in zip(done, done[1:], strict=False))  # ≤ limit a step
    assert steps.no_vector["count"] == 40 and steps.no_vector["reason"] == REASON
    assert store.call("palace_status")["embedded"] == 30
    assert store.status.generation == gen  # each step is a journal record, not a snapshot
    assert store.status.journal_records == len(seen)
    assert call(PalaceStore(store.space, make).palace, "palace_status")["embedded"] == 30


def test_every_step_is_durable_a_reboot_midway_keeps_what_was_embedded():
    real = [f"Note {i}: the violin lesson moved to room {i}." for i in range(40)]
    store = store_of(real)
    steps = iter(embedding_steps(store.call, 16))
    assert next(steps)[0] == 16  # one step, then the tab is closed
    again = PalaceStore(store.space, make)
    assert call(again.palace, "palace_status")["embedded"] == 16  # nothing embedded twice
    assert not again.status.problem
    rest = list(embedding_steps(again.call, 16))
    assert rest[-1][:2] == (24, 24)
