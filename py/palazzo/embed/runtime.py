"""The ``minilm`` embedder on ONNX Runtime under CPython (the ``fast`` extra).

The same weights file, tokenizer, batching and vectors as :class:`~palazzo.embed.minilm.
MiniLMEmbedder` (to ~1e-7, same fingerprint: a palace moves between the two without
re-embedding), with the forward pass run by ``onnxruntime`` on the graph
:func:`palazzo.embed.graph.build` writes from the npz. Needs ``onnxruntime`` and ``onnx``
(``pip install palazzo[fast]``); without them :func:`available` is False and hosts use the
NumPy model.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from palazzo.embed.minilm import BATCH_TOKENS, batches, read_card


def available() -> bool:
    """Return whether ``onnxruntime`` and ``onnx`` are installed (two spec lookups)."""
    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


class OnnxMiniLM:
    """all-MiniLM-L6-v2 sentence vectors (name ``minilm``, 384 dimensions) on ONNX Runtime.

    ``weights``: a ``minilm.npz`` path or its bytes. ``graph``: where to keep the ONNX graph
    made from them (written once, read on later loads; None builds it in memory, about a
    second). ``model``: a ready ONNX model to run instead (a quantised variant, for
    benchmarks: the fingerprint then says ``-onnx-<sha256 prefix of model>``, because its
    vectors differ). ``threads``: ONNX Runtime's intra-op threads (0: its default, one a
    core).
    Loading costs about 2 s and 200 MB; ``embed`` about half the NumPy model's time.
    """

    name = "minilm"
    dim = 384

    def __init__(self, weights: str | os.PathLike[str] | bytes, *,
                 graph: str | os.PathLike[str] | None = None, model: bytes | None = None,
                 threads: int = 0, batch_tokens: int = BATCH_TOKENS) -> None:
        import onnxruntime as ort

        from palazzo.embed.graph import INPUTS, OUTPUT, build

        data = weights if isinstance(weights, bytes | bytearray) else Path(weights).read_bytes()
        # The tokenizer, variant and fingerprint as the NumPy model reads them from the file.
        card = read_card(bytes(data))
        self.tokenizer = card.tokenizer
        self.variant = card.variant
        self._fingerprint = card.fingerprint
        if model is None:
            model = _graph_bytes(bytes(data), graph, build)
        else:
            self._fingerprint += f"-onnx-{hashlib.sha256(model).hexdigest()[:12]}"
        options = ort.SessionOptions()
        options.intra_op_num_threads = int(threads)
        # Threads that wait for work sleep instead of spinning: the same wall time, about
        # 6 % less CPU at 2 threads (580 texts: 15.1–15.9 vs 16.9 CPU-s, 8.2–8.6 vs 8.5 s).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = ort.InferenceSession(model, options,
                                             providers=["CPUExecutionProvider"])
        self._inputs, self._output = INPUTS, OUTPUT
        self.batch_tokens = batch_tokens
        self.runtime = f"ONNX Runtime {ort.__version__} (CPU)"

    @property
    def fingerprint(self) -> str:
        """The NumPy model's fingerprint of the same weights file."""
        return self._fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), 384) float32 array of unit sentence vectors, as
        :meth:`MiniLMEmbedder.embed` does (a text with no token gets an all-zero row)."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts; wrap a single text in a list")
        encodings = [self.tokenizer.encode(t) for t in texts]
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)
        real = [i for i, enc in enumerate(encodings) if enc.content_length > 0]
        for group in batches([len(encodings[i].ids) for i in real], self.batch_tokens):
            rows = [real[j] for j in group]
            t = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), t), np.int64)
            for k, i in enumerate(rows):
                ids[k, : len(encodings[i].ids)] = encodings[i].ids
            feed = dict(zip(self._inputs, (ids, (ids != 0).astype(np.int64)), strict=True))
            out[rows] = self._session.run([self._output], feed)[0]
        return out


def _graph_bytes(npz: bytes, graph: str | os.PathLike[str] | None, build) -> bytes:
    """Return the ONNX graph of ``npz``: read from ``graph`` when it was made from these
    weights (its name carries their sha256), else built (and written there)."""
    if graph is None:
        return build(npz)
    path = Path(graph)
    digest = hashlib.sha256(npz).hexdigest()[:16]
    path = path.with_name(f"{path.stem}-{digest}{path.suffix or '.onnx'}")
    if path.is_file():
        return path.read_bytes()
    model = build(npz)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(model)
    tmp.replace(path)
    return model
