"""Semantic A* on the seed's synthetic palaces (seed 000 §6, "Pathfinding Benchmarks").

Topology as the seed describes it: W wings of R rooms, one closet a room, two drawers a
closet; HALL edges between the rooms of a wing (all pairs, as the seed has them: added
here beyond the :data:`~palazzo.palace.HALL_LIMIT` that :meth:`Palace.add_room` makes) and
TUNNEL edges between the wings' room zero (every pair of wings). Room names are unique per
wing so ``add_room`` adds no same-name tunnels of its own. Drawers get random
unit vectors set directly (no embedder). Default weights (40/30/30), adaptive heuristic.

Latency is per :func:`navigate` call with the node vectors built once per palace (they are
reported separately as ``vectors_ms``): the search, not the O(drawers · dim) preparation.
Every pair is also searched in admissible mode, whose path is optimal: ``optimal_pct`` and
``excess_pct`` say how often and by how much the adaptive path costs more.

Navigate by meaning (issue 18, :func:`measure_queries`): on a palace whose rooms have known
topics, does the goal a query picks land in the intended room? Both candidate rules are
measured: the top hybrid search hit (:func:`~palazzo.ops.navigation.goal_by_search`) and the
nearest room or closet centroid (:func:`~palazzo.ops.navigation.goal_by_centroid`).

``python -m palazzo.bench.pathfinding --palace DIR --out FILE`` runs the same scenarios and
queries on an existing palace directory (e.g. one ``palazzo bench scale --keep`` left), the
queries made of words drawn from each room's drawers.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench.exportgen import WORDS
from palazzo.core.model import PALACE_ID, EdgeKind, closet_id, room_id
from palazzo.ops.navigation import GoalChoice, goal_by_centroid, goal_by_search
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
    by_wing = {w: [room_id(*k) for k in sorted(p.rooms) if k[0] == w] for w in sorted(p.wings)}
    wings = [w for w, rooms in by_wing.items() if rooms]
    pairs = []
    for _ in range(trials):
        if kind == "same_wing":
            rooms = by_wing[wings[rng.integers(len(wings))]]
            if len(rooms) < 2:
                continue
            a, b = rng.choice(len(rooms), size=2, replace=False)
            pairs.append((rooms[a], rooms[b]))
        elif len(wings) > 1:
            wa, wb = rng.choice(len(wings), size=2, replace=False)
            ra, rb = by_wing[wings[wa]], by_wing[wings[wb]]
            pairs.append((ra[rng.integers(len(ra))], rb[rng.integers(len(rb))]))
    return pairs


def _scenario(p: Palace, nv: NodeVectors, pairs: list[tuple[str, str]]) -> dict[str, Any]:
    if not pairs:
        return {"trials": 0}
    lat, iters, lengths, costs, found = [], [], [], [], 0
    opt_lat, opt_iters, excess = [], [], []
    for a, b in pairs:
        t = time.perf_counter()
        path = navigate(p, a, b, vectors=nv)
        lat.append((time.perf_counter() - t) * 1e6)
        iters.append(path.iterations)
        t = time.perf_counter()
        best = navigate(p, a, b, admissible=True, vectors=nv)
        opt_lat.append((time.perf_counter() - t) * 1e6)
        opt_iters.append(best.iterations)
        if path.found:
            found += 1
            lengths.append(len(path.steps) + 1)  # nodes on the path, as the seed counts
            costs.append(path.total_cost)
            if best.total_cost:
                excess.append(100.0 * (path.total_cost - best.total_cost) / best.total_cost)
            else:
                excess.append(0.0)
    lat_a, ex = np.asarray(lat), np.asarray(excess)
    return {
        "trials": len(pairs),
        "success_pct": round(100.0 * found / len(pairs), 1),
        "mean_us": round(float(lat_a.mean()), 1),
        "p95_us": round(float(np.percentile(lat_a, 95)), 1),
        "mean_iterations": round(float(np.mean(iters)), 1),
        "mean_path_nodes": round(float(np.mean(lengths)), 2) if lengths else None,
        "mean_cost": round(float(np.mean(costs)), 4) if costs else None,
        # Against admissible mode's optimal path for the same pair and cost function.
        "optimal_pct": round(100.0 * float(np.mean(ex < 1e-7)), 1) if len(ex) else None,
        "mean_excess_pct": round(float(ex.mean()), 2) if len(ex) else None,
        "max_excess_pct": round(float(ex.max()), 2) if len(ex) else None,
        "admissible_mean_us": round(float(np.mean(opt_lat)), 1),
        "admissible_mean_iterations": round(float(np.mean(opt_iters)), 1),
    }


def _scenarios(p: Palace, trials: int, seed: int) -> dict[str, Any]:
    """Return the node vectors' build time and the three scenarios' numbers on ``p``."""
    t = time.perf_counter()
    nv = node_vectors(p)
    vectors_ms = (time.perf_counter() - t) * 1e3
    rng = np.random.default_rng(seed)
    # One warm-up call so first-call costs (imports, caches) do not skew the mean.
    navigate(p, *_pairs(p, "same_wing", 1, rng)[0], vectors=nv)
    return {
        "nodes": len(_nodes(p)),
        "edges": len(p.edges),
        "vectors_ms": round(vectors_ms, 3),
        **{kind: _scenario(p, nv, _pairs(p, kind, trials, rng))
           for kind in ("random", "same_wing", "cross_wing")},
    }


def measure(wings: int, rooms: int, trials: int, drawers_per_closet: int = 2,
            seed: int = 0) -> dict[str, Any]:
    """Return size, build times and the three scenarios' numbers for one synthetic palace."""
    t = time.perf_counter()
    p = synthetic_palace(wings, rooms, drawers_per_closet, seed=seed)
    build_s = time.perf_counter() - t
    return {"scale": f"{wings}Wx{rooms}R", "build_s": round(build_s, 3),
            **_scenarios(p, trials, seed)}


# -- navigate by meaning ---------------------------------------------------------------------

Query = tuple[str, str]  # (query text, the room id it is about)
RULES: dict[str, Callable[[Palace, str, NodeVectors], GoalChoice | None]] = {
    "search": lambda p, q, nv: goal_by_search(p, q),
    "centroid": goal_by_centroid,
}


def topical_palace(embedder: Any, wings: int = 4, rooms: int = 6, drawers: int = 8,
                   queries_per_room: int = 5, seed: int = 0) -> tuple[Palace, list[Query]]:
    """Return a palace whose rooms have known topics, and queries about them.

    English words of four or more letters (the scale generator's list) are dealt out: five
    topic words a room, three a wing (shared by its rooms) and twelve fillers shared by all. A
    drawer holds three of its room's words, one of its wing's, one of a random other room's
    (cross-talk) and four fillers; a query three of the room's words (drawn afresh) and one
    filler. Cost: O(drawers) embedder calls.
    """
    rng = random.Random(seed)
    words = sorted({w.lower() for w in WORDS["en"].split() if w.isalpha() and len(w) > 3})
    rng.shuffle(words)
    need = wings * rooms * 5 + wings * 3 + 12
    if need > len(words):
        raise ValueError(f"{wings} x {rooms} rooms need {need} words; the list has {len(words)}")
    filler, words = words[:12], words[12:]
    wing_words = [words[3 * w: 3 * w + 3] for w in range(wings)]
    words = words[3 * wings:]
    topics = {(f"w{w}", f"w{w}r{r}"): words[5 * (w * rooms + r): 5 * (w * rooms + r) + 5]
              for w in range(wings) for r in range(rooms)}
    p = Palace(embedder=embedder, similar_threshold=None, seed=seed, clock=lambda: 0.0)
    keys = list(topics)
    queries: list[Query] = []
    for (wing, room), topic in topics.items():
        for _ in range(drawers):
            other = topics[keys[rng.randrange(len(keys))]]
            text = (rng.sample(topic, 3) + [rng.choice(wing_words[int(wing[1:])])]
                    + [rng.choice(other)] + rng.sample(filler, 4))
            rng.shuffle(text)
            p.add_drawer(wing, room, " ".join(text), closet="c0")
        for _ in range(queries_per_room):
            queries.append((" ".join(rng.sample(topic, 3) + [rng.choice(filler)]),
                            room_id(wing, room)))
    return p, queries


def room_queries(p: Palace, rooms: int = 100, words: int = 5, seed: int = 0,
                 kind: str = "sampled") -> list[Query]:
    """Return queries about up to ``rooms`` rooms (with at least ``words`` drawers) of an
    existing palace, made of words of five or more letters.

    ``sampled``: one word from each of ``words`` different drawers of the room (noisy: about
    the room, not one drawer). ``distinctive``: the room's ``words`` top words by tf·idf over
    rooms (its topic, as far as its text shows it). Cost: one pass over the drawers' text.
    """
    rng = random.Random(seed)
    s = p.drawers
    by_room: dict[str, list[list[str]]] = {}
    for r in np.flatnonzero(s.alive[: s.size]):
        terms = [w.lower() for w in re.findall(r"[^\W\d_]{5,}", s.content[r])]
        by_room.setdefault(room_id(s.wing[r], s.room[r]), []).append(terms)
    eligible = sorted(k for k, drawers in by_room.items() if len(drawers) >= words)
    chosen = rng.sample(eligible, min(rooms, len(eligible)))
    out: list[Query] = []
    if kind == "distinctive":
        counts = {room: Counter(t for d in by_room[room] for t in d) for room in chosen}
        df = Counter(t for drawers in by_room.values() for t in {t for d in drawers for t in d})
        n = len(by_room)
        for room in chosen:
            top = sorted(counts[room], key=lambda t: (-counts[room][t] * math.log(n / df[t]), t))
            if len(top) >= words:
                out.append((" ".join(top[:words]), room))
        return out
    for room in chosen:
        picked = []
        for terms in rng.sample(by_room[room], len(by_room[room])):
            if terms:
                picked.append(rng.choice(terms))
            if len(picked) == words:
                break
        if len(picked) == words:
            out.append((" ".join(picked), room))
    return out


def _room_of_node(p: Palace) -> Callable[[str], str | None]:
    closets = {closet_id(*k): room_id(k[0], k[1]) for k in p.closets}
    rooms = {room_id(*k) for k in p.rooms}

    def room_of(node: str) -> str | None:
        row = p.drawers.row_of.get(node)
        if row is not None:
            return room_id(p.drawers.wing[row], p.drawers.room[row])
        return node if node in rooms else closets.get(node)

    return room_of


def measure_queries(p: Palace, queries: Sequence[Query]) -> dict[str, Any]:
    """Return, per goal rule, how often the chosen goal lies in the query's room, the time to
    choose, and the Semantic A* walk from the palace root to it (adaptive, default weights)."""
    nv = node_vectors(p)
    room_of = _room_of_node(p)
    out: dict[str, Any] = {"queries": len(queries)}
    for name, rule in RULES.items():
        rule(p, queries[0][0], nv)  # warm-up
        hits, none, pick_ms, walk_ms, lengths, iters = 0, 0, [], [], [], []
        for text, room in queries:
            t = time.perf_counter()
            choice = rule(p, text, nv)
            pick_ms.append((time.perf_counter() - t) * 1e3)
            if choice is None:
                none += 1
                continue
            hits += room_of(choice.node) == room
            t = time.perf_counter()
            path = navigate(p, PALACE_ID, choice.node, vectors=nv)
            walk_ms.append((time.perf_counter() - t) * 1e3)
            if path.found:
                lengths.append(len(path.steps))
            iters.append(path.iterations)
        out[name] = {
            "in_intended_room_pct": round(100.0 * hits / len(queries), 1),
            "no_goal": none,
            "choose_ms": round(float(np.mean(pick_ms)), 3),
            "walk_ms": round(float(np.mean(walk_ms)), 3) if walk_ms else None,
            "walk_edges": round(float(np.mean(lengths)), 2) if lengths else None,
            "walk_iterations": round(float(np.mean(iters)), 1) if iters else None,
        }
    return out


def run() -> dict[str, Any]:
    """Return the pathfinding benchmark: the seed's four scales, one large palace, and
    navigate-by-query on a topical palace (hash embedder)."""
    from palazzo.embed.hashing import HashEmbedder

    w, r, d, trials = LARGE
    topical, queries = topical_palace(HashEmbedder())
    return {
        "benchmark": "pathfinding",
        "weights": "default (0.40, 0.30, 0.30), adaptive heuristic",
        "scales": [measure(wings, rooms, n) for wings, rooms, n in SCALES],
        "large": measure(w, r, trials, drawers_per_closet=d),
        "by_query": {"palace": "topical 4 wings x 6 rooms x 8 drawers, hash embedder",
                     **measure_queries(topical, queries)},
    }


def run_palace(path: Path, embedder: Any, trials: int = 50,
               queries: int = 100, seed: int = 0) -> dict[str, Any]:
    """Return the three scenarios and navigate-by-query on the palace directory ``path``
    (opened read-only beside any writer; nothing is written)."""
    from palazzo.persist.directory import PalaceDirectory

    with PalaceDirectory(path, lambda **kw: Palace(embedder=embedder, **kw)) as d:
        p = d.store.palace
        return {
            "benchmark": "pathfinding", "palace": str(path),
            "embedder": getattr(embedder, "name", None),
            "drawers": int(p.drawers.alive[: p.drawers.size].sum()), "rooms": len(p.rooms),
            **_scenarios(p, trials, seed),
            "by_query": {kind: measure_queries(p, room_queries(p, queries, seed=seed, kind=kind))
                         for kind in ("sampled", "distinctive")},
        }
