"""Shared by the engine tests: a tiny random MiniLM in the real weights file's format."""

import io
import json

import numpy as np
import pytest

TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "palace", "room", "drawer"]
TINY_VOCAB += ["wing", "a", "b", "c", ".", ",", "!", "##s", "##ed", "memory", "note"]


def make_tiny_npz(layers: int = 2, seed: int = 0, int8: bool = False) -> bytes:
    """Return a ``minilm.npz`` of random weights: 384 wide, ``layers`` layers, 16 tokens."""
    rng = np.random.default_rng(seed)
    h, ff = 384, 64

    def r(*shape, scale=0.05):
        return (rng.standard_normal(shape) * scale).astype(np.float16)

    arrays = {
        "embeddings.position_embeddings.weight": r(32, h),
        "embeddings.token_type_embeddings.weight": r(2, h),
        "embeddings.LayerNorm.weight": (1 + r(h)).astype(np.float16),
        "embeddings.LayerNorm.bias": r(h),
    }
    word = r(len(TINY_VOCAB), h, scale=0.5)
    if int8:
        scale = (np.abs(word.astype(np.float32)).max(axis=1) / 127).astype(np.float32)
        arrays["embeddings.word_embeddings.weight.int8"] = np.rint(word / scale[:, None]).astype(
            np.int8
        )
        arrays["embeddings.word_embeddings.weight.scale"] = scale
    else:
        arrays["embeddings.word_embeddings.weight"] = word
    for i in range(layers):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            arrays[p + f"attention.self.{name}.weight"] = r(h, h)
            arrays[p + f"attention.self.{name}.bias"] = r(h)
        arrays[p + "attention.output.dense.weight"] = r(h, h)
        arrays[p + "attention.output.dense.bias"] = r(h)
        arrays[p + "intermediate.dense.weight"] = r(ff, h)
        arrays[p + "intermediate.dense.bias"] = r(ff)
        arrays[p + "output.dense.weight"] = r(h, ff)
        arrays[p + "output.dense.bias"] = r(h)
        for ln in ("attention.output.LayerNorm.", "output.LayerNorm."):
            arrays[p + ln + "weight"] = (1 + r(h)).astype(np.float16)
            arrays[p + ln + "bias"] = r(h)
    meta = {
        "format": "palazzo-minilm",
        "format_version": 1,
        "variant": "int8-fp16" if int8 else "fp16",
        "hidden_size": h,
        "num_hidden_layers": layers,
        "num_attention_heads": 12,
        "layer_norm_eps": 1e-12,
        "max_seq_length": 16,
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    arrays["vocab"] = np.frombuffer("\n".join(TINY_VOCAB).encode() + b"\n", np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


@pytest.fixture(scope="session")
def tiny_npz():
    """The maker of tiny random weights files: ``tiny_npz(layers=2, seed=0, int8=False)``."""
    return make_tiny_npz


@pytest.fixture(scope="session")
def tiny_vocab() -> str:
    """The text of the tiny model's vocab.txt."""
    return "\n".join(TINY_VOCAB) + "\n"


def _race(work, threads: int = 4) -> list[BaseException]:
    """Run ``work(k)`` for k in range(``threads``) in that many threads at once, with a tiny
    switch interval so they interleave within a call; return the exceptions they raised."""
    import sys
    import threading

    errors: list[BaseException] = []

    def run(k):
        try:
            work(k)
        except BaseException as err:  # noqa: BLE001 (what a race raises is the finding)
            errors.append(err)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
    finally:
        sys.setswitchinterval(old)
    return errors


@pytest.fixture
def race():
    """:func:`_race`: threads sharing one object (the palace server's two copies of a palace
    share their embedder and stemmers)."""
    return _race
