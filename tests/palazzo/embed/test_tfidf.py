"""The TF-IDF embedder: fitted idf, hashed random projection, fingerprint and state."""

import json

import numpy as np
import pytest

from palazzo.embed import Embedder
from palazzo.embed.tfidf import TfidfEmbedder, projection_row

CORPUS = [
    "My cat sleeps on the sofa all day; cats love warm places.",
    "The quarterly tax report is due next Tuesday.",
    "We repainted the bedroom walls a pale blue colour.",
    "Our team migrated the database to a new server.",
    "I bought fresh bread and cheese at the farmers market.",
]


def test_implements_the_protocol():
    emb = TfidfEmbedder()
    assert isinstance(emb, Embedder)
    assert (emb.name, emb.dim) == ("tfidf", 384)
    assert emb.fingerprint.startswith("tfidf-384-")


def test_projection_rows_are_sparse_ternary_and_seeded():
    rows = np.stack([projection_row(f"term{i}", 384, 0) for i in range(300)])
    assert set(np.unique(rows).tolist()) <= {-1, 0, 1}
    assert abs((rows == 1).mean() - 1 / 6) < 0.01
    assert abs((rows == -1).mean() - 1 / 6) < 0.01
    assert projection_row("cat", 384, 0)[:12].tolist() == [0, 0, 1, 0, 0, 0, 1, -1, -1, 1, -1, -1]
    assert not np.array_equal(projection_row("cat", 384, 0), projection_row("cat", 384, 1))
    assert not np.array_equal(projection_row("cat", 384, 0), projection_row("cats", 384, 0))


def test_unfitted_embedding_uses_idf_one():
    emb = TfidfEmbedder(dim=64)
    vec = emb.embed(["cat cat dog"])[0]
    raw = (1 + np.log(2)) * projection_row("cat", 64, 0) + projection_row("dog", 64, 0)
    np.testing.assert_allclose(vec, raw / np.linalg.norm(raw), rtol=1e-6)
    np.testing.assert_array_equal(emb.idf(["cat", "unseen"]), [1.0, 1.0])


def test_fit_sets_smooth_idf():
    emb = TfidfEmbedder().fit(["cat dog", "cat", "fish"])
    assert emb.n_docs == 3
    assert emb.df == {"cat": 2, "dog": 1, "fish": 1}
    np.testing.assert_allclose(
        emb.idf(["cat", "dog", "bird"]),
        [np.log(4 / 3) + 1, np.log(4 / 2) + 1, np.log(4 / 1) + 1],
    )


def test_deterministic_across_instances_and_batches():
    a = TfidfEmbedder(seed=3).fit(CORPUS)
    b = TfidfEmbedder(seed=3).fit(CORPUS)
    np.testing.assert_array_equal(a.embed(CORPUS), b.embed(CORPUS))
    np.testing.assert_array_equal(a.embed(CORPUS)[2], a.embed([CORPUS[2]])[0])
    assert not np.array_equal(a.embed(CORPUS), TfidfEmbedder(seed=4).fit(CORPUS).embed(CORPUS))


def test_rows_are_unit_or_zero():
    emb = TfidfEmbedder().fit(CORPUS)
    vecs = emb.embed(["", "the of and", "!!!", "brand new words", CORPUS[0]])
    assert vecs.dtype == np.float32 and vecs.shape == (5, 384)
    norms = np.linalg.norm(vecs, axis=1)
    assert norms[:3].tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_allclose(norms[3:], 1.0, rtol=1e-6)


def test_state_round_trips_through_json():
    emb = TfidfEmbedder(dim=128, seed=9, stopwords=["foo", "the"]).fit(CORPUS + ["Ünïcödé 日本"])
    state = json.loads(json.dumps(emb.state()))
    back = TfidfEmbedder.from_state(state)
    assert back.state() == emb.state()
    assert back.fingerprint == emb.fingerprint
    np.testing.assert_array_equal(back.embed(CORPUS), emb.embed(CORPUS))
    assert TfidfEmbedder.from_state(TfidfEmbedder().state()).fingerprint == (
        TfidfEmbedder().fingerprint
    )


def test_from_state_rejects_other_states():
    good = TfidfEmbedder().fit(["a cat"]).state()
    for bad in (
        {**good, "name": "hash"},
        {**good, "version": 99},
        {**good, "df": {"cat": 5}},
        {**good, "n_docs": -1},
    ):
        with pytest.raises(ValueError):
            TfidfEmbedder.from_state(bad)


def test_fingerprint_changes_with_the_fit():
    emb = TfidfEmbedder()
    unfitted = emb.fingerprint
    emb.fit(CORPUS)
    fitted = emb.fingerprint
    assert fitted != unfitted
    assert emb.fit(list(CORPUS)).fingerprint == fitted  # same fit, same fingerprint
    assert emb.fit(CORPUS[:-1]).fingerprint != fitted
    assert emb.fit(CORPUS + [""]).fingerprint != fitted  # N alone changed
    assert TfidfEmbedder(seed=1).fit(CORPUS).fingerprint != fitted
    assert TfidfEmbedder(dim=64).fit(CORPUS).fingerprint.startswith("tfidf-64-")


def test_a_document_about_cats_ranks_first_for_a_cat_question():
    emb = TfidfEmbedder().fit(CORPUS)
    docs = emb.embed(CORPUS)
    for query, best in [
        ("Where does my cat like to sleep?", 0),
        ("When is the tax report due?", 1),
        ("What colour are the bedroom walls?", 2),
        ("Which server hosts the database?", 3),
    ]:
        cos = docs @ emb.embed([query])[0]
        assert int(np.argmax(cos)) == best, (query, cos.round(3).tolist())


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        TfidfEmbedder(dim=0)
    with pytest.raises(ValueError):
        TfidfEmbedder(seed="x")
    with pytest.raises(TypeError):
        TfidfEmbedder().embed("one string")
