"""Embedder speed and fidelity: MiniLM in NumPy vs ONNX Runtime fp32 vs ONNX Runtime int8.

:func:`compare` (``palazzo bench embedder``) measures, in one run on one weights file:

- load time and model bytes of each variant: ``numpy`` (:class:`~palazzo.embed.minilm.
  MiniLMEmbedder`), ``ort-fp32`` (:class:`~palazzo.embed.runtime.OnnxMiniLM` on the graph the
  site ships, float16-stored weights computed in float32) and ``ort-int8`` (that graph stored
  as float32, then ``onnxruntime.quantization.quantize_dynamic``, per-channel QInt8 weights);
- paragraphs per second at batch 1 and batch 8 on paragraphs of about 100 and 256 tokens (cut
  from the LongMemEval file's sessions to that many word pieces of the model's own tokenizer;
  tokenising is inside the timing, as it is in a real ``embed``);
- query latency (the file's questions one at a time, as a search embeds them);
- int8 against fp32: for each question, the top-1 session of its haystack by cosine under each
  (nearest-neighbour agreement), the mean and least cosine between the two vectors of every
  text, and the file's retrieval metrics through the real search (hybrid) with each.

:func:`run` is the older single-embedder measurement (``--embedder``).
"""

from __future__ import annotations

import hashlib
import os
import platform
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench.longmemeval import load, session_text

VARIANTS = ("numpy", "ort-fp32", "ort-int8")
# The int8 variant is kept only if it loses no more than this (issue 15's bar).
NN_AGREEMENT_MIN = 0.99
METRIC_DROP_MAX = 0.005
DECISION_METRICS = ("recall_any@5", "recall_all@5", "ndcg_any@10")


def run(path: Path, embedder, queries: int = 50, paragraphs: int = 200) -> dict[str, Any]:
    """Return query latency (ms: median, p95) and paragraphs per second for ``embedder``."""
    inner = getattr(embedder, "inner", embedder)
    data = load(path)
    qs = [q["question"] for q in data][:queries]
    texts = list(dict.fromkeys(_sessions(data)))[:paragraphs]
    inner.embed([qs[0]])  # warm up (weights into cache, BLAS threads started)
    lat = _query_ms(inner, qs)
    t = time.perf_counter()
    inner.embed(texts)
    seconds = time.perf_counter() - t
    return {
        "benchmark": "embedder",
        "embedder": inner.name,
        "fingerprint": inner.fingerprint,
        "queries": len(qs),
        **lat,
        "paragraphs": len(texts),
        "paragraph_chars_mean": round(sum(map(len, texts)) / len(texts), 1),
        "paragraphs_per_s": round(len(texts) / seconds, 2),
    }


# -- pure pieces ---------------------------------------------------------------------------

def token_paragraphs(texts: Sequence[str], tokenizer, tokens: int, count: int) -> list[str]:
    """Return up to ``count`` paragraphs of ``tokens`` ids each (``[CLS]`` and ``[SEP]``
    counted, never truncated, at least ``tokens`` - 4), made of the words of ``texts`` in
    order, a paragraph running on into the next text when one is too short.

    ``tokenizer`` is a :class:`~palazzo.embed.wordpiece.WordPiece`. Cost: one encode a word
    and one a paragraph.
    """
    if tokens < 6:
        raise ValueError("tokens must be at least 6")
    pieces: dict[str, int] = {}

    def size(word: str) -> int:
        if word not in pieces:
            pieces[word] = tokenizer.encode(word).content_length
        return pieces[word]

    out: list[str] = []
    words: list[str] = []
    used = 2
    for text in texts:
        for word in text.split():
            n = size(word)
            if used + n > tokens:
                paragraph = _fit(words, tokenizer, tokens)
                if paragraph is not None:
                    out.append(paragraph)
                    if len(out) == count:
                        return out
                words, used = [], 2
                if n + 2 > tokens:
                    continue  # one word longer than a paragraph: skip it
            words.append(word)
            used += n
    return out


def _fit(words: list[str], tokenizer, tokens: int) -> str | None:
    """Return ``words`` joined, dropping words from the end until the text is at most
    ``tokens`` ids untruncated; None if it ends shorter than ``tokens`` - 4."""
    words = list(words)
    while words:
        text = " ".join(words)
        enc = tokenizer.encode(text)
        if not enc.truncated and len(enc.ids) <= tokens:
            return text if len(enc.ids) >= tokens - 4 else None
        words.pop()
    return None


def top1(queries: np.ndarray, docs: np.ndarray) -> int:
    """Return the row of ``docs`` nearest to ``queries`` (one unit vector) by cosine."""
    return int(np.argmax(docs @ queries))


def row_cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return the cosine between each row of ``a`` and the same row of ``b`` (zero rows: 0)."""
    num = np.einsum("ij,ij->i", a, b)
    den = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    return np.where(den > 0, num / np.maximum(den, 1e-30), 0.0)


def int8_decision(agreement: float, fp32: dict[str, float], int8: dict[str, float]
                  ) -> dict[str, Any]:
    """Return whether int8 earns its place: nearest-neighbour agreement at least
    :data:`NN_AGREEMENT_MIN` and no :data:`DECISION_METRICS` value lower than fp32's by more
    than :data:`METRIC_DROP_MAX`; with the numbers and the reasons it fails."""
    drops = {m: round(fp32[m] - int8[m], 4) for m in DECISION_METRICS}
    why = []
    if agreement < NN_AGREEMENT_MIN:
        why.append(f"nearest-neighbour agreement {agreement:.3f} < {NN_AGREEMENT_MIN}")
    why += [f"{m} drops {d:.4f} > {METRIC_DROP_MAX}" for m, d in drops.items()
            if d > METRIC_DROP_MAX]
    return {"keep_int8": not why, "nn_agreement": round(agreement, 4), "drops": drops,
            "why_not": why}


# -- measuring -----------------------------------------------------------------------------

def _sessions(data: list[dict[str, Any]]) -> list[str]:
    return [t for q in data for t in map(session_text, q["haystack_sessions"]) if t.strip()]


def _query_ms(inner, questions: Sequence[str]) -> dict[str, float]:
    lat = []
    for q in questions:
        t = time.perf_counter()
        inner.embed([q])
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {"query_ms_median": round(statistics.median(lat), 2),
            "query_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 2)}


def quantise_int8(npz: bytes) -> tuple[bytes, dict[str, Any]]:
    """Return the int8 ONNX model of the weights ``npz`` (the float32-stored graph through
    ``quantize_dynamic``, per-channel QInt8 weights) and what changed: op counts before and
    after. Needs ``onnx`` and ``onnxruntime``. Cost: a few seconds."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from palazzo.embed.graph import build

    fp32 = build(npz, "float32")
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "fp32.onnx", Path(tmp) / "int8.onnx"
        src.write_bytes(fp32)
        quantize_dynamic(src, dst, per_channel=True, weight_type=QuantType.QInt8)
        int8 = dst.read_bytes()

    def ops(model: bytes) -> dict[str, int]:
        return dict(Counter(n.op_type for n in onnx.load_from_string(model).graph.node))

    before, after = ops(fp32), ops(int8)
    return int8, {"fp32_float32_stored_bytes": len(fp32), "ops_before": before,
                  "ops_after": after,
                  "matmuls_with_weights": before.get("MatMul", 0) - after.get("MatMul", 0),
                  "matmuls_left_float": after.get("MatMul", 0)}


def _make(variant: str, npz_path: Path, threads: int, int8: bytes | None):
    from palazzo.embed.minilm import MiniLMEmbedder

    if variant == "numpy":
        return MiniLMEmbedder(npz_path)
    from palazzo.embed.runtime import OnnxMiniLM

    return OnnxMiniLM(npz_path, threads=threads, model=int8 if variant == "ort-int8" else None)


def _speed(inner, paragraphs: list[str], batch: int) -> tuple[dict[str, Any], np.ndarray]:
    """Embed ``paragraphs`` in batches of exactly ``batch`` (one forward pass each)."""
    keep = inner.batch_tokens
    inner.batch_tokens = 10**9  # one embed call = one padded batch
    try:
        inner.embed(paragraphs[:batch])  # warm up at this shape
        vectors = []
        t = time.perf_counter()
        for i in range(0, len(paragraphs), batch):
            vectors.append(inner.embed(paragraphs[i:i + batch]))
        seconds = time.perf_counter() - t
    finally:
        inner.batch_tokens = keep
    return {"seconds": round(seconds, 3),
            "paragraphs_per_s": round(len(paragraphs) / seconds, 2)}, np.concatenate(vectors)


def compare(path: Path, npz_path: Path, variants: Sequence[str] = VARIANTS, *,
            paragraphs: int = 64, tokens: Sequence[int] = (100, 256),
            batches: Sequence[int] = (1, 8), queries: int = 50, threads: Sequence[int] = (1,),
            questions: int | None = None, retrieval: bool = True,
            int8_out: Path | None = None,
            progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure ``variants`` (of :data:`VARIANTS`) on the LongMemEval file ``path`` with the
    weights ``npz_path``; see the module's docstring. ``questions`` limits the int8 checks to
    the file's first questions; ``retrieval`` False skips the search runs; ``int8_out``
    keeps the int8 model there; ONNX Runtime variants run at each of ``threads`` (0: its
    default, a thread a core; the first count's key is the bare variant name, others
    ``<variant>@<n>t``); NumPy's BLAS threads are the environment's. Cost: a few minutes
    on two cores."""
    from palazzo.bench import longmemeval
    from palazzo.embed.cache import CachedEmbedder

    say = progress or (lambda _msg: None)
    unknown = set(variants) - set(VARIANTS)
    if unknown:
        raise ValueError(f"unknown variants {sorted(unknown)}; choose from {VARIANTS}")
    data = load(path)
    npz = npz_path.read_bytes()
    int8 = info8 = None
    result: dict[str, Any] = {
        "benchmark": "embedder-compare",
        "when": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "data": str(path),
        "weights": str(npz_path),
        "weights_sha256": hashlib.sha256(npz).hexdigest()[:16],
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average": [round(x, 2) for x in os.getloadavg()]},
        "ort_threads": list(threads),
        "openblas_threads": os.environ.get("OPENBLAS_NUM_THREADS", "default"),
        "variants": {},
        "speed": [],
    }
    if "ort-int8" in variants:
        say("quantising to int8")
        t = time.perf_counter()
        int8, info8 = quantise_int8(npz)
        info8["quantise_s"] = round(time.perf_counter() - t, 2)
        if int8_out is not None:
            int8_out.parent.mkdir(parents=True, exist_ok=True)
            int8_out.write_bytes(int8)
    try:
        import onnxruntime

        result["onnxruntime"] = onnxruntime.__version__
    except ImportError:
        pass

    texts = list(dict.fromkeys(_sessions(data)))
    qs = [q["question"] for q in data][:queries]
    made: dict[str, Any] = {}
    shapes: dict[tuple[int, int], dict[str, np.ndarray]] = {}
    sets: dict[int, list[str]] = {}
    runs = [(v, None if v == "numpy" else th) for v in variants
            for th in ([0] if v == "numpy" else threads)]
    for variant, th in runs:
        key = variant if th in (None, threads[0]) else f"{variant}@{th}t"
        say(f"loading {key}")
        t = time.perf_counter()
        inner = _make(variant, npz_path, th or 0, int8)
        load_s = time.perf_counter() - t
        made.setdefault(variant, inner)
        if not sets:
            sets = {n: token_paragraphs(texts, inner.tokenizer, n, paragraphs) for n in tokens}
            result["paragraphs"] = {str(n): {"count": len(p), "ids_mean": round(statistics.mean(
                len(inner.tokenizer.encode(x).ids) for x in p), 1)} for n, p in sets.items()}
        size = {"numpy": len(npz), "ort-fp32": None, "ort-int8": len(int8 or b"")}[variant]
        if variant == "ort-fp32":
            from palazzo.embed.graph import build

            size = len(build(npz))
        inner.embed([qs[0]])
        entry = {"runtime": getattr(inner, "runtime", variant), "fingerprint": inner.fingerprint,
                 "threads": os.environ.get("OPENBLAS_NUM_THREADS", "default") if th is None
                 else th or "default",
                 "load_s": round(load_s, 2), "model_bytes": size, **_query_ms(inner, qs)}
        if variant == "ort-int8":
            entry["quantisation"] = info8
        result["variants"][key] = entry
        for n, group in sets.items():
            for b in batches:
                say(f"{key}: {n} tokens, batch {b}")
                row, vectors = _speed(inner, group, b)
                result["speed"].append({"variant": key, "tokens": n, "batch": b,
                                        "paragraphs": len(group), **row})
                shapes.setdefault((n, b), {})[key] = vectors
    # Same vectors? numpy and int8 against fp32 on the speed paragraphs.
    fidelity = {}
    for (n, b), by in shapes.items():
        if "ort-fp32" not in by:
            continue
        for other in ("numpy", "ort-int8"):
            if other in by:
                cos = row_cosines(by["ort-fp32"], by[other])
                fidelity.setdefault(other, []).append(
                    {"tokens": n, "batch": b,
                     "max_abs": float(np.abs(by["ort-fp32"] - by[other]).max()),
                     "min_cosine": round(float(cos.min()), 6)})
    result["vs_ort_fp32"] = fidelity
    if "ort-fp32" in made and "ort-int8" in made:
        result["int8_vs_fp32"] = _int8_checks(data[:questions], made, retrieval, say,
                                              longmemeval, CachedEmbedder, path)
    return result


def _int8_checks(data, made, retrieval, say, longmemeval, CachedEmbedder, path):
    """Nearest-neighbour agreement, cosines and (optionally) retrieval of int8 vs fp32."""
    cached = {v: CachedEmbedder(made[v], maxsize=1_000_000) for v in ("ort-fp32", "ort-int8")}
    same, cosines = 0, []
    for i, q in enumerate(data):
        docs = [t for t in map(session_text, q["haystack_sessions"]) if t.strip()]
        top, vecs = {}, {}
        for v, emb in cached.items():
            vecs[v] = emb.embed([q["question"], *docs])
            top[v] = top1(vecs[v][0], vecs[v][1:])
        same += top["ort-fp32"] == top["ort-int8"]
        cosines.append(row_cosines(vecs["ort-fp32"], vecs["ort-int8"]))
        if (i + 1) % 10 == 0:
            say(f"int8 vs fp32: {i + 1}/{len(data)} questions")
    cos = np.concatenate(cosines)
    out: dict[str, Any] = {"questions": len(data), "texts": int(cos.size),
                           "nn_agreement": round(same / len(data), 4),
                           "nn_same": same,
                           "mean_cosine": round(float(cos.mean()), 5),
                           "min_cosine": round(float(cos.min()), 5)}
    if retrieval:
        metrics = {}
        subset = path
        if len(data) < len(load(path)):
            import json

            with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as tmp:
                json.dump(data, tmp)
            subset = Path(tmp.name)
        try:
            for v, emb in cached.items():
                say(f"retrieval (hybrid) with {v}")
                res = longmemeval.run(subset, emb, "hybrid")
                metrics[v] = {m: res["metrics"][m] for m in
                              ("recall_any@5", "recall_all@5", "ndcg_any@10", "recall_any@10",
                               "recall_all@10")}
        finally:
            if subset != path:
                subset.unlink()
        out["retrieval_hybrid"] = metrics
        out["decision"] = int8_decision(out["nn_agreement"], metrics["ort-fp32"],
                                        metrics["ort-int8"])
    return out


def summary(result: dict[str, Any]) -> str:
    """Return :func:`compare`'s ``result`` as Markdown tables (what the docs quote)."""
    lines = ["| variant | load s | model MB | query ms (median, p95) |",
             "| --- | --- | --- | --- |"]
    for v, e in result["variants"].items():
        mb = f"{e['model_bytes'] / 1e6:.1f}" if e.get("model_bytes") else "?"
        lines.append(f"| {v} | {e['load_s']:.2f} | {mb} | {e['query_ms_median']:.1f}, "
                     f"{e['query_ms_p95']:.1f} |")
    shapes = sorted({(r["tokens"], r["batch"]) for r in result["speed"]})
    rate = {(r["variant"], r["tokens"], r["batch"]): r["paragraphs_per_s"]
            for r in result["speed"]}
    base = next(iter(result["variants"]), None)
    lines += ["", "| variant | " + " | ".join(f"{n} tok, batch {b}" for n, b in shapes) + " |",
              "| --- |" + " --- |" * len(shapes)]
    for v in result["variants"]:
        cells = []
        for n, b in shapes:
            r = rate.get((v, n, b))
            ref = rate.get((base, n, b))
            ratio = f" ({r / ref:.1f}×)" if r and ref and v != base else ""
            cells.append("?" if r is None else f"{r:.1f}{ratio}")
        lines.append(f"| {v} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"paragraphs/s; ratios against {base}")
    check = result.get("int8_vs_fp32")
    if check:
        lines += ["", f"int8 vs fp32 on {check['questions']} questions: nearest-neighbour "
                  f"agreement {check['nn_agreement']:.3f} ({check['nn_same']}), mean cosine "
                  f"{check['mean_cosine']:.4f}, least {check['min_cosine']:.4f}"]
        ret = check.get("retrieval_hybrid")
        if ret:
            names = list(next(iter(ret.values())))
            lines += ["", "| hybrid search with | " + " | ".join(names) + " |",
                      "| --- |" + " --- |" * len(names)]
            lines += [f"| {v} | " + " | ".join(f"{m[k]:.4f}" for k in names) + " |"
                      for v, m in ret.items()]
            d = check["decision"]
            lines += ["", "int8: " + ("keep" if d["keep_int8"] else
                                      "do not keep (" + "; ".join(d["why_not"]) + ")")]
    return "\n".join(lines)
