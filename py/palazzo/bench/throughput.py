"""Store throughput under CPython: insert, hybrid search, export and import at several sizes.

Embeddings are precomputed (random unit vectors looked up by text), so the numbers measure
the palace — store, BM25 index, graph, fusion — not the embedder.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from palazzo.formats.palacefile import export_palace, parse, read_palace
from palazzo.palace import Palace
from palazzo.retrieval.search import search

WORDS = 5_000
WORDS_PER_DRAWER = 60
QUERIES = 200


class LookupEmbedder:
    """An embedder whose vectors were computed beforehand (text -> unit vector)."""

    name = "lookup"

    def __init__(self, table: dict[str, np.ndarray], dim: int) -> None:
        self.table = table
        self.dim = dim

    @property
    def fingerprint(self) -> str:
        return f"lookup-{self.dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.stack([self.table[t] for t in texts])


def _corpus(n: int, rng: np.random.Generator) -> list[str]:
    vocab = [f"w{i}" for i in range(WORDS)]
    # Zipf-like word frequencies, as in natural text.
    p = 1.0 / np.arange(1, WORDS + 1)
    p /= p.sum()
    words = rng.choice(WORDS, size=(n, WORDS_PER_DRAWER), p=p)
    return [f"drawer {i} " + " ".join(vocab[w] for w in row) for i, row in enumerate(words)]


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def measure(size: int, dim: int = 384, seed: int = 0, similar: bool = False,
            queries: int = QUERIES) -> dict[str, Any]:
    """Return timings for one palace of ``size`` drawers (seconds and milliseconds)."""
    rng = np.random.default_rng(seed)
    texts = _corpus(size, rng)
    qtexts = [" ".join(t.split()[2:6]) for t in rng.choice(texts, size=queries)]
    table = dict(zip(texts + qtexts, _unit(rng, size + queries, dim), strict=False))
    emb = LookupEmbedder(table, dim)
    palace = Palace(embedder=emb, clock=lambda: 0.0,
                    similar_threshold=0.9 if similar else None)
    rooms = [(f"wing{i % 8}", f"room{i % 64}") for i in range(size)]
    t0 = time.perf_counter()
    for (wing, room), text in zip(rooms, texts, strict=True):
        palace.add_drawer(wing, room, text)
    insert = time.perf_counter() - t0

    lat = []
    for q in qtexts:
        t = time.perf_counter()
        search(palace, q, limit=10)
        lat.append((time.perf_counter() - t) * 1000)

    t = time.perf_counter()
    text = json.dumps(export_palace(palace, vectors="float32"))
    export_s = time.perf_counter() - t
    t = time.perf_counter()
    read_palace(parse(text), lambda **kw: Palace(embedder=emb, clock=lambda: 0.0, **kw))
    import_s = time.perf_counter() - t
    return {
        "drawers": size,
        "similar_links": similar,
        "insert_total_s": round(insert, 3),
        "insert_per_drawer_us": round(insert / size * 1e6, 1),
        "search_hybrid_ms_p50": round(float(np.percentile(lat, 50)), 3),
        "search_hybrid_ms_p95": round(float(np.percentile(lat, 95)), 3),
        "export_s": round(export_s, 3),
        "export_mb": round(len(text) / 1e6, 1),
        "import_s": round(import_s, 3),
    }


def run(sizes: Sequence[int], similar: bool = False,
        progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Measure every size in ``sizes``; returns the results with the machine they ran on."""
    import os
    import platform

    results = []
    for i, size in enumerate(sizes):
        results.append(measure(size, similar=similar))
        if progress is not None:
            progress(i + 1, len(sizes))
    return {
        "benchmark": "throughput",
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "results": results,
    }
