"""The hashing embedder: deterministic everywhere, unit rows, lexical similarity."""

import os
import subprocess
import sys

import numpy as np
import pytest

from palazzo.embed import Embedder
from palazzo.embed.hashing import HashEmbedder, feature_hash, features


def test_implements_the_protocol():
    emb = HashEmbedder()
    assert isinstance(emb, Embedder)
    assert (emb.name, emb.dim, emb.fingerprint) == ("hash", 384, "hash-384-v1")
    assert HashEmbedder(dim=64).fingerprint == "hash-64-v1"


def test_features_are_terms_and_padded_trigrams():
    assert features("The cat, the CAT!") == {"w:cat": 2, "c:<ca": 2, "c:cat": 2, "c:at>": 2}
    assert features("a") == {}  # a stopword only
    assert features("go") == {"w:go": 1, "c:<go": 1, "c:go>": 1}


def test_golden_hashes_pin_the_recipe():
    # If these change, every stored "hash-…-v1" vector is wrong: bump the fingerprint instead.
    assert feature_hash("w:cat") == 14181260885882674936
    assert feature_hash("c:<ca") == 15086991656768177723
    vec = HashEmbedder().embed(["The cat, the CAT!"])[0]
    assert np.flatnonzero(vec).tolist() == [59, 284, 376, 380]
    third = 1 / 7**0.5  # word weight 1+ln 2, each trigram half of it: norm² = 7·third²
    np.testing.assert_allclose(vec[[59, 284, 376, 380]], [-third, -third, -2 * third, -third],
                               rtol=1e-6)


def test_rows_are_unit_or_zero():
    texts = ["The cat sat on the mat", "", "!!! ...", "the of and", "naïve café", "日本語"]
    vecs = HashEmbedder().embed(texts)
    assert vecs.shape == (6, 384) and vecs.dtype == np.float32
    norms = np.linalg.norm(vecs, axis=1)
    np.testing.assert_allclose(norms[[0, 4, 5]], 1.0, rtol=1e-6)
    assert norms[[1, 2, 3]].tolist() == [0.0, 0.0, 0.0]
    assert HashEmbedder().embed([]).shape == (0, 384)


def test_shared_words_and_word_pieces_are_similar():
    emb = HashEmbedder()
    q, near, piece, far = emb.embed(
        ["my cat likes fish", "the cat ate the fish", "cats and fishes", "quarterly tax report"]
    )
    assert q @ near > q @ piece > q @ far
    assert q @ piece > 0.2


def test_batch_equals_single_and_instances_agree():
    texts = ["alpha beta", "gamma", "alpha beta"]
    a = HashEmbedder().embed(texts)
    b = np.vstack([HashEmbedder().embed([t]) for t in texts])
    np.testing.assert_array_equal(a, b)


@pytest.mark.cpython_only  # Pyodide has no subprocesses
def test_same_vectors_in_another_process_with_another_hash_seed():
    code = (
        "import sys; from palazzo.embed.hashing import HashEmbedder;"
        "sys.stdout.write(HashEmbedder().embed(['Déjà vu, the cat!'])[0].tobytes().hex())"
    )
    env = dict(os.environ, PYTHONHASHSEED="12345")
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout
    here = HashEmbedder().embed(["Déjà vu, the cat!"])[0].tobytes().hex()
    assert out == here


def test_rejects_bad_arguments():
    with pytest.raises(ValueError):
        HashEmbedder(dim=0)
    with pytest.raises(TypeError):
        HashEmbedder().embed("one string")


def test_remembered_features_give_the_same_vectors_as_fresh_ones(monkeypatch):
    from palazzo.embed import hashing

    texts = ["The cat sat on the mat", "cats and mats", "", "naïve café 日本語 the cat",
             "mat " * 50, "A dog. A cat. A cow."]
    fresh = np.vstack([HashEmbedder().embed([t]) for t in texts])
    emb = HashEmbedder()
    assert [emb._features(t) for t in texts] == [features(t) for t in texts]
    np.testing.assert_array_equal(emb.embed(texts), fresh)
    monkeypatch.setattr(hashing, "_MEMO_LIMIT", 5)  # the memos fill and are cleared
    small = HashEmbedder()
    for _ in range(3):
        np.testing.assert_array_equal(small.embed(texts), fresh)
    assert len(small._memo) == len(small._slot) == len(small._weight)
