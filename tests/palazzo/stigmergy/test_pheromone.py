"""Pheromone formulas (seed 000 §3.3) pinned on hand-computed cases."""

import math

import numpy as np
import pytest

from palazzo.core.model import EdgeKind
from palazzo.errors import NotFound, ValidationError
from palazzo.palace import Palace
from palazzo.stigmergy import pheromone


@pytest.fixture
def palace():
    p = Palace(clock=lambda: 1.0)
    for room in ("a", "b", "c", "d", "e"):
        p.add_room("w", room)
    return p


def hall(p, a, b):
    return p.edges.find(EdgeKind.HALL, f"room:w/{a}", f"room:w/{b}")


def path(p):
    return [hall(p, "a", "b"), hall(p, "b", "c"), hall(p, "c", "d"), hall(p, "d", "e")]


def test_rates_and_half_lives():
    assert pheromone.RHO == {"exploitation": 0.02, "exploration": 0.05, "success": 0.01,
                             "traversal": 0.03, "recency": 0.10}
    lives = {k: pheromone.half_life(r) for k, r in pheromone.RHO.items()}
    for kind, seed_value in {"exploitation": 35, "exploration": 14, "success": 69,
                             "traversal": 23, "recency": 7}.items():
        assert lives[kind] == pytest.approx(math.log(0.5) / math.log(1 - pheromone.RHO[kind]))
        assert abs(lives[kind] - seed_value) < 1  # the seed's "≈" uses ln2/ρ
    # After one half-life of cycles the value has halved.
    assert (1 - 0.01) ** lives["success"] == pytest.approx(0.5)


def test_position_weights_k4():
    assert pheromone.position_weights(4).tolist() == [1.0, 0.75, 0.5, 0.25]
    assert pheromone.position_weights(1).tolist() == [1.0]


def test_deposit_path_weights_traversal_recency_and_costs(palace):
    edges = path(palace)
    out = pheromone.deposit_path(palace, edges, reward=0.8)
    c = palace.edges.columns
    idx = np.asarray(edges, dtype=np.intp)
    assert c["success"][idx] == pytest.approx([0.8, 0.6, 0.4, 0.2])
    assert c["traversal"][idx] == pytest.approx([0.1] * 4)
    assert c["recency"][idx].tolist() == [1.0] * 4
    phi = 0.5 * np.array([0.8, 0.6, 0.4, 0.2]) + 0.3 * 1.0 + 0.2 * 0.1
    assert c["current_cost"][idx] == pytest.approx(0.5 * (1 - 0.5 * phi))
    assert out["edges"] == 4 and out["drawers"] == []
    # Untouched edges keep their base cost; hierarchy edges carry nothing.
    other = hall(palace, "a", "e")
    assert c["current_cost"][other] == c["base_cost"][other] == 0.5


def test_cost_clamps_each_pheromone_at_one(palace):
    e = hall(palace, "a", "b")
    c = palace.edges.columns
    c["success"][e], c["recency"][e], c["traversal"][e] = 3.0, 1.0, 0.5
    assert pheromone.recompute_costs(palace, [e]) == 1
    phi = 0.5 * 1 + 0.3 * 1 + 0.2 * 0.5
    assert c["current_cost"][e] == pytest.approx(0.5 * (1 - 0.5 * phi))
    c["traversal"][e] = 7.0
    pheromone.recompute_costs(palace)
    assert c["current_cost"][e] == pytest.approx(0.25)  # Φ = 1: half the base cost, no less


def test_decay_n_cycles_and_floor(palace):
    did, _ = palace.add_drawer("w", "a", "a memory")
    row = palace.row(did)
    e = hall(palace, "a", "b")
    s, c = palace.drawers.columns, palace.edges.columns
    s["exploitation"][row], s["exploration"][row] = 1.0, 1.0
    for kind in pheromone.EDGE_KINDS:
        c[kind][e] = 1.0
    out = pheromone.decay(palace, 10)
    assert out["factors"]["recency"] == pytest.approx(0.9 ** 10)
    assert s["exploitation"][row] == pytest.approx(0.98 ** 10)
    assert s["exploration"][row] == pytest.approx(0.95 ** 10)
    assert [c[k][e] for k in pheromone.EDGE_KINDS] == pytest.approx(
        [0.99 ** 10, 0.97 ** 10, 0.9 ** 10])
    phi = 0.5 * 0.99 ** 10 + 0.3 * 0.9 ** 10 + 0.2 * 0.97 ** 10
    assert c["current_cost"][e] == pytest.approx(0.5 * (1 - 0.5 * phi))
    # Repeated single cycles equal one multi-cycle decay.
    before = c["success"][e]
    for _ in range(5):
        pheromone.decay(palace)
    assert c["success"][e] == pytest.approx(before * 0.99 ** 5)
    # Below the floor: exactly zero, counted once.
    c["recency"][e] = 1.05e-6
    assert pheromone.decay(palace, 1)["zeroed"]["recency"] == 1
    assert c["recency"][e] == 0.0
    assert pheromone.decay(palace, 1)["zeroed"]["recency"] == 0
    assert pheromone.decay(palace, 0)["cycles"] == 0
    with pytest.raises(ValidationError):
        pheromone.decay(palace, -1)


def test_decay_to_nothing_after_many_cycles(palace):
    pheromone.deposit_path(palace, path(palace))
    pheromone.decay(palace, 5000)
    c = palace.edges.columns
    assert not c["success"].any() and not c["recency"].any() and not c["traversal"].any()
    assert np.array_equal(c["current_cost"], c["base_cost"])


def test_decay_leaves_dead_edges_alone(palace):
    e = hall(palace, "a", "b")
    palace.edges.columns["success"][e] = 0.5
    palace.edges.remove(e)
    pheromone.decay(palace, 3)
    assert palace.edges.columns["success"][e] == 0.5


def test_deposit_path_nodes_exploitation_and_exploration(palace):
    d1, _ = palace.add_drawer("w", "a", "first")
    d2, _ = palace.add_drawer("w", "b", "second")
    link = palace.edges.add(EdgeKind.SIMILAR_TO, d1, d2)
    s = palace.drawers.columns
    pheromone.deposit_path(palace, [link], reward=0.5)
    assert s["exploitation"][palace.row(d1)] == pytest.approx(0.5)
    assert s["exploitation"][palace.row(d2)] == pytest.approx(0.25)
    assert s["exploration"][palace.row(d1)] == pytest.approx(0.05)
    pheromone.deposit_path(palace, [link], reward=0.0, nodes=[d2])
    assert s["exploration"][palace.row(d2)] == pytest.approx(0.15)
    assert s["exploitation"][palace.row(d2)] == pytest.approx(0.25)
    with pytest.raises(NotFound):
        pheromone.deposit_path(palace, [link], nodes=["drawer_nope"])


def test_deposit_path_refuses_bad_input_before_touching(palace):
    before = palace.edges.columns["success"].copy()
    with pytest.raises(ValidationError):
        pheromone.deposit_path(palace, [hall(palace, "a", "b"), 10_000])
    with pytest.raises(ValidationError):
        pheromone.deposit_path(palace, [hall(palace, "a", "b")], reward=1.5)
    with pytest.raises(ValidationError):
        pheromone.deposit_path(palace, [])
    assert np.array_equal(before, palace.edges.columns["success"])


def test_repeated_edge_in_a_path_gets_both_deposits(palace):
    e = hall(palace, "a", "b")
    pheromone.deposit_path(palace, [e, e])
    assert palace.edges.columns["success"][e] == pytest.approx(1.5)
    assert palace.edges.columns["traversal"][e] == pytest.approx(0.2)


def test_deposit_drawers_rank_weighted_then_decay(palace):
    ids = [palace.add_drawer("w", "a", f"drawer {i}")[0] for i in range(4)]
    pheromone.deposit_drawers(palace, ids, reward=1.0)
    s = palace.drawers.columns
    rows = [palace.row(d) for d in ids]
    assert s["exploitation"][rows].tolist() == [1.0, 0.75, 0.5, 0.25]
    pheromone.decay(palace, 35)
    assert s["exploitation"][rows] == pytest.approx(np.array([1, .75, .5, .25]) * 0.98 ** 35)
    with pytest.raises(NotFound):
        pheromone.deposit_drawers(palace, [ids[0], "drawer_missing"])
    assert s["exploitation"][rows[0]] == pytest.approx(0.98 ** 35)


def test_deleted_drawer_rows_stay_zero_under_decay(palace):
    did, _ = palace.add_drawer("w", "a", "gone soon")
    pheromone.deposit_drawers(palace, [did])
    row = palace.row(did)
    palace.delete_drawer(did)
    pheromone.decay(palace)
    assert palace.drawers.columns["exploitation"][row] == 0.0


def test_stigmergy_has_no_python_loop_over_drawers():
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(pheromone.decay))
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.For)
                and "row" in ast.unparse(n.target)]


def test_hierarchy_edges_of_a_path_get_nothing_but_keep_their_position(palace):
    down = palace.edges.find(EdgeKind.HAS_ROOM, "wing:w", "room:w/a")
    e = hall(palace, "a", "b")
    out = pheromone.deposit_path(palace, [down, e], reward=1.0)
    c = palace.edges.columns
    assert out["skipped_hierarchy"] == 1 and out["success"] == [0.0, 0.5]
    assert c["success"][e] == 0.5
    assert c["success"][down] == c["traversal"][down] == c["recency"][down] == 0.0
    assert c["current_cost"][down] == c["base_cost"][down]
