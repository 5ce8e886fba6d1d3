"""all-MiniLM-L6-v2 as an ONNX graph, written from the same ``minilm.npz`` the NumPy model reads.

ONNX Runtime (``onnxruntime`` under CPython, onnxruntime-web in the browser) runs this graph
4–5× faster than the NumPy forward pass of :mod:`palazzo.embed.minilm`. The graph is that
forward pass operator for operator: word-piece + position embeddings, LayerNorm, six layers of
softmax attention and exact-erf GELU, attention-mask mean pooling and L2 normalisation inside
the graph, so a runtime returns finished sentence vectors.

Inputs ``input_ids`` and ``attention_mask`` (int64, batch × tokens, ids from
:class:`palazzo.embed.wordpiece.WordPiece`, padding with 0 and mask 0); output
``sentence_embedding`` (float32, batch × 384, unit norm).

The weights are the npz's own float16 values, stored as float16 initializers and cast to
float32 in the graph (ONNX Runtime folds the casts when it loads the session), so the file
stays at the npz's 45 MB and the arithmetic is the NumPy model's: the vectors agree to about
1e-7 and carry the same :attr:`fingerprint` (``minilm-<variant>-<npz sha256 prefix>``), which
the graph records in its metadata. A palace embedded by one path needs no re-embedding by the
other.

Needs the ``onnx`` package (build time, or the ``fast`` extra under CPython); the output is
byte-for-byte deterministic for the same npz. Cost: about a second and 100 MB of memory.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np

from palazzo.embed.minilm import WORD_TABLE, open_npz
from palazzo.errors import WeightsError

OPSET = 17
PRODUCER = "palazzo"
INPUTS = ("input_ids", "attention_mask")
OUTPUT = "sentence_embedding"


def fingerprint_of(npz: bytes, variant: str) -> str:
    """Return the fingerprint the NumPy model gives the vectors of the weights ``npz``."""
    return f"minilm-{variant}-{hashlib.sha256(npz).hexdigest()[:16]}"


def build(npz: bytes, stored: str = "float16") -> bytes:
    """Return the serialised ONNX model of the weights ``npz`` (a palazzo ``minilm.npz``).

    ``stored`` "float16" keeps the weights as float16 initializers cast in the graph (the
    shipped form, 45 MB); "float32" stores the same values as float32 (91 MB), the form
    ONNX Runtime's quantisation tools read (they quantise only MatMuls fed by initializers).

    Raises :class:`WeightsError` when ``npz`` is not such a file or is the ``int8-fp16``
    variant (its int8 word table has no float16 form to store), ImportError without ``onnx``.
    Cost: about a second; the result is about as large as ``npz``.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    arrays = open_npz(npz)
    meta = json.loads(arrays.pop("meta").tobytes())
    if WORD_TABLE + ".int8" in arrays:
        raise WeightsError("the int8-fp16 weights have no ONNX form: build from the fp16 npz")
    heads = int(meta["num_attention_heads"])
    hidden = int(meta["hidden_size"])
    eps = float(meta["layer_norm_eps"])
    nodes: list = []
    inits: list = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    if stored not in ("float16", "float32"):
        raise ValueError(f"stored must be float16 or float32, not {stored!r}")

    def weight(name: str, value: np.ndarray) -> str:
        """A float16 initializer cast to float32: half the bytes, the NumPy model's values."""
        if stored == "float32":
            return const(name, np.asarray(value, dtype=np.float16).astype(np.float32))
        const(name + ".f16", np.asarray(value, dtype=np.float16))
        nodes.append(helper.make_node("Cast", [name + ".f16"], [name], to=TensorProto.FLOAT))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs) -> str:
        nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def layer_norm(x: str, pre: str, out: str) -> str:
        g = weight(pre + ".weight", arrays[pre + ".weight"])
        b = weight(pre + ".bias", arrays[pre + ".bias"])
        return node("LayerNormalization", [x, g, b], out, axis=-1, epsilon=eps)

    def linear(x: str, pre: str, out: str, scale: float | None = None) -> str:
        # MatMul wants (in, out): store the transpose of PyTorch's (out, in).
        if scale is not None and stored == "float32":
            # The NumPy model pre-scales the query weights in float32: do so here.
            s32 = np.float32(scale)
            w = const(pre + ".weight.T", arrays[pre + ".weight"].T.astype(np.float32) * s32)
            b = const(pre + ".bias", arrays[pre + ".bias"].astype(np.float32) * s32)
            return node("Add", [node("MatMul", [x, w], out + ".mm"), b], out)
        w = weight(pre + ".weight.T", arrays[pre + ".weight"].T)
        b = weight(pre + ".bias", arrays[pre + ".bias"])
        if scale is not None:  # the NumPy model pre-scales the query weights in float32
            s = const(pre + ".scale", np.array(scale, dtype=np.float32))
            w = node("Mul", [w, s], pre + ".weight.T.scaled")
            b = node("Mul", [b, s], pre + ".bias.scaled")
        return node("Add", [node("MatMul", [x, w], out + ".mm"), b], out)

    # Embeddings. Token type is always 0 for one text: its row joins the position table.
    word = weight("word", arrays[WORD_TABLE])
    positions = arrays["embeddings.position_embeddings.weight"].astype(np.float32) + \
        arrays["embeddings.token_type_embeddings.weight"][0].astype(np.float32)
    pos = const("positions", positions.astype(np.float32))
    zero, one = const("i0", np.array([0], np.int64)), const("i1", np.array([1], np.int64))
    length = node("Slice", [node("Shape", ["input_ids"], "ids.shape"), one,
                            const("i2", np.array([2], np.int64))], "ids.length")
    x = node("Add", [node("Gather", [word, "input_ids"], "emb.word", axis=0),
                     node("Slice", [pos, zero, length, zero], "emb.pos")], "emb.sum")
    x = layer_norm(x, "embeddings.LayerNorm", "emb.out")

    # Padded keys get the most negative float, as in the NumPy model: their weight is 0.
    mask = node("Cast", ["attention_mask"], "mask.f", to=TensorProto.FLOAT)
    lowest = const("lowest", np.array(np.finfo(np.float32).min, np.float32))
    unit = const("one", np.array(1.0, np.float32))
    bias = node("Mul", [node("Sub", [unit, mask], "mask.off"), lowest], "mask.bias2")
    bias = node("Unsqueeze", [bias, const("axes12", np.array([1, 2], np.int64))], "mask.bias")

    size = hidden // heads
    merge_shape = const("ctx.shape", np.array([0, 0, hidden], np.int64))
    half, root2 = const("half", np.array(0.5, np.float32)), \
        const("sqrt2", np.array(math.sqrt(2), np.float32))
    for i in range(int(meta["num_hidden_layers"])):
        pre, att = f"encoder.layer.{i}.", f"encoder.layer.{i}.attention."
        q = linear(x, att + "self.query", f"l{i}.q", scale=1 / math.sqrt(size))
        k = linear(x, att + "self.key", f"l{i}.k")
        v = linear(x, att + "self.value", f"l{i}.v")
        heads_of = {}
        for name, t in (("q", q), ("k", k), ("v", v)):
            shaped = node("Reshape", [t, const(f"l{i}.{name}.shape",
                                                np.array([0, 0, heads, size], np.int64))],
                          f"l{i}.{name}.heads")
            perm = [0, 2, 3, 1] if name == "k" else [0, 2, 1, 3]
            heads_of[name] = node("Transpose", [shaped], f"l{i}.{name}.t", perm=perm)
        scores = node("Add", [node("MatMul", [heads_of["q"], heads_of["k"]], f"l{i}.qk"), bias],
                      f"l{i}.scores")
        probs = node("Softmax", [scores], f"l{i}.probs", axis=-1)
        ctx = node("Transpose", [node("MatMul", [probs, heads_of["v"]], f"l{i}.ctx.h")],
                   f"l{i}.ctx.t", perm=[0, 2, 1, 3])
        ctx = node("Reshape", [ctx, merge_shape], f"l{i}.ctx")
        attn = linear(ctx, att + "output.dense", f"l{i}.attn")
        x = layer_norm(node("Add", [attn, x], f"l{i}.res1"), att + "output.LayerNorm",
                       f"l{i}.ln1")
        up = linear(x, pre + "intermediate.dense", f"l{i}.up")
        erf = node("Erf", [node("Div", [up, root2], f"l{i}.up.s")], f"l{i}.erf")
        gelu = node("Mul", [node("Mul", [half, up], f"l{i}.up.h"),
                            node("Add", [unit, erf], f"l{i}.erf1")], f"l{i}.gelu")
        down = linear(gelu, pre + "output.dense", f"l{i}.down")
        x = layer_norm(node("Add", [down, x], f"l{i}.res2"), pre + "output.LayerNorm",
                       f"l{i}.ln2")

    # Mean over the real tokens, then unit length (guards as in the NumPy model).
    weights = node("Unsqueeze", [mask, const("axis2", np.array([2], np.int64))], "pool.w")
    total = node("ReduceSum", [node("Mul", [x, weights], "pool.masked"), one], "pool.sum",
                 keepdims=0)
    count = node("Max", [node("ReduceSum", [weights, one], "pool.n0", keepdims=0),
                         const("tiny", np.array(1e-9, np.float32))], "pool.n")
    pooled = node("Div", [total, count], "pooled")
    norm = node("Sqrt", [node("ReduceSum", [node("Mul", [pooled, pooled], "sq"),
                                            const("last", np.array([-1], np.int64))],
                              "sq.sum", keepdims=1)], "norm0")
    norm = node("Max", [norm, const("tiny12", np.array(1e-12, np.float32))], "norm")
    node("Div", [pooled, norm], OUTPUT)

    graph = helper.make_graph(
        nodes, "all-MiniLM-L6-v2",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "tokens"])
         for n in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", hidden])],
        inits,
    )
    model = helper.make_model(graph, producer_name=PRODUCER,
                              opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8  # readable by every onnxruntime since 1.14
    fp = fingerprint_of(npz, meta["variant"])
    helper.set_model_props(model, {"fingerprint": fp, "max_seq_length":
                                   str(meta["max_seq_length"]), "model": meta.get("model", "")})
    onnx.checker.check_model(model)
    return model.SerializeToString()
