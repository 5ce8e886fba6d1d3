"""The NumPy MiniLM embedder: parity with sentence-transformers, batching, refusals, lookup.

Parity needs the shipped weights (``dist/vendor/models/minilm/minilm.npz``, made by the site
build); the other tests also run on a tiny random model of the same format, so they run
wherever the engine does (Pyodide included).
"""

import hashlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from palazzo.embed import Embedder
from palazzo.embed.minilm import (
    ENV_VAR,
    MiniLMEmbedder,
    WeightsError,
    batches,
    default_weights_path,
    find_weights,
    read_card,
)

ROOT = Path(__file__).resolve().parents[3]
WEIGHTS = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"
REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "minilm_reference.json").read_text())
EMBEDDED = [i for i in REFERENCE["items"] if i["vector"] is not None]
BLANK = [i["text"] for i in REFERENCE["items"] if i["vector"] is None]
MAX_ABS_DIFF = 1e-3
MIN_COSINE = 0.9999


def _scipy_present() -> bool:
    try:
        import scipy.linalg.blas  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    if not WEIGHTS.is_file():
        pytest.skip(
            f"{WEIGHTS.relative_to(ROOT)} is missing: build it with "
            "`.venv/bin/python -m sitebuild build`"
        )
    return MiniLMEmbedder(WEIGHTS)


@pytest.fixture(scope="module")
def reference_vectors(minilm) -> np.ndarray:
    return minilm.embed([i["text"] for i in EMBEDDED])


def test_shipped_weights_reproduce_sentence_transformers(reference_vectors):
    ref = np.array([i["vector"] for i in EMBEDDED], dtype=np.float64)
    got = reference_vectors.astype(np.float64)
    assert np.abs(got - ref).max() <= MAX_ABS_DIFF
    cosines = (got * ref).sum(axis=1) / np.linalg.norm(ref, axis=1)
    assert cosines.min() >= MIN_COSINE


def test_shipped_weights_read_the_reference_token_ids(minilm):
    for item in REFERENCE["items"]:
        assert minilm.encode(item["text"]).ids == item["ids"], item["text"][:40]


def test_vectors_have_unit_norm(reference_vectors):
    assert reference_vectors.dtype == np.float32
    assert reference_vectors.shape == (len(EMBEDDED), 384)
    np.testing.assert_allclose(np.linalg.norm(reference_vectors, axis=1), 1, atol=1e-6)


def test_batches_give_the_single_text_results(minilm, reference_vectors):
    texts = [i["text"] for i in EMBEDDED]
    picks = [0, 5, 9, 15, 20, len(texts) - 1]  # short, accented, CJK, emoji, code, 256 tokens
    for k in picks:
        np.testing.assert_allclose(minilm.embed([texts[k]])[0], reference_vectors[k], atol=2e-6)


def test_fingerprint_names_the_variant_and_hashes_the_file(minilm):
    digest = hashlib.sha256(WEIGHTS.read_bytes()).hexdigest()
    assert minilm.fingerprint == f"minilm-{minilm.variant}-{digest[:16]}"
    assert isinstance(minilm, Embedder) and minilm.name == "minilm" and minilm.dim == 384


# A tiny random model in the same file format (conftest.py's ``tiny_npz``): the mechanics,
# without the 45 MB weights.

TINY_TEXTS = [
    "the palace",
    "a memory note , the rooms",
    "wing drawer!",
    "b",
    "the palace room drawer wing a b c . , ! memory note the palace room drawer",  # > 16
    "notes noted unknownword",
]


@pytest.fixture(scope="module")
def tiny(tiny_npz) -> MiniLMEmbedder:
    return MiniLMEmbedder(tiny_npz(), batch_tokens=24)


def test_tiny_model_gives_unit_vectors_in_input_order(tiny):
    vectors = tiny.embed(TINY_TEXTS)
    assert vectors.shape == (len(TINY_TEXTS), 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-6)
    for text, row in zip(TINY_TEXTS, vectors, strict=True):
        np.testing.assert_allclose(tiny.embed([text])[0], row, atol=1e-6)


def test_batch_size_does_not_change_results(tiny_npz):
    data = tiny_npz()
    one = MiniLMEmbedder(data, batch_tokens=1).embed(TINY_TEXTS)
    big = MiniLMEmbedder(data, batch_tokens=10_000).embed(TINY_TEXTS)
    np.testing.assert_allclose(one, big, atol=1e-6)


@pytest.mark.skipif(not _scipy_present(), reason="SciPy is not installed: no sgemm path")
def test_numpy_and_sgemm_paths_agree(tiny_npz):
    data = tiny_npz(int8=True)
    blas = MiniLMEmbedder(data, blas=True)
    plain = MiniLMEmbedder(data, blas=False)
    assert blas.uses_blas and not plain.uses_blas
    np.testing.assert_allclose(blas.embed(TINY_TEXTS), plain.embed(TINY_TEXTS), atol=1e-6)


def test_long_texts_are_cut_to_the_maximum_length(tiny):
    long = TINY_TEXTS[4]
    assert len(tiny.encode(long).ids) == 16 and tiny.encode(long).truncated
    np.testing.assert_allclose(tiny.embed([long + " palace"]), tiny.embed([long]), atol=1e-6)


@pytest.mark.parametrize("blank", ["", *BLANK])
def test_text_without_tokens_gets_no_vector_and_the_rest_are_embedded(tiny, blank):
    out = tiny.embed(["the palace", blank, "a drawer"])
    assert not out[1].any()
    np.testing.assert_allclose(out[[0, 2]], tiny.embed(["the palace", "a drawer"]), atol=1e-6)


def test_no_texts_give_an_empty_matrix(tiny):
    assert tiny.embed([]).shape == (0, 384)


def test_a_bare_string_is_refused(tiny):
    with pytest.raises(TypeError, match="sequence of texts"):
        tiny.embed("the palace")


def test_fingerprint_changes_with_the_weights(tiny_npz):
    a, b = MiniLMEmbedder(tiny_npz(seed=1)), MiniLMEmbedder(tiny_npz(seed=2))
    assert a.fingerprint != b.fingerprint and a.fingerprint.startswith("minilm-fp16-")


@pytest.mark.parametrize("int8", [False, True])
def test_the_card_has_the_models_tokenizer_variant_and_fingerprint(tiny_npz, int8):
    data = tiny_npz(seed=3, int8=int8)
    card, model = read_card(data), MiniLMEmbedder(data)
    assert (card.fingerprint, card.variant) == (model.fingerprint, model.variant)
    text = "the palace , a memory note wings!"
    assert card.tokenizer.encode(text).ids == model.encode(text).ids
    with pytest.raises(WeightsError, match="not a palazzo minilm.npz"):
        read_card(b"PK certainly not weights")


def test_missing_or_foreign_weights_are_clear_errors(tmp_path):
    with pytest.raises(WeightsError, match="sitebuild build"):
        MiniLMEmbedder(tmp_path / "nope.npz")
    with pytest.raises(WeightsError, match="not a palazzo minilm.npz"):
        MiniLMEmbedder(b"certainly not weights")
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(b'{"format": "other"}', np.uint8))
    with pytest.raises(WeightsError, match="'other'"):
        MiniLMEmbedder(buf.getvalue())


def test_find_weights_prefers_an_explicit_path_then_the_env_var_then_home(tmp_path, monkeypatch):
    env_file, explicit = tmp_path / "env.npz", tmp_path / "explicit.npz"
    env_file.write_bytes(b"x")
    explicit.write_bytes(b"x")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert find_weights() is None
    home_file = default_weights_path()
    assert home_file == tmp_path / "home" / ".cache" / "palazzo" / "minilm-fp16.npz"
    home_file.parent.mkdir(parents=True)
    home_file.write_bytes(b"x")
    assert find_weights() == home_file
    monkeypatch.setenv(ENV_VAR, str(env_file))
    assert find_weights() == env_file
    assert find_weights(explicit) == explicit
    assert find_weights(tmp_path / "typo.npz") is None  # an explicit path is never replaced


def test_batches_sort_by_length_and_respect_the_token_budget():
    lengths = [10, 3, 250, 7, 3, 120]
    groups = batches(lengths, 20)
    assert sorted(i for b in groups for i in b) == list(range(len(lengths)))
    for batch in groups:
        assert len(batch) == 1 or len(batch) * max(lengths[i] for i in batch) <= 20
    flat = [lengths[i] for b in groups for i in b]
    assert flat == sorted(flat)
