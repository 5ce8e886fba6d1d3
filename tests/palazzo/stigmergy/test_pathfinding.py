"""Semantic A*: exact costs on a hand-built palace, presets, optimality, edge cases."""

import heapq
import itertools
import math
import random

import numpy as np
import pytest

from palazzo.core.model import EdgeKind, Entity
from palazzo.errors import NotFound, ValidationError
from palazzo.palace import Palace
from palazzo.stigmergy import pheromone
from palazzo.stigmergy.pathfinding import WEIGHTS, _Costs, navigate, node_vectors

DIM = 384


def _unit(i: int, sign: float = 1.0) -> np.ndarray:
    v = np.zeros(DIM, np.float32)
    v[i] = sign
    return v


def _small() -> tuple[Palace, str, str]:
    """Wing a: r1 (closet c holding d1 = e1) and r2 (d2 = e2, no closet)."""
    p = Palace(similar_threshold=None)
    d1, _ = p.add_drawer("a", "r1", "one", closet="c")
    d2, _ = p.add_drawer("a", "r2", "two")
    p.drawers.set_vector(p.row(d1), _unit(0))
    p.drawers.set_vector(p.row(d2), _unit(1))
    return p, d1, d2


def test_hall_is_taken_with_exact_components():
    p, _, _ = _small()
    path = navigate(p, "room:a/r1", "room:a/r2")
    assert path.found and path.nodes == ["room:a/r1", "room:a/r2"]
    (step,) = path.steps
    assert step.kind == "HALL"
    assert (step.semantic, step.pheromone, step.structural) == (0.0, 1.0, 0.5)
    assert path.total_cost == pytest.approx(0.4 * 0 + 0.3 * 1 + 0.3 * 0.5)


def test_drawer_to_drawer_path_and_costs():
    p, d1, d2 = _small()
    path = navigate(p, d1, d2)
    assert path.nodes == [d1, "closet:a/r1/c", "room:a/r1", "room:a/r2", d2]
    assert [s.kind for s in path.steps] == ["HAS_DRAWER", "HAS_CLOSET", "HALL", "HAS_DRAWER"]
    # closet and r1 have vector e1, orthogonal to the goal's e2: cosine distance 1.
    assert [s.semantic for s in path.steps] == pytest.approx([1.0, 1.0, 0.0, 0.0])
    assert [s.structural for s in path.steps] == pytest.approx([0.2, 0.2, 0.5, 0.2])
    # 0.4·1 + 0.3·1 + 0.3·0.2 = 0.76 twice, then 0.3 + 0.3·0.5 and 0.3 + 0.3·0.2.
    expected = 0.76 + 0.76 + 0.45 + 0.36
    assert path.total_cost == pytest.approx(expected)
    assert sum(s.cost for s in path.steps) == pytest.approx(expected)
    assert path.to_dict()["length"] == 4


def test_group_vector_is_normalised_mean():
    p, _, _ = _small()
    nv = node_vectors(p)
    wing = nv.groups[nv.index["wing:a"]]
    assert wing == pytest.approx(np.r_[[2 ** -0.5, 2 ** -0.5], np.zeros(DIM - 2)])


def _preset_palace() -> Palace:
    """r1 -> r2 by the HALL (no pheromone) or via the wing (full pheromone, but the wing's
    vector e0 is orthogonal to the goal's e1: semantic cost 1)."""
    p = Palace(similar_threshold=None)
    for i, v in enumerate((_unit(1, -1.0), _unit(0), _unit(0))):  # wing: (−e1 + 2e0 + e1)
        d, _ = p.add_drawer("a", "r1", f"away {i}")
        p.drawers.set_vector(p.row(d), v)
    d, _ = p.add_drawer("a", "r2", "goal")
    p.drawers.set_vector(p.row(d), _unit(1))
    cols = p.edges.columns
    for room in ("room:a/r1", "room:a/r2"):
        e = p.edges.find(EdgeKind.HAS_ROOM, "wing:a", room)
        for name in ("success", "recency", "traversal"):
            cols[name][e] = 1.0
    return p


def test_presets_change_the_chosen_path():
    p = _preset_palace()
    # memory_recall: hall 0.3+0.2*0.5 = 0.40 < wing 0.5*1+0.2*0.4 = 0.58
    recall = navigate(p, "room:a/r1", "room:a/r2", context="memory_recall")
    assert recall.nodes == ["room:a/r1", "room:a/r2"]
    assert recall.total_cost == pytest.approx(0.40)
    # hypothesis_testing: hall 0.4+0.15 = 0.55 > wing 0.3*1+0.3*0.4 = 0.42
    test = navigate(p, "room:a/r1", "room:a/r2", context="hypothesis_testing",
                    admissible=True)
    assert test.nodes == ["room:a/r1", "wing:a", "room:a/r2"]
    assert test.total_cost == pytest.approx(0.42)
    # The adaptive heuristic charges the wing α·C_semantic = 0.3 more on top, so it settles
    # for the hall: the price of trusting semantics (why admissible mode exists).
    quick = navigate(p, "room:a/r1", "room:a/r2", context="hypothesis_testing")
    assert quick.nodes == ["room:a/r1", "room:a/r2"]
    assert quick.total_cost == pytest.approx(0.55)


def test_pheromone_discount_is_counted_once():
    """Worked by hand: the HALL r1 -> r2 (base cost 0.5) with success 0.6, recency 1 and
    traversal 0: Φ = 0.5·0.6 + 0.3·1 + 0.2·0 = 0.6, so C_pheromone = 0.4 and, after
    recomputation, current_cost = 0.5·(1 − 0.5·0.6) = 0.35. The step costs
    0.4·0 + 0.3·0.4 + 0.3·0.5 = 0.27; charging current_cost (the old double count) would
    have given 0.12 + 0.3·0.35 = 0.225."""
    p, _, _ = _small()
    e = p.edges.find(EdgeKind.HALL, "room:a/r1", "room:a/r2")
    cols = p.edges.columns
    cols["success"][e], cols["recency"][e] = 0.6, 1.0
    pheromone.recompute_costs(p)
    assert cols["current_cost"][e] == pytest.approx(0.35)
    (step,) = navigate(p, "room:a/r1", "room:a/r2").steps
    assert (step.pheromone, step.structural) == pytest.approx((0.4, 0.5))
    assert step.cost == pytest.approx(0.27)


def test_semantic_cost_is_the_cosine_distance():
    """C_semantic = 1 − cos on the seed's scale: 0 for the goal's own direction, 1 when
    orthogonal or without a vector, 2 when opposite, 0.4 for cosine 0.6."""
    p, d1, d2 = _small()
    far, _ = p.add_drawer("a", "r2", "opposite")
    p.drawers.set_vector(p.row(far), _unit(1, -1.0))
    near, _ = p.add_drawer("a", "r2", "near")
    v = np.zeros(DIM, np.float32)
    v[:2] = (0.8, 0.6)
    p.drawers.set_vector(p.row(near), v)
    blank, _ = p.add_drawer("a", "r2", "no vector")
    costs = _Costs(p, d2, WEIGHTS["default"], node_vectors(p))
    assert costs.semantic(d2) == 0.0
    assert costs.semantic(d1) == pytest.approx(1.0)
    assert costs.semantic(far) == pytest.approx(2.0)
    assert costs.semantic(near) == pytest.approx(0.4)
    assert costs.semantic(blank) == 1.0


def test_weights_are_the_seed_table():
    assert WEIGHTS == {"default": (0.40, 0.30, 0.30), "hypothesis_testing": (0.30, 0.40, 0.30),
                       "exploratory_research": (0.50, 0.20, 0.30),
                       "evidence_gathering": (0.35, 0.35, 0.30),
                       "memory_recall": (0.50, 0.30, 0.20)}
    for w in WEIGHTS.values():
        assert sum(w) == pytest.approx(1.0)


def test_unreachable_and_unknown():
    p, d1, _ = _small()
    p.entities["e:lonely"] = Entity(id="e:lonely", name="lonely")
    path = navigate(p, d1, "e:lonely")
    assert not path.found and path.total_cost is None and path.steps == []
    assert path.nodes == [] and "not reachable" in path.reason
    assert path.iterations == 7  # every node of the component was expanded once
    with pytest.raises(NotFound):
        navigate(p, d1, "drawer_nope")
    with pytest.raises(NotFound):
        navigate(p, "room:a/zz", d1)
    with pytest.raises(ValidationError):
        navigate(p, d1, d1, context="nope")


def test_start_is_goal_and_iteration_limit():
    p, d1, d2 = _small()
    same = navigate(p, d1, d1)
    assert same.found and same.total_cost == 0.0 and same.steps == []
    limited = navigate(p, d1, d2, max_iterations=2)
    assert not limited.found and "iterations" in limited.reason


def test_dead_edges_are_not_walked():
    p, _, _ = _small()
    p.edges.remove(p.edges.find(EdgeKind.HALL, "room:a/r1", "room:a/r2"))
    path = navigate(p, "room:a/r1", "room:a/r2")
    assert path.nodes == ["room:a/r1", "wing:a", "room:a/r2"]


def _random_palace(rng: random.Random) -> Palace:
    p = Palace(similar_threshold=None, seed=rng.randrange(1000))
    nrng = np.random.default_rng(rng.randrange(1 << 30))
    drawers = []
    for w in range(rng.randint(1, 3)):
        for r in range(rng.randint(1, 4)):
            room = f"r{rng.randint(0, 3)}"  # repeated names across wings make tunnels
            p.add_room(f"w{w}", room)
            for k in range(rng.randint(0, 3)):
                closet = rng.choice([None, "c0", "c1"])
                d, _ = p.add_drawer(f"w{w}", room, f"t {w} {r} {k}", closet=closet)
                drawers.append(d)
                if rng.random() < 0.8:
                    v = np.zeros(DIM, np.float32)
                    v[:8] = nrng.standard_normal(8)
                    p.drawers.set_vector(p.row(d), v / np.linalg.norm(v))
    for i in range(rng.randint(0, 3)):
        p.entities[f"e{i}"] = Entity(id=f"e{i}", name=f"e{i}")
        if drawers:
            p.edges.add(EdgeKind.RELATES_TO, f"e{i}", rng.choice(drawers))
    for _ in range(rng.randint(0, 4)):
        if len(drawers) > 1:
            a, b = rng.sample(drawers, 2)
            p.edges.add(EdgeKind.SIMILAR_TO, a, b)
    n = len(p.edges.kind)
    cols = p.edges.columns
    for name in ("success", "recency", "traversal"):
        cols[name][:n] = nrng.uniform(0, 1.5, n) * (nrng.random(n) < 0.5)
    cols["current_cost"][:n] = cols["base_cost"][:n] * nrng.uniform(0.5, 1.0, n)
    for e in range(n):
        if rng.random() < 0.1:
            p.edges.remove(e)
    return p


def _dijkstra(p: Palace, start: str, goal: str, context: str) -> float | None:
    costs = _Costs(p, goal, WEIGHTS[context], node_vectors(p))
    edges = p.edges
    dist = {start: 0.0}
    tie = itertools.count()
    heap = [(0.0, next(tie), start)]
    done = set()
    while heap:
        d, _, u = heapq.heappop(heap)
        if u in done:
            continue
        if u == goal:
            return d
        done.add(u)
        for e in [*edges.out.get(u, ()), *edges.inc.get(u, ())]:
            assert edges.alive[e]
            v = edges.dst[e] if edges.src[e] == u else edges.src[e]
            c = (costs.alpha * costs.semantic(v) + costs.beta * costs.pheromone(e)
                 + costs.gamma * costs.structural(e))
            if d + c < dist.get(v, math.inf):
                dist[v] = d + c
                heapq.heappush(heap, (d + c, next(tie), v))
    return None


def test_admissible_equals_dijkstra_on_random_palaces():
    rng = random.Random(4)
    checked = 0
    for _ in range(60):
        p = _random_palace(rng)
        nodes = sorted({*p.edges.out, *p.edges.inc, *p.entities})
        for _ in range(5):
            start, goal = rng.choice(nodes), rng.choice(nodes)
            context = rng.choice(list(WEIGHTS))
            best = _dijkstra(p, start, goal, context)
            path = navigate(p, start, goal, context=context, admissible=True)
            adaptive = navigate(p, start, goal, context=context)
            assert path.found == adaptive.found == (best is not None)
            if best is not None:
                assert path.total_cost == pytest.approx(best, abs=1e-9)
                assert sum(s.cost for s in path.steps) == pytest.approx(best, abs=1e-9)
                assert adaptive.total_cost >= best - 1e-9
                checked += 1
    assert checked >= 200
