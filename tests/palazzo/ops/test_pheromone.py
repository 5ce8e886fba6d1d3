"""Pheromone operations through a registry, as hosts call them."""

import json

import pytest

from palazzo.core.model import EdgeKind
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import NotFound, ReadOnly, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.ops import default_registry
from palazzo.ops.pheromone import operation
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace


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


# -- heat from use (issue 31): pheromone_use ---------------------------------------------------

def _heat(reg, palace):
    return {(r["wing"], r["room"]): r for r in reg.call(palace, "pheromone_heat", {})["rooms"]}


def test_a_search_only_explores_the_hits_and_their_rooms(reg, palace):
    ids = palace.test_ids
    out = reg.call(palace, "pheromone_use", {"action": "search",
                                             "drawer_ids": [ids[2], ids[0], ids[1]]})
    assert out["places"] == ["room:x/b", "room:x/a"] and out["edge"] is None
    heat = _heat(reg, palace)
    assert heat[("x", "a")]["exploration"]["sum"] == pytest.approx(0.2)  # two hits
    assert heat[("x", "b")]["exploration"]["sum"] == pytest.approx(0.1)
    assert heat[("y", "a")]["exploration"]["sum"] == 0.0
    # Once per room per search, however many hits it holds; nothing else moves.
    assert heat[("x", "a")]["node"] == {"exploitation": 0.0, "exploration": 0.1}
    status = reg.call(palace, "pheromone_status", {})
    assert status["nodes"]["exploitation"]["total"] == 0.0
    assert all(v["total"] == 0.0 for v in status["edge_pheromones"].values())
    assert status["places"]["wings"]["exploration"]["total"] == 0.0


def test_open_copy_and_helpful_deposit_down_the_path_to_the_drawer(reg, palace):
    d = palace.test_ids[2]  # x/b
    for action, reward in (("open", 0.3), ("copy", 0.6), ("helpful", 1.0)):
        out = reg.call(palace, "pheromone_use", {"action": action, "drawer_ids": [d]})
        assert out["reward"] == reward and out["places"] == ["palace", "wing:x", "room:x/b"]
    row = palace.row(d)
    c = palace.drawers.columns
    assert c["exploitation"][row] == pytest.approx(1.9)
    assert c["exploration"][row] == pytest.approx(0.1 * (0.7 + 0.4 + 0.0))
    # Places are weighted down the path: palace 1, wing 2/3, room 1/3 of the reward.
    nodes = {n["node"]: n for n in reg.call(palace, "node_pheromones", {"limit": 10})["nodes"]}
    assert nodes["palace"]["exploitation"] == pytest.approx(1.9)
    assert nodes["wing:x"]["exploitation"] == pytest.approx(1.9 * 2 / 3)
    assert nodes["room:x/b"]["exploitation"] == pytest.approx(1.9 / 3)
    heat = _heat(reg, palace)
    assert heat[("x", "b")]["exploitation"]["sum"] == pytest.approx(1.9)
    assert heat[("x", "a")]["exploitation"]["sum"] == 0.0
    # No link was walked: hierarchy edges carry no pheromone.
    assert all(v == 0 for k, v in heat[("x", "b")]["edges"].items() if k != "count")


def test_a_closet_is_on_the_path():
    reg = default_registry()
    p = Palace(clock=lambda: 7.0)
    d = reg.call(p, "add_drawer", {"wing": "w", "room": "r", "closet": "c",
                                   "content": "in a closet"})["drawer_id"]
    out = reg.call(p, "pheromone_use", {"action": "helpful", "drawer_ids": [d]})
    assert out["places"] == ["palace", "wing:w", "room:w/r", "closet:w/r/c"]


def test_open_from_another_drawer_walks_the_link_between_their_rooms(reg, palace):
    a, b = palace.test_ids[0], palace.test_ids[2]  # x/a and x/b: a HALL joins the rooms
    out = reg.call(palace, "pheromone_use", {"action": "open", "drawer_ids": [b], "from": a})
    edge = out["edge"]
    assert (edge["kind"], edge["success"], edge["traversal"], edge["recency"]) == \
        ("HALL", 0.3, 0.1, 1.0)
    assert edge["current_cost"] == pytest.approx(0.5 * (1 - 0.5 * edge["phi"]))
    # Helpful after the walk: success only (the link was not walked again).
    out = reg.call(palace, "pheromone_use", {"action": "helpful", "drawer_ids": [b],
                                             "from": a})
    assert (out["edge"]["success"], out["edge"]["traversal"]) == (pytest.approx(1.3), 0.1)
    heat = _heat(reg, palace)
    assert heat[("x", "a")]["edges"]["traversal"] == pytest.approx(0.1)
    assert heat[("x", "b")]["edges"]["success"] == pytest.approx(1.3)
    assert heat[("y", "a")]["edges"]["traversal"] == 0.0
    # Two drawers of one room: no link to walk.
    same = reg.call(palace, "pheromone_use", {"action": "open", "drawer_ids": [a],
                                              "from": palace.test_ids[1]})
    assert same["edge"] is None


def test_a_similar_to_link_between_the_drawers_is_walked_first():
    reg = default_registry()
    p = Palace(clock=lambda: 7.0)
    a = p.add_drawer("x", "a", "first")[0]
    b = p.add_drawer("x", "b", "second")[0]
    p.edges.add(EdgeKind.SIMILAR_TO, a, b)
    out = reg.call(p, "pheromone_use", {"action": "open", "drawer_ids": [a], "from": b})
    assert (out["edge"]["kind"], out["edge"]["src"], out["edge"]["dst"]) == ("SIMILAR_TO", a, b)


def test_pheromone_use_validates_before_it_changes_anything(reg, palace):
    ids = palace.test_ids
    with pytest.raises(ValidationError, match="one drawer id"):
        reg.call(palace, "pheromone_use", {"action": "open", "drawer_ids": ids[:2]})
    with pytest.raises(NotFound):
        reg.call(palace, "pheromone_use", {"action": "search",
                                           "drawer_ids": [ids[0], "drawer_nope"]})
    with pytest.raises(NotFound):
        reg.call(palace, "pheromone_use", {"action": "open", "drawer_ids": [ids[0]],
                                           "from": "drawer_nope"})
    with pytest.raises(ValidationError):
        reg.call(palace, "pheromone_use", {"action": "read", "drawer_ids": [ids[0]]})
    with pytest.raises(ValidationError):
        reg.call(palace, "pheromone_use", {"action": "search", "drawer_ids": ids * 13})
    with pytest.raises(ValidationError):
        reg.call(palace, "pheromone_use", {"action": "search"})
    status = reg.call(palace, "pheromone_status", {})
    assert status["nodes"]["exploration"]["total"] == 0.0
    assert status["places"]["rooms"]["exploration"]["total"] == 0.0


def test_use_never_changes_a_default_search_and_an_old_id_still_counts(reg, palace):
    ids = palace.test_ids
    before = reg.call(palace, "search", {"query": "memory", "limit": 4})["results"]
    reg.call(palace, "pheromone_use", {"action": "search", "drawer_ids": ids})
    for _ in range(3):
        reg.call(palace, "pheromone_use", {"action": "helpful", "drawer_ids": [ids[3]]})
    after = reg.call(palace, "search", {"query": "memory", "limit": 4})["results"]
    assert [(h["drawer_id"], h["score"]) for h in after] == \
        [(h["drawer_id"], h["score"]) for h in before]
    new = reg.call(palace, "update_drawer", {"drawer_id": ids[0], "content": "edited"})
    out = reg.call(palace, "pheromone_use", {"action": "open", "drawer_ids": [ids[0]]})
    assert out["drawers"] == [new["drawer"]["id"]]


def test_use_is_journaled_one_record_an_action_and_replays():
    space = MemorySpace()

    def make(**kw):
        return Palace(embedder=HashEmbedder(), clock=lambda: 0.0, **kw)

    store = PalaceStore(space, make)
    ids = [store.call("add_drawer", {"wing": "w", "room": r, "content": f"note {r}"})[
        "drawer_id"] for r in ("a", "b")]
    journal = [n for n in space.names() if n.startswith("journal-")]
    size = sum(len(space.read(n)) for n in journal)
    store.call("pheromone_use", {"action": "search", "drawer_ids": ids})
    store.call("pheromone_use", {"action": "helpful", "drawer_ids": [ids[1]], "from": ids[0]})
    grown = sum(len(space.read(n)) for n in journal) - size
    assert 0 < grown < 1000  # two records
    again = PalaceStore(space, make, read_only=True)
    want = store.call("pheromone_heat", {})
    assert again.call("pheromone_heat", {}) == want
    # A read-only copy searches, but leaves no heat.
    assert again.call("search", {"query": "note", "limit": 2})["results"]
    with pytest.raises(ReadOnly):
        again.call("pheromone_use", {"action": "search", "drawer_ids": ids})
