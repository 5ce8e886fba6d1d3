"""The ONNX graph of MiniLM: ONNX Runtime on it gives the NumPy model's vectors (so the
fingerprint is shared), the same bytes every build, and a clear refusal of int8 weights."""

from pathlib import Path

import numpy as np
import pytest

from palazzo.embed.minilm import MiniLMEmbedder
from palazzo.errors import WeightsError

pytestmark = pytest.mark.cpython_only  # onnx and onnxruntime are CPython packages
onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
graph = pytest.importorskip("palazzo.embed.graph")

ROOT = Path(__file__).resolve().parents[3]
WEIGHTS = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"
REFERENCE = ROOT / "tests" / "palazzo" / "data" / "minilm_reference.json"
TEXTS = ["the palace", "a memory note , the rooms", "wing drawer!", "b",
         "the palace room drawer wing a b c . , ! memory note the palace room drawer"]


def run(model: bytes, numpy_model: MiniLMEmbedder, texts: list[str]) -> np.ndarray:
    """Return ONNX Runtime's vectors of ``texts``, fed the NumPy model's token ids."""
    ids = [numpy_model.encode(t).ids for t in texts]
    feed = np.zeros((len(ids), max(map(len, ids))), np.int64)
    for row, seq in enumerate(ids):
        feed[row, : len(seq)] = seq
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return session.run(None, {"input_ids": feed, "attention_mask": (feed != 0).astype(np.int64)})[0]


@pytest.mark.parametrize("stored", ["float16", "float32"])
def test_onnx_runtime_gives_the_numpy_models_vectors(tiny_npz, stored):
    data = tiny_npz()
    model = MiniLMEmbedder(data, blas=False)
    got = run(graph.build(data, stored), model, TEXTS)
    np.testing.assert_allclose(got, model.embed(TEXTS), atol=1e-5)


def test_the_graph_is_the_same_bytes_every_time_and_carries_the_fingerprint(tiny_npz):
    data = tiny_npz()
    first = graph.build(data)
    assert first == graph.build(data)
    props = {p.key: p.value for p in onnx.load_from_string(first).metadata_props}
    assert props["fingerprint"] == MiniLMEmbedder(data).fingerprint
    assert graph.fingerprint_of(data, "fp16") == props["fingerprint"]
    assert graph.build(tiny_npz(seed=3)) != first


def test_int8_weights_have_no_onnx_form(tiny_npz):
    with pytest.raises(WeightsError, match="int8"):
        graph.build(tiny_npz(int8=True))


def test_shipped_weights_within_1e_5_of_the_numpy_model_on_real_paragraphs():
    if not WEIGHTS.is_file():
        pytest.skip("the site build has not made minilm.npz yet")
    import json

    texts = [i["text"] for i in json.loads(REFERENCE.read_text())["items"] if i["vector"]]
    data = WEIGHTS.read_bytes()
    model = MiniLMEmbedder(data)
    got = run(graph.build(data), model, texts)
    want = model.embed(texts)
    assert np.abs(got - want).max() <= 1e-5
    assert (got * want).sum(axis=1).min() >= 0.9999
