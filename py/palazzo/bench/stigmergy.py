"""Decay and cost recomputation timings at several palace sizes (CPython or Pyodide).

Palaces are filled directly through the stores (random pheromones, two SIMILAR_TO edges per
drawer), so the numbers measure the column algebra, not drawer insertion or embedding.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from palazzo.core.model import EdgeKind
from palazzo.palace import Palace
from palazzo.stigmergy import pheromone

REPEATS = 15


def build(n: int, seed: int = 0) -> Palace:
    """Return a palace of ``n`` drawers with random pheromones and ~2 edges per drawer.

    Cost: O(n) Python (row and edge inserts); no embedding, no text index.
    """
    rng = np.random.default_rng(seed)
    p = Palace(clock=lambda: 0.0, similar_threshold=None)
    p.add_room("bench", "room")
    s = p.drawers
    for i in range(n):
        s.add(f"d{i}", "", "bench", "room", None, "", "", {})
    for kind in pheromone.NODE_KINDS:
        s.columns[kind][:n] = rng.random(n)
    targets = rng.integers(0, n, size=(n, 2))
    for i in range(n):
        for j in targets[i]:
            p.edges.add(EdgeKind.SIMILAR_TO, f"d{i}", f"d{int(j)}")
    m = len(p.edges.kind)
    for kind in pheromone.EDGE_KINDS:
        p.edges.columns[kind][:m] = rng.random(m) * 1.5
    return p


def _median_us(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times) * 1e6)


def run(sizes: Sequence[int] = (100, 5000, 100000), repeats: int = REPEATS) -> dict[str, Any]:
    """Return {"sizes": [{"drawers", "edges", "decay_us", "recompute_us"}]}: the median
    time of one decay cycle (which includes a cost recomputation) and of one recomputation
    over every live edge. Cost: building the palaces dominates (O(sum(sizes)) Python)."""
    out = []
    for n in sizes:
        p = build(n)
        out.append({
            "drawers": n,
            "edges": len(p.edges),
            "decay_us": round(_median_us(lambda p=p: pheromone.decay(p, 1), repeats), 1),
            "recompute_us": round(_median_us(lambda p=p: pheromone.recompute_costs(p),
                                             repeats), 1),
        })
    return {"repeats": repeats, "sizes": out}
