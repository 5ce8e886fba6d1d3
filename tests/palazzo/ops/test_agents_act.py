"""Agents that act through the operations: diary entries, tunnel proposals and their review,
node pheromones of places, and everything surviving the palace file, the snapshot and the
journal."""

import numpy as np
import pytest

from palazzo import call
from palazzo.core.model import EdgeKind, room_id, wing_id
from palazzo.errors import ImportRejected, NotFound, ValidationError
from palazzo.formats import snapshot
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.ops import default_registry
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace
from palazzo.stigmergy import tunnels

DIM = 32
TWINS = (room_id("alpha", "a1"), room_id("beta", "b2"))


def fill(p: Palace, seed: int = 0) -> Palace:
    rng = np.random.default_rng(seed)
    p.drawers.resize_vectors(DIM)
    twin = rng.standard_normal(DIM)
    for wing, letter in (("alpha", "a"), ("beta", "b"), ("gamma", "c")):
        for r in range(3):
            room = f"{letter}{r}"
            topic = twin if room_id(wing, room) in TWINS else rng.standard_normal(DIM)
            for k in range(3):
                did, _ = p.add_drawer(wing, room, f"{wing} {room} drawer {k}")
                v = topic / np.linalg.norm(topic) + 0.08 * rng.standard_normal(DIM)
                p.drawers.set_vector(p.row(did), (v / np.linalg.norm(v)).astype(np.float32))
    return p


def make(**kw) -> Palace:
    return Palace(similar_threshold=None, clock=lambda: 1_700_000_000.0, extract_on_add=False,
                  **kw)


@pytest.fixture
def palace():
    return fill(make())


GENERALIST = {"archetypes": ["generalist"], "cycles": 300, "seed": 0,
              "stop_on_converge": False}


def test_new_operations_are_registered():
    reg = default_registry()
    assert {"list_tunnel_proposals", "approve_tunnel", "reject_tunnel",
            "node_pheromones"} <= set(reg.names())
    assert reg.get("approve_tunnel").mutates and reg.get("reject_tunnel").mutates
    assert not reg.get("list_tunnel_proposals").mutates
    assert not reg.get("node_pheromones").mutates


def test_swarm_reports_per_agent_what_it_did(palace):
    out = call(palace, "run_swarm", {"agents": 5, "cycles": 120, "seed": 2,
                                     "stop_on_converge": False})
    by_kind = {a["archetype"]: a for a in out["agents"]}
    for a in out["agents"]:
        assert {"coverage", "trail_use", "trail_moves", "tunnels_proposed",
                "diary_notes"} <= set(a)
    spec = by_kind["specialist"]
    assert spec["left_wing"] == 0 and spec["diary_entries"] == 3 == spec["diary_notes"]
    assert out["gained"]["diary_entries"] == 3
    assert out["gained"]["places_with_pheromone"]["rooms"] > 0
    # The transient specialist became an agent with a diary of its wing.
    stored = palace.agents["agent:specialist-3"]
    assert stored.archetype == "specialist" and stored.focus == spec["wing"]
    entries = call(palace, "diary_read", {"agent": "specialist-3", "limit": 10})["entries"]
    assert len(entries) == 3 and all(e["topic"] == spec["wing"] for e in entries)
    assert all("specialist of wing" in e["content"] for e in entries)
    # Its diary wing is left alone by later runs' specialists and generalists.
    again = call(palace, "run_swarm", {"archetypes": ["specialist", "specialist", "specialist"],
                                       "cycles": 10, "seed": 0, "diary": False})
    assert "agent-specialist-3" not in {a["wing"] for a in again["agents"]}
    assert again["gained"]["diary_entries"] == 0
    # A later run with no agents named still runs the full mix: the agent the swarm made
    # to keep the diary is not taken for one of the user's own.
    mixed = call(palace, "run_swarm", {"cycles": 5, "seed": 0, "diary": False})
    assert len({a["archetype"] for a in mixed["agents"]}) == 5
    call(palace, "add_agent", {"name": "mine", "archetype": "explorer"})
    assert [a["name"] for a in call(palace, "run_swarm", {"cycles": 5, "diary": False})
            ["agents"]] == ["mine"]


def test_specialist_wing_option_and_errors(palace):
    out = call(palace, "run_swarm", {"archetypes": ["specialist"], "wing": "gamma",
                                     "cycles": 60, "stop_on_converge": False})
    assert out["agents"][0]["wing"] == "gamma" and out["agents"][0]["left_wing"] == 0
    with pytest.raises(NotFound):
        call(palace, "run_swarm", {"wing": "nowhere"})
    for bad in ({"tunnel_threshold": 2}, {"diary_every": 0}, {"add_tunnels": "yes"},
                {"diary": 1}):
        with pytest.raises(ValidationError):
            call(palace, "run_swarm", bad)


def test_proposals_list_approve_and_reject(palace):
    out = call(palace, "run_swarm", GENERALIST)
    assert out["gained"]["tunnels_proposed"] == 1 and out["gained"]["tunnels_added"] == 0
    listed = call(palace, "list_tunnel_proposals")
    assert listed["counts"] == {"pending": 1, "approved": 0, "rejected": 0}
    (proposal,) = listed["proposals"]
    assert (proposal["src"], proposal["dst"]) == tuple(sorted(TWINS))
    assert not tunnels.has_tunnel(palace, *TWINS)

    other = fill(make())
    call(other, "run_swarm", GENERALIST)
    assert call(other, "reject_tunnel", {"ids": [proposal["id"]]})["rejected"][0][
        "status"] == "rejected"
    assert not tunnels.has_tunnel(other, *TWINS)
    assert call(other, "list_tunnel_proposals", {"status": "rejected"})["proposals"][0][
        "id"] == proposal["id"]

    done = call(palace, "approve_tunnel", {"ids": [proposal["id"]]})
    assert done["approved"][0]["status"] == "approved" and tunnels.has_tunnel(palace, *TWINS)
    assert call(palace, "list_tunnel_proposals")["proposals"] == []
    assert len(call(palace, "list_tunnel_proposals", {"status": "all"})["proposals"]) == 1
    with pytest.raises(ValidationError, match="already approved"):
        call(palace, "approve_tunnel", {"ids": [proposal["id"]]})
    with pytest.raises(NotFound):
        call(palace, "reject_tunnel", {"ids": ["tunnel:0000"]})
    with pytest.raises(ValidationError):
        call(palace, "approve_tunnel", {"ids": []})
    with pytest.raises(ValidationError):
        call(palace, "list_tunnel_proposals", {"status": "maybe"})


def test_add_tunnels_option(palace):
    out = call(palace, "run_swarm", {**GENERALIST, "add_tunnels": True})
    assert out["gained"]["tunnels_added"] == 1 and tunnels.has_tunnel(palace, *TWINS)
    assert out["tunnel_proposals"][0]["status"] == "approved"


def test_node_pheromones_op_and_status(palace):
    hall = palace.edges.find(EdgeKind.HALL, room_id("alpha", "a0"), room_id("alpha", "a1"))
    from palazzo.stigmergy import pheromone

    pheromone.deposit_path(palace, [hall], reward=1.0,
                           nodes=[wing_id("alpha"), room_id("alpha", "a1")])
    out = call(palace, "node_pheromones", {})
    assert [(n["node"], n["kind"], n["exploitation"]) for n in out["nodes"]] == [
        (wing_id("alpha"), "wing", 1.0), (room_id("alpha", "a1"), "room", 0.5)]
    rooms = call(palace, "node_pheromones", {"kind": "room", "wing": "alpha"})
    assert rooms["matched"] == 1 and rooms["nodes"][0]["q_edge"] == 0.5
    assert call(palace, "node_pheromones", {"kind": "entity"})["nodes"] == []
    status = call(palace, "pheromone_status", {})
    assert status["places"]["rooms"]["exploitation"]["total"] == 0.5
    assert status["places"]["wings"]["exploitation"]["nonzero"] == 1
    heat = call(palace, "pheromone_heat", {})
    alpha = next(w for w in heat["wings"] if w["wing"] == "alpha")
    assert alpha["node"] == {"exploitation": 1.0, "exploration": 0.0}
    with pytest.raises(NotFound):
        call(palace, "node_pheromones", {"wing": "nowhere"})
    with pytest.raises(ValidationError):
        call(palace, "node_pheromones", {"kind": "drawer"})


# -- persistence -----------------------------------------------------------------------------

def _acted() -> Palace:
    p = fill(make())
    call(p, "run_swarm", {"agents": 5, "cycles": 150, "seed": 4, "stop_on_converge": False})
    call(p, "run_swarm", GENERALIST)
    return p


def _state(p: Palace):
    ids, cols = p.node_pheromones.live()
    return (ids, {k: v.tolist() for k, v in cols.items()}, p.tunnel_proposals.to_json(),
            sorted(p.diaries.entry_dict(x)["content"] for x in p.diaries.live()))


def test_palace_file_round_trip_and_old_files():
    p = _acted()
    assert p.node_pheromones.live()[0] and p.tunnel_proposals.items
    doc = export_palace(p, exported_at=0.0)
    assert doc["palace"]["node_pheromones"] and doc["palace"]["tunnel_proposals"]
    again = read_palace(doc, lambda **kw: make())
    assert _state(again) == _state(p)
    # A file from before node pheromones and proposals reads as none of either.
    del doc["palace"]["node_pheromones"], doc["palace"]["tunnel_proposals"]
    old = read_palace(doc, lambda **kw: make())
    assert old.node_pheromones.live()[0] == [] and not old.tunnel_proposals.items


@pytest.mark.parametrize("change, message", [
    (lambda b: b["node_pheromones"].append({"id": "room:nowhere/x"}), "no wing, room"),
    (lambda b: b["node_pheromones"].append(dict(b["node_pheromones"][0])), "twice"),
    (lambda b: b["node_pheromones"][0].update(exploration=-1.0), "out of range"),
    (lambda b: b["tunnel_proposals"][0].update(status="maybe"), "status"),
    (lambda b: b["tunnel_proposals"][0].update(id="tunnel:x"), "id is not"),
    (lambda b: b["tunnel_proposals"][0].update(dst="room:nowhere/x"), "no room"),
])
def test_palace_file_checks_them(change, message):
    doc = export_palace(_acted(), exported_at=0.0)
    change(doc["palace"])
    with pytest.raises(ImportRejected, match=message):
        read_palace(doc, lambda **kw: make())


def test_snapshot_round_trip():
    p = _acted()
    again = snapshot.read_snapshot(snapshot.write_snapshot(p), lambda **kw: make())
    assert _state(again) == _state(p)
    # The swarm reads them again: Q_edge of rooms is the same after a reload.
    from palazzo.stigmergy import pheromone

    rooms = [room_id(*k) for k in p.rooms]
    assert pheromone.social(again, rooms).tolist() == pheromone.social(p, rooms).tolist()


def test_journal_replays_swarm_and_approval():
    from palazzo.embed.hashing import HashEmbedder

    def boot(space):
        return PalaceStore(space, lambda **kw: Palace(embedder=HashEmbedder(dim=16), **kw),
                           clock=lambda: 1_700_000_000.0)
    space = MemorySpace()
    store = boot(space)
    texts = ["prune the roses in late winter", "roses want sun and mulch"]
    for wing, room in (("garden", "roses"), ("notes", "flowers")):
        for text in texts:
            store.call("add_drawer", {"wing": wing, "room": room, "content": text})
    store.call("add_drawer", {"wing": "code", "room": "db",
                              "content": "postgres vacuum settings and index bloat"})
    out = store.call("run_swarm", {"agents": 5, "cycles": 200, "seed": 1,
                                   "stop_on_converge": False})
    assert out["gained"]["places_with_pheromone"]["rooms"] > 0
    (proposal,) = store.call("list_tunnel_proposals")["proposals"]
    assert {proposal["src"], proposal["dst"]} == {room_id("garden", "roses"),
                                                  room_id("notes", "flowers")}
    store.call("approve_tunnel", {"ids": [proposal["id"]]})
    before = _state(store.palace)
    again = boot(space)
    assert again.status.problem is None
    assert _state(again.palace) == before
    assert tunnels.has_tunnel(again.palace, proposal["src"], proposal["dst"])
    again.compact()
    third = boot(space)
    assert _state(third.palace) == before
