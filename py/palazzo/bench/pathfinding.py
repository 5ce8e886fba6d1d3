"""Semantic A* on the seed's synthetic palaces (seed 000 §6, "Pathfinding Benchmarks").

Topology as the seed describes it: W wings of R rooms, one closet a room, two drawers a
closet; HALL edges between the rooms of a wing (all pairs, as the seed has them: added
here beyond the :data:`~palazzo.palace.HALL_LIMIT` that :meth:`Palace.add_room` makes) and
TUNNEL edges between the wings' room zero (every pair of wings). Room names are unique per
wing so ``add_room`` adds no same-name tunnels of its own. Drawers get random
unit vectors set directly (no embedder). Default weights (40/30/30), adaptive heuristic.

Latency is per :func:`navigate` call with the node vectors built once per palace (they are
reported separately as ``vectors_ms``): the search, not the O(drawers · dim) preparation.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from palazzo.core.model import EdgeKind, room_id
from palazzo.palace import HALL_LIMIT, Palace
from palazzo.stigmergy.pathfinding import NodeVectors, navigate, node_vectors

SCALES = ((2, 4, 50), (4, 6, 100), (6, 8, 200), (8, 10, 300))  # wings, rooms, trials
LARGE = (100, 20, 10, 50)  # wings, rooms, drawers a room, trials


def synthetic_palace(wings: int, rooms: int, drawers_per_closet: int = 2, dim: int = 64,
                     seed: int = 0) -> Palace:
    """Return the seed's synthetic palace. Cost: O(wings · rooms² + drawers · dim)."""
    p = Palace(similar_threshold=None, seed=seed, clock=lambda: 0.0)
    p.drawers.resize_vectors(dim)
    rng = np.random.default_rng(seed)
    for w in range(wings):
        for r in range(rooms):
            wing, room = f"w{w}", f"w{w}r{r}"
            p.add_room(wing, room)
            for older in range(r - HALL_LIMIT):  # the seed's halls: every pair of the wing
                p.edges.add(EdgeKind.HALL, room_id(wing, f"w{w}r{older}"), room_id(wing, room),
                            {"hall_type": "corridor"})
            for k in range(drawers_per_closet):
                d, _ = p.add_drawer(wing, room, f"{room} drawer {k}", closet="c0")
                v = rng.standard_normal(dim).astype(np.float32)
                p.drawers.set_vector(p.row(d), v / np.linalg.norm(v))
    for a in range(wings):
        for b in range(a + 1, wings):
            p.edges.add(EdgeKind.TUNNEL, room_id(f"w{a}", f"w{a}r0"),
                        room_id(f"w{b}", f"w{b}r0"))
    return p


def _nodes(p: Palace) -> list[str]:
    return sorted({*p.edges.out, *p.edges.inc})


def _pairs(p: Palace, kind: str, trials: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    if kind == "random":
        nodes = _nodes(p)
        idx = rng.integers(0, len(nodes), size=(trials, 2))
        return [(nodes[a], nodes[b]) for a, b in idx]
    wings = sorted(p.wings)
    by_wing = {w: [room_id(*k) for k in sorted(p.rooms) if k[0] == w] for w in wings}
    pairs = []
    for _ in range(trials):
        if kind == "same_wing":
            rooms = by_wing[wings[rng.integers(len(wings))]]
            a, b = rng.choice(len(rooms), size=2, replace=False)
            pairs.append((rooms[a], rooms[b]))
        else:
            wa, wb = rng.choice(len(wings), size=2, replace=False)
            ra, rb = by_wing[wings[wa]], by_wing[wings[wb]]
            pairs.append((ra[rng.integers(len(ra))], rb[rng.integers(len(rb))]))
    return pairs


def _scenario(p: Palace, nv: NodeVectors, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    lat, iters, lengths, found = [], [], [], 0
    for a, b in pairs:
        t = time.perf_counter()
        path = navigate(p, a, b, vectors=nv)
        lat.append((time.perf_counter() - t) * 1e6)
        iters.append(path.iterations)
        if path.found:
            found += 1
            lengths.append(len(path.steps) + 1)  # nodes on the path, as the seed counts
    lat_a = np.asarray(lat)
    return {
        "trials": len(pairs),
        "success_pct": round(100.0 * found / len(pairs), 1),
        "mean_us": round(float(lat_a.mean()), 1),
        "p95_us": round(float(np.percentile(lat_a, 95)), 1),
        "mean_iterations": round(float(np.mean(iters)), 1),
        "mean_path_nodes": round(float(np.mean(lengths)), 2) if lengths else None,
    }


def measure(wings: int, rooms: int, trials: int, drawers_per_closet: int = 2,
            seed: int = 0) -> dict[str, Any]:
    """Return size, build times and the three scenarios' numbers for one synthetic palace."""
    t = time.perf_counter()
    p = synthetic_palace(wings, rooms, drawers_per_closet, seed=seed)
    build_s = time.perf_counter() - t
    t = time.perf_counter()
    nv = node_vectors(p)
    vectors_ms = (time.perf_counter() - t) * 1e3
    rng = np.random.default_rng(seed)
    # One warm-up call so first-call costs (imports, caches) do not skew the mean.
    navigate(p, *_pairs(p, "same_wing", 1, rng)[0], vectors=nv)
    return {
        "scale": f"{wings}Wx{rooms}R",
        "nodes": len(_nodes(p)),
        "edges": len(p.edges),
        "build_s": round(build_s, 3),
        "vectors_ms": round(vectors_ms, 3),
        **{kind: _scenario(p, nv, _pairs(p, kind, trials, rng))
           for kind in ("random", "same_wing", "cross_wing")},
    }


def run() -> dict[str, Any]:
    """Return the pathfinding benchmark: the seed's four scales plus one large palace."""
    w, r, d, trials = LARGE
    return {
        "benchmark": "pathfinding",
        "weights": "default (0.40, 0.30, 0.30), adaptive heuristic",
        "scales": [measure(wings, rooms, n) for wings, rooms, n in SCALES],
        "large": measure(w, r, trials, drawers_per_closet=d),
    }
