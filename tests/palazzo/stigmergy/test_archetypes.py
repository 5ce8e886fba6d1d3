"""Agents that act, per archetype (issue 19): the explorer covers ground, the exploiter follows
trails, the specialist stays in its wing and keeps notes, the generalist proposes tunnels;
node pheromones on rooms, wings and entities."""

import numpy as np
import pytest

from palazzo.core.model import Agent, EdgeKind, Entity, room_id, wing_id
from palazzo.errors import NotFound, ValidationError
from palazzo.palace import Palace
from palazzo.stigmergy import pheromone, tunnels
from palazzo.stigmergy.swarm import SwarmConfig, run_swarm

DIM = 32
WINGS = {"alpha": "a", "beta": "b", "gamma": "c"}
TWINS = (room_id("alpha", "a1"), room_id("beta", "b2"))  # planted: the same topic
NO_STOP = SwarmConfig(stop_on_converge=False)


def build(seed: int = 0) -> Palace:
    """Three wings of four rooms (names differ across wings: no automatic TUNNELs), three
    drawers a room; each room's drawers lie around a topic of their own, except the twins,
    which share one."""
    rng = np.random.default_rng(seed)
    p = Palace(similar_threshold=None, clock=lambda: 0.0, extract_on_add=False)
    p.drawers.resize_vectors(DIM)
    twin = rng.standard_normal(DIM)
    for wing, letter in WINGS.items():
        for r in range(4):
            room = f"{letter}{r}"
            topic = twin if room_id(wing, room) in TWINS else rng.standard_normal(DIM)
            for k in range(3):
                did, _ = p.add_drawer(wing, room, f"{wing} {room} drawer {k}")
                v = topic / np.linalg.norm(topic) + 0.08 * rng.standard_normal(DIM)
                p.drawers.set_vector(p.row(did), (v / np.linalg.norm(v)).astype(np.float32))
    return p


def agent(name: str, kind: str, focus: str = "") -> Agent:
    return Agent(id=f"t:{name}", name=name, archetype=kind, focus=focus)


# -- node pheromones -------------------------------------------------------------------------

def test_rooms_wings_and_entities_carry_node_pheromones_and_decay():
    p = build()
    a, b = room_id("alpha", "a0"), room_id("alpha", "a1")
    hall = p.edges.find(EdgeKind.HALL, a, b)
    out = pheromone.deposit_path(p, [hall], reward=0.5)
    assert out["places"] == [a, b] and out["drawers"] == []
    assert pheromone.node_values(p, "exploitation", [a, b]).tolist() == [0.5, 0.25]
    assert pheromone.node_values(p, "exploration", [a, b]).tolist() == pytest.approx([.05, .05])
    assert pheromone.social(p, [a]).tolist() == pytest.approx([0.45])
    entity = "entity:rose"
    p.entities[entity] = Entity(entity, "Rose")
    pheromone.deposit_places(p, [entity, wing_id("beta")], 1.0)
    assert p.node_pheromones.value("exploitation", entity) == 1.0
    assert p.node_pheromones.value("exploitation", wing_id("beta")) == 0.5
    pheromone.decay(p, 10)
    assert p.node_pheromones.value("exploitation", entity) == pytest.approx(0.98 ** 10)
    assert p.node_pheromones.value("exploration", a) == pytest.approx(0.05 * 0.95 ** 10)
    pheromone.decay(p, 2000)  # floored to exactly zero
    assert not p.node_pheromones.columns["exploitation"].any()
    assert p.node_pheromones.live()[0] == []


def test_a_swarm_marks_rooms_and_wings_and_q_edge_reads_them():
    p = build()
    run_swarm(p, agents=["balanced", "explorer"], cycles=60, seed=1, config=NO_STOP)
    rooms = [room_id(w, f"{x}{r}") for w, x in WINGS.items() for r in range(4)]
    explored = pheromone.node_values(p, "exploration", rooms)
    assert (explored > 0).sum() >= 4  # no goal: every visit says "searched, nothing found"
    assert pheromone.social(p, rooms).min() < 0
    wings = pheromone.node_values(p, "exploration", [wing_id(w) for w in WINGS])
    assert wings.max() > 0


# -- explorer and exploiter ------------------------------------------------------------------

def test_explorer_covers_more_rooms_than_exploiter():
    explorer = exploiter = 0
    for seed in range(3):
        e = run_swarm(build(), agents=["explorer"], cycles=80, seed=seed, config=NO_STOP)
        x = run_swarm(build(), agents=["exploiter"], cycles=80, seed=seed, config=NO_STOP)
        explorer += e.agents[0]["coverage"]["rooms"] + e.agents[0]["coverage"]["drawers"]
        exploiter += x.agents[0]["coverage"]["rooms"] + x.agents[0]["coverage"]["drawers"]
        assert x.agents[0]["trail_use"] > e.agents[0]["trail_use"]
    assert explorer > 1.5 * exploiter


def test_exploiter_follows_the_laid_trail():
    p = build()
    trail = [room_id("alpha", f"a{r}") for r in range(4)]
    edges = [p.edges.find(EdgeKind.HALL, a, b) for a, b in zip(trail, trail[1:], strict=False)]
    for _ in range(3):
        pheromone.deposit_path(p, edges, reward=1.0)
    for seed in range(5):
        result = run_swarm(p, agents=[agent("ant", "exploiter", focus=trail[0])], cycles=3,
                           seed=seed, config=NO_STOP)
        # Three moves, each along the trail, end at its far end.
        assert result.agents[0]["position"] == trail[-1]
        assert result.agents[0]["trail_moves"] == 3 and result.agents[0]["trail_use"] == 1.0


def test_explorer_prefers_unvisited_nodes():
    p = build()
    r = run_swarm(p, agents=["explorer"], cycles=30, seed=2, config=NO_STOP)
    # Pure epistemic with a novelty bonus: most moves reach a node no agent had seen.
    assert r.agents[0]["coverage"]["nodes"] >= 15


# -- specialist ------------------------------------------------------------------------------

def test_specialist_never_leaves_its_wing_and_keeps_notes():
    p = build()
    r = run_swarm(p, agents=[agent("keeper", "specialist", focus="beta")], cycles=120, seed=3,
                  config=SwarmConfig(stop_on_converge=False, diary_every=50))
    a = r.agents[0]
    assert a["wing"] == "beta" and a["left_wing"] == 0 and a["moves"] == 120
    assert a["coverage"]["rooms"] >= 2
    assert len(r.notes) == 3 and a["diary_notes"] == 3  # cycles 1–50, 51–100, 101–120
    first = r.notes[0]
    assert (first.first_cycle, first.last_cycle) == (1, 50)
    assert first.text.startswith("keeper (specialist of wing 'beta'), swarm cycles 1–50")
    assert all(d in first.text for d in first.drawers)
    assert all(p.drawers.wing[p.row(d)] == "beta" for n in r.notes for d in n.drawers)
    assert all(room.startswith("room:beta/") for n in r.notes for room in n.rooms)


def test_specialists_without_focus_share_out_the_wings_and_rank_by_goal():
    p = build()
    r = run_swarm(p, agents=["specialist", "specialist"], cycles=20, seed=0, config=NO_STOP)
    # Without a goal: the wings with most drawers, then by name, one each.
    assert [a["wing"] for a in r.agents] == ["alpha", "beta"]
    goal = p.drawers.vectors[p.row(next(iter(p.drawers.row_of)))]  # a drawer of alpha/a0
    r = run_swarm(p, agents=["specialist"], cycles=20, seed=0, goal=goal, config=NO_STOP)
    assert r.agents[0]["wing"] == "alpha"
    assert "Most relevant to the goal" in r.notes[0].text
    r = run_swarm(p, agents=["specialist"], cycles=5, seed=0,
                  config=SwarmConfig(stop_on_converge=False, specialist_wing="gamma",
                                     skip_wings=frozenset({"alpha"})))
    assert r.agents[0]["wing"] == "gamma"


# -- generalist and tunnel proposals ---------------------------------------------------------

def test_generalist_proposes_the_planted_tunnel_and_nothing_dissimilar():
    p = build()
    r = run_swarm(p, agents=["generalist"], cycles=300, seed=0, config=NO_STOP)
    pairs = {(x["src"], x["dst"]) for x in r.proposals}
    assert pairs == {tuple(sorted(TWINS))}
    assert r.agents[0]["tunnels_proposed"] == 1 and r.agents[0]["wings_visited"] == 3
    (proposal,) = r.proposals
    assert proposal["status"] == "pending" and proposal["cosine"] >= tunnels.TUNNEL_COSINE
    assert not tunnels.has_tunnel(p, *TWINS)  # pending: no edge yet
    assert len(p.tunnel_proposals.listed()) == 1
    # Proposed once: another run does not propose the pair again.
    again = run_swarm(p, agents=["generalist"], cycles=300, seed=1, config=NO_STOP)
    assert again.proposals == []


def test_approve_adds_the_tunnel_and_reject_does_not():
    p = build()
    run_swarm(p, agents=["generalist"], cycles=300, seed=0, config=NO_STOP)
    (proposal,) = p.tunnel_proposals.listed()
    q = build()
    run_swarm(q, agents=["generalist"], cycles=300, seed=0, config=NO_STOP)

    approved = tunnels.approve(p, [proposal.id])
    assert approved[0]["status"] == "approved" and tunnels.has_tunnel(p, *TWINS)
    edge = p.edges.find(EdgeKind.TUNNEL, *sorted(TWINS))
    assert p.edges.props[edge]["proposed_by"] == "generalist-0"
    with pytest.raises(ValidationError, match="already approved"):
        tunnels.approve(p, [proposal.id])
    with pytest.raises(NotFound):
        tunnels.reject(p, ["tunnel:nope"])

    rejected = tunnels.reject(q, [proposal.id])
    assert rejected[0]["status"] == "rejected" and not tunnels.has_tunnel(q, *TWINS)
    assert q.tunnel_proposals.listed() == []
    assert run_swarm(q, agents=["generalist"], cycles=300, seed=0,
                     config=NO_STOP).proposals == []  # a rejected pair stays rejected


def test_add_tunnels_option_adds_them_directly():
    p = build()
    r = run_swarm(p, agents=["generalist"], cycles=300, seed=0,
                  config=SwarmConfig(stop_on_converge=False, add_tunnels=True))
    assert r.tunnels_added == 1 and r.proposals[0]["status"] == "approved"
    assert tunnels.has_tunnel(p, *TWINS)


def test_threshold_and_skipped_wings():
    p = build()
    r = run_swarm(p, agents=["generalist"], cycles=300, seed=0,
                  config=SwarmConfig(stop_on_converge=False, skip_wings=frozenset({"beta"})))
    assert r.proposals == []
    loose = run_swarm(build(), agents=["generalist"], cycles=300, seed=0,
                      config=SwarmConfig(stop_on_converge=False, tunnel_threshold=-1.0))
    assert len(loose.proposals) > 1
    with pytest.raises(ValidationError):
        run_swarm(p, config=SwarmConfig(tunnel_threshold=1.5))
    with pytest.raises(ValidationError):
        run_swarm(p, config=SwarmConfig(diary_every=0))


def test_proposal_ids_are_the_unordered_pair():
    a, b = TWINS
    assert tunnels.proposal_id(a, b) == tunnels.proposal_id(b, a)
    assert tunnels.proposal_id(a, b) != tunnels.proposal_id(a, a)


# -- determinism -----------------------------------------------------------------------------

def test_five_archetypes_are_reproducible_with_a_seed():
    def once(seed):
        p = build()
        r = run_swarm(p, agents=5, cycles=120, seed=seed, config=NO_STOP)
        return r.to_dict(), p.node_pheromones.live()[0]
    a, b, c = once(7), once(7), once(8)
    assert a[0] == b[0] and a[1] == b[1]
    assert a[0] != c[0]
    kinds = {x["archetype"]: x for x in a[0]["agents"]}
    assert set(kinds) == {"explorer", "exploiter", "balanced", "specialist", "generalist"}
    assert a[0]["gained"]["places_with_pheromone"]["rooms"] > 0
