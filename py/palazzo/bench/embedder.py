"""Embedder speed: per-query latency and paragraph throughput on LongMemEval text.

Queries are the file's questions (embedded one at a time, as a search does); paragraphs are
its sessions' user turns (embedded in batches, as an import does). The embedder's cache is
bypassed so every text is really embedded.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from palazzo.bench.longmemeval import load, session_text


def run(path: Path, embedder, queries: int = 50, paragraphs: int = 200) -> dict[str, Any]:
    """Return query latency (ms: median, p95) and paragraphs per second for ``embedder``."""
    inner = getattr(embedder, "inner", embedder)
    data = load(path)
    qs = [q["question"] for q in data][:queries]
    texts: list[str] = []
    for q in data:
        texts += [t for t in map(session_text, q["haystack_sessions"]) if t.strip()]
    texts = list(dict.fromkeys(texts))[:paragraphs]
    inner.embed([qs[0]])  # warm up (weights into cache, BLAS threads started)
    lat = []
    for q in qs:
        t = time.perf_counter()
        inner.embed([q])
        lat.append((time.perf_counter() - t) * 1000)
    t = time.perf_counter()
    inner.embed(texts)
    seconds = time.perf_counter() - t
    lat.sort()
    return {
        "benchmark": "embedder",
        "embedder": inner.name,
        "fingerprint": inner.fingerprint,
        "queries": len(qs),
        "query_ms_median": round(statistics.median(lat), 2),
        "query_ms_p95": round(lat[int(0.95 * (len(lat) - 1))], 2),
        "paragraphs": len(texts),
        "paragraph_chars_mean": round(sum(map(len, texts)) / len(texts), 1),
        "paragraphs_per_s": round(len(texts) / seconds, 2),
    }
