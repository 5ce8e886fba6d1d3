"""Pheromone operations through a registry, as hosts call them."""

import json

import pytest

from palazzo.errors import NotFound, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.ops import default_registry
from palazzo.ops.pheromone import operation
from palazzo.palace import Palace


@pytest.fixture
def reg():
    return default_registry()  # the pheromone operations are built in


@pytest.fixture
def palace():
    p = Palace(clock=lambda: 7.0)
    ids = [p.add_drawer(w, r, f"{w}/{r} memory {i}")[0]
           for i, (w, r) in enumerate([("x", "a"), ("x", "a"), ("x", "b"), ("y", "a")])]
    p.test_ids = ids
    return p


PATH = [["room:x/a", "room:x/b", "HALL"], ["room:x/a", "room:y/a", "TUNNEL"]]


def test_register_adds_six_operations(reg):
    names = set(reg.names())
    assert {"pheromone_status", "pheromone_deposit", "decay_now", "hot_paths", "cold_spots",
            "pheromone_heat"} <= names
    ops = {o["name"]: o for o in reg.describe()}
    assert ops["decay_now"]["mutates"] and ops["pheromone_deposit"]["mutates"]
    assert not ops["hot_paths"]["mutates"]
    with pytest.raises(ValueError):
        reg.add(operation.ops[0])


def test_deposit_status_hot_paths_and_decay(reg, palace):
    ids = palace.test_ids
    out = reg.call(palace, "pheromone_deposit", {"drawer_ids": ids[:2], "reward": 1.0})
    assert out["exploitation"] == [1.0, 0.5]
    # Steps are found in either direction (links are stored once).
    out = reg.call(palace, "pheromone_deposit",
                   {"path": [PATH[0], ["room:y/a", "room:x/a", "TUNNEL"]], "reward": 0.5})
    assert out["success"] == [0.5, 0.25]
    status = reg.call(palace, "pheromone_status", {})
    assert status["nodes"]["exploitation"]["total"] == pytest.approx(1.5)
    assert status["nodes"]["exploitation"]["nonzero"] == 2
    assert status["edge_pheromones"]["success"] == {"total": 0.75, "mean": 0.75 / 2,
                                                    "max": 0.5, "nonzero": 2}
    assert status["edges"] == 2
    hot = reg.call(palace, "hot_paths", {"limit": 5})["edges"]
    assert [(h["kind"], h["success"]) for h in hot] == [("HALL", 0.5), ("TUNNEL", 0.25)]
    assert hot[0]["phi"] == pytest.approx(0.5 * 0.5 + 0.3 + 0.2 * 0.1)
    assert hot[0]["current_cost"] == pytest.approx(0.5 * (1 - 0.5 * hot[0]["phi"]))
    decayed = reg.call(palace, "decay_now", {"cycles": 2})
    assert decayed["cycles"] == 2
    status = reg.call(palace, "pheromone_status", {})
    assert status["edge_pheromones"]["success"]["total"] == pytest.approx(0.75 * 0.99 ** 2)
    assert status["nodes"]["exploitation"]["max"] == pytest.approx(0.98 ** 2)
    reg.call(palace, "decay_now", {})
    assert reg.call(palace, "pheromone_status", {})["edge_pheromones"]["recency"]["max"] == \
        pytest.approx(0.9 ** 3)


def test_deposit_validates_input(reg, palace):
    call = reg.call
    with pytest.raises(ValidationError, match="not an edge kind"):
        call(palace, "pheromone_deposit", {"path": [["room:x/a", "room:x/b", "HAL"]]})
    with pytest.raises(ValidationError, match="hierarchy"):
        call(palace, "pheromone_deposit", {"path": [["wing:x", "room:x/a", "HAS_ROOM"]]})
    with pytest.raises(ValidationError, match="has too few items: 2, it needs at least 3"):
        call(palace, "pheromone_deposit", {"path": [["room:x/a", "HALL"]]})
    with pytest.raises(NotFound):
        call(palace, "pheromone_deposit", {"path": [["room:x/a", "room:q/b", "HALL"]]})
    with pytest.raises(NotFound):
        call(palace, "pheromone_deposit", {"drawer_ids": ["drawer_nope"]})
    with pytest.raises(ValidationError):
        call(palace, "pheromone_deposit", {"drawer_ids": palace.test_ids, "reward": 2})
    with pytest.raises(ValidationError):
        call(palace, "pheromone_deposit", {"drawer_ids": palace.test_ids, "reward": -0.1})
    with pytest.raises(ValidationError, match="exactly one"):
        call(palace, "pheromone_deposit", {})
    with pytest.raises(ValidationError, match="exactly one"):
        call(palace, "pheromone_deposit", {"drawer_ids": palace.test_ids, "path": PATH})
    with pytest.raises(ValidationError):
        call(palace, "pheromone_deposit", {"drawer_ids": []})
    with pytest.raises(ValidationError):
        call(palace, "decay_now", {"cycles": 0})
    with pytest.raises(ValidationError):
        call(palace, "decay_now", {"cycles": 1.5})
    assert call(palace, "pheromone_status", {})["nodes"]["exploitation"]["total"] == 0


def test_cold_spots(reg, palace):
    ids = palace.test_ids
    reg.call(palace, "pheromone_deposit", {"drawer_ids": [ids[0], ids[3]]})
    cold = reg.call(palace, "cold_spots", {"limit": 2})["drawers"]
    assert [c["drawer_id"] for c in cold] == [ids[1], ids[2]]
    cold_x = reg.call(palace, "cold_spots", {"wing": "x"})["drawers"]
    assert [c["drawer_id"] for c in cold_x] == [ids[1], ids[2], ids[0]]
    with pytest.raises(NotFound):
        reg.call(palace, "cold_spots", {"wing": "nowhere"})


def test_heat_per_wing_and_room(reg, palace):
    ids = palace.test_ids
    reg.call(palace, "pheromone_deposit", {"drawer_ids": [ids[0], ids[2]], "reward": 1.0})
    reg.call(palace, "pheromone_deposit", {"path": PATH, "reward": 1.0})
    heat = reg.call(palace, "pheromone_heat", {})
    rooms = {(r["wing"], r["room"]): r for r in heat["rooms"]}
    xa = rooms[("x", "a")]
    assert xa["drawers"] == 2
    assert xa["exploitation"] == {"sum": 1.0, "mean": 0.5}
    # room x/a touches both the HALL (success 1) and the TUNNEL (success 0.5).
    assert xa["edges"]["count"] == 2 and xa["edges"]["success"] == pytest.approx(1.5)
    assert rooms[("x", "b")]["edges"]["success"] == pytest.approx(1.0)
    assert rooms[("y", "a")]["edges"]["success"] == pytest.approx(0.5)
    wings = {w["wing"]: w for w in heat["wings"]}
    # The HALL lies inside wing x: counted once there.
    assert wings["x"]["edges"]["count"] == 2
    assert wings["x"]["edges"]["success"] == pytest.approx(1.5)
    assert wings["x"]["exploitation"]["sum"] == pytest.approx(1.5)
    assert wings["y"]["edges"]["count"] == 1 and wings["y"]["drawers"] == 1
    only_y = reg.call(palace, "pheromone_heat", {"wing": "y"})
    assert [w["wing"] for w in only_y["wings"]] == ["y"]
    assert only_y["rooms"][0]["edges"]["success"] == pytest.approx(0.5)
    empty = reg.call(Palace(), "pheromone_heat", {})
    assert empty == {"wings": [], "rooms": []}
    json.dumps(heat)


def test_palace_json_round_trips_pheromones(reg, palace):
    reg.call(palace, "pheromone_deposit", {"drawer_ids": palace.test_ids, "reward": 0.3})
    reg.call(palace, "pheromone_deposit", {"path": PATH, "reward": 0.7})
    reg.call(palace, "decay_now", {"cycles": 3})
    doc = json.loads(json.dumps(export_palace(palace, vectors=None)))
    back = read_palace(doc, lambda **kw: Palace(clock=lambda: 7.0, **kw))
    for name in ("pheromone_status", "hot_paths", "pheromone_heat"):
        assert reg.call(back, name, {}) == reg.call(palace, name, {})
    for did in palace.test_ids:
        assert back.drawer(did) == palace.drawer(did)
