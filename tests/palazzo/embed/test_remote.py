"""The remote MiniLM embedder (vectors computed by the browser's embedding worker) and how the
engine waits for its vectors: drawers stored at once, embedded when the vectors arrive."""

import numpy as np
import pytest

from palazzo import call
from palazzo.embed.minilm import MiniLMEmbedder
from palazzo.embed.remote import RemoteEmbedder
from palazzo.errors import VectorsPending
from palazzo.palace import Palace


@pytest.fixture
def pair(tiny_npz, tiny_vocab):
    """A remote embedder and the NumPy model of the same tiny weights (the "worker")."""
    model = MiniLMEmbedder(tiny_npz(), batch_tokens=24)
    return RemoteEmbedder(tiny_vocab, model.fingerprint, 16, "test", batch_tokens=24), model


def serve(remote: RemoteEmbedder, model: MiniLMEmbedder, texts: list[str]) -> int:
    """Do what the worker does: embed the planned batches from their ids; return batches."""
    plan = remote.requests(texts)
    for batch in plan:
        assert batch.ids.dtype == np.int32 and batch.ids.shape[0] == len(batch.texts)
        vectors = model._forward([list(row[:n]) for row, n in zip(batch.ids, batch.lengths,
                                                                    strict=True)])
        remote.supply(batch.texts, vectors)
    return len(plan)


def test_planned_ids_are_the_numpy_models_and_vectors_come_back_in_order(pair):
    remote, model = pair
    texts = ["the palace", "a memory note , the rooms", "wing drawer!", "the palace"]
    plan = remote.requests(texts)
    for batch in plan:
        for text, row, n in zip(batch.texts, batch.ids, batch.lengths, strict=True):
            assert list(row[:n]) == model.encode(text).ids and not row[n:].any()
    assert sorted(t for b in plan for t in b.texts) == sorted(set(texts))
    serve(remote, model, texts)
    np.testing.assert_allclose(remote.embed(texts), model.embed(texts), atol=1e-6)
    assert remote.fingerprint == model.fingerprint and remote.name == "minilm"


def test_a_text_not_supplied_raises_pending_and_given_texts_are_not_asked_again(pair):
    remote, model = pair
    serve(remote, model, ["the palace"])
    with pytest.raises(VectorsPending) as err:
        remote.embed(["the palace", "wing drawer"])
    assert err.value.count == 1 and err.value.code == "vectors_pending"
    assert [b.texts for b in remote.requests(["the palace", "wing drawer"])] == [["wing drawer"]]


def test_a_text_without_tokens_gets_the_zero_row_without_a_batch(pair):
    remote, _ = pair
    assert remote.requests(["\u200b"]) == []
    assert not remote.embed(["\u200b"]).any()


def test_batches_keep_to_the_token_budget(pair):
    remote, _ = pair
    texts = [" ".join(["palace"] * k) for k in range(1, 12)]
    for batch in remote.requests(texts):
        assert len(batch.texts) == 1 or batch.ids.size <= 24


def test_a_drawer_added_before_its_vector_is_found_by_words_then_embedded(pair):
    remote, model = pair
    palace = Palace(embedder=remote)
    did = call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "the palace room"})
    status = call(palace, "palace_status", {})
    assert status["drawers"] == 1 and status["embedded"] == 0
    assert status["embedder"]["runtime"] == "test"
    hits = call(palace, "search", {"query": "palace"})["results"]
    assert [h["drawer_id"] for h in hits] == [did["drawer_id"]]  # words alone decide
    assert hits[0]["scores"]["vector_rank"] is None
    serve(remote, model, ["the palace room"])
    assert call(palace, "reindex", {"limit": 5})["embedded"] == 1
    serve(remote, model, ["palace"])
    hits = call(palace, "search", {"query": "palace"})["results"]
    assert hits[0]["scores"]["vector_rank"] == 1


def test_a_reindex_step_stops_where_the_vectors_end(pair):
    remote, model = pair
    palace = Palace(embedder=remote)
    texts = [f"the palace {w}" for w in ("room", "drawer", "wing", "note", "memory")]
    for text in texts:
        call(palace, "add_drawer", {"wing": "w", "room": "r", "content": text})
    queue = [palace.drawers.content[int(r)] for r in palace.embedding_queue()]
    serve(remote, model, queue[:2])  # the vectors of the two drawers a step takes first
    out = call(palace, "reindex", {"limit": 4})
    assert (out["embedded"], out["remaining"], out["no_vector"]["count"]) == (2, 3, 0)
    serve(remote, model, queue[2:])
    out = call(palace, "reindex", {"limit": 4})
    assert (out["embedded"], out["remaining"]) == (3, 0)
    assert call(palace, "palace_status", {})["embedded"] == 5
