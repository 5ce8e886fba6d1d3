"""Swarm benchmarks: the soak run (:func:`run`) and what each archetype does
(:func:`run_archetypes`).

Soak: m agents for many cycles on the pathfinding benchmark's synthetic palace (seed 000 §6
topology) with random unit drawer vectors; the goal is one drawer's own vector, so agents that
reach it and its neighbourhood earn reward. The run does not stop at convergence
(``stop_on_converge`` off): the point is to see pheromone mass, Φ variance, visited nodes and
the frontier over the whole soak, and when the two-of-three convergence criteria first and
last held.

Archetypes: a generated palace with *planted* truth (:func:`planted_palace`: every room's
drawers lie around a topic of its own, except ``twins`` pairs of rooms in different wings that
share one), then, on a fresh copy each, a swarm of only explorers, only exploiters, only
balanced agents, only specialists, only generalists, and all five mixed. Each run reports
coverage (distinct nodes the swarm visited; rooms and drawers per agent), trail use (share of
moves along an edge with Φ > 0), tunnels proposed and how many join a planted pair ("right"),
diary entries written, and what the palace gained (places and edges carrying pheromone,
node pheromone mass). ``palace_dir`` runs the same on a palace directory instead (no planted
truth there: tunnels are counted, not judged).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench.pathfinding import synthetic_palace
from palazzo.core.model import room_id
from palazzo.formats import snapshot
from palazzo.memory.diary import diary_wing
from palazzo.ops.agents import write_notes
from palazzo.palace import Palace
from palazzo.stigmergy import pheromone
from palazzo.stigmergy.agents import ARCHETYPES
from palazzo.stigmergy.swarm import SwarmConfig, run_swarm


def run(agents: int = 5, cycles: int = 500, wings: int = 8, rooms: int = 10, seed: int = 0,
        decay_every: int = 10) -> dict[str, Any]:
    """Return the soak run's summary, per-cycle curve and timing (ms per cycle)."""
    palace = synthetic_palace(wings, rooms, seed=seed)
    goal_row = int(np.random.default_rng(seed).integers(0, palace.drawers.size))
    goal = palace.drawers.vectors[goal_row].astype(np.float64)
    archetypes = [list(ARCHETYPES)[i % len(ARCHETYPES)] for i in range(agents)]
    t0 = time.perf_counter()
    result = run_swarm(palace, agents=archetypes, cycles=cycles, seed=seed, goal=goal,
                       config=SwarmConfig(decay_every=decay_every, stop_on_converge=False))
    seconds = time.perf_counter() - t0
    curve = [m.to_dict() for m in result.metrics]
    converged = [m["cycle"] for m in curve if m["converged"]]
    return {
        "benchmark": "swarm-soak",
        "palace": {"wings": wings, "rooms": rooms, "drawers": palace.drawers.size,
                   "edges": int(palace.edges.alive[: len(palace.edges.kind)].sum())},
        "agents": archetypes,
        "cycles": cycles,
        "seed": seed,
        "decay_every": decay_every,
        "goal_drawer": palace.drawers.ids[goal_row],
        "seconds": round(seconds, 3),
        "ms_per_cycle": round(1000 * seconds / max(len(curve), 1), 3),
        "first_converged_cycle": converged[0] if converged else None,
        "converged_cycles": len(converged),
        "final": curve[-1] if curve else None,
        "peak_pheromone_mass": max((m["pheromone_mass"] for m in curve), default=0.0),
        "summary": result.summary(),
        "curve": curve,
    }


def planted_palace(wings: int = 8, rooms: int = 10, drawers: int = 10, twins: int = 8,
                   dim: int = 64, noise: float = 0.6, seed: int = 0
                   ) -> tuple[Palace, set[frozenset[str]]]:
    """Return (a palace of ``wings`` × ``rooms`` rooms of ``drawers`` drawers, the planted
    pairs as frozensets of two room ids).

    Room names differ across wings (so no TUNNEL comes from a shared name); rooms of a wing get
    their HALLs as ``add_room`` gives them. Each room has a random unit topic t; a drawer's
    vector is t + noise·g/‖g‖·… normalised, g standard normal scaled by 1/√dim (so with noise
    0.6 a drawer sits at cosine ≈ 0.86 to its topic and a 10-drawer room's centroid at ≈ 0.98);
    ``twins`` pairs of rooms in different wings, drawn with the seed, share their topic
    (centroid cosine ≈ 0.95), every other pair is unrelated (|cosine| below about 0.5 in 64
    dimensions). Cost: O(wings · rooms · drawers · dim) plus one BM25 insert a drawer.
    """
    if wings < 2 or twins > wings * rooms // 2:
        raise ValueError("need two wings and at most half the rooms as twins")
    rng = np.random.default_rng(seed)
    p = Palace(similar_threshold=None, clock=lambda: 0.0, seed=seed, extract_on_add=False)
    p.drawers.resize_vectors(dim)
    names = [(f"w{w}", f"w{w}r{r}") for w in range(wings) for r in range(rooms)]
    topics = rng.standard_normal((len(names), dim))
    planted: set[frozenset[str]] = set()
    free = list(rng.permutation(len(names)))
    while len(planted) < twins and len(free) > 1:
        a = free.pop()
        b = next((x for x in free if names[x][0] != names[a][0]), None)
        if b is None:
            break
        free.remove(b)
        topics[b] = topics[a]
        planted.add(frozenset((room_id(*names[a]), room_id(*names[b]))))
    topics /= np.linalg.norm(topics, axis=1, keepdims=True)
    for j, (wing, room) in enumerate(names):
        vectors = topics[j] + noise * rng.standard_normal((drawers, dim)) / np.sqrt(dim)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        for k in range(drawers):
            did, _ = p.add_drawer(wing, room, f"{room} memory {k}")
            p.drawers.set_vector(p.row(did), vectors[k].astype(np.float32))
    return p, planted


def _copy(palace: Palace) -> Palace:
    """Return a fresh copy of ``palace`` (through the snapshot). Cost: O(palace)."""
    return snapshot.read_snapshot(snapshot.write_snapshot(palace), lambda **kw: Palace(**kw))


def _measure(palace: Palace, kinds: list[str], cycles: int, seed: int, goal: np.ndarray,
             planted: set[frozenset[str]] | None) -> dict[str, Any]:
    """Run a swarm of ``kinds`` on ``palace`` and return what it did and left."""
    skip = frozenset(diary_wing(a.name) for a in palace.agents.values())
    t0 = time.perf_counter()
    result = run_swarm(palace, agents=kinds, cycles=cycles, seed=seed, goal=goal,
                       config=SwarmConfig(stop_on_converge=False, skip_wings=skip))
    seconds = time.perf_counter() - t0
    written = write_notes(palace, result.notes)
    agents = result.agents
    pairs = [frozenset((p["src"], p["dst"])) for p in result.proposals]
    right = None if planted is None else sum(p in planted for p in pairs)
    edges = pheromone.carrier_edges(palace)
    places = palace.node_pheromones
    n = places.size
    last = result.metrics[-1]

    def mean(key: str, sub: str | None = None) -> float:
        values = [a[key][sub] if sub else a[key] for a in agents]
        return round(float(np.mean(values)), 3)

    return {
        "agents": kinds if len(set(kinds)) > 1 else f"{len(kinds)} × {kinds[0]}",
        "seconds": round(seconds, 3), "ms_per_cycle": round(1000 * seconds / cycles, 3),
        "coverage": {"swarm_nodes": last.visited, "rooms_per_agent": mean("coverage", "rooms"),
                     "drawers_per_agent": mean("coverage", "drawers")},
        "trail_use": mean("trail_use"),
        "tunnels": {"proposed": len(pairs), "right": right,
                    "planted": None if planted is None else len(planted)},
        "diary_entries": sum(written.values()),
        "specialists_left_wing": sum(a.get("left_wing", 0) for a in agents),
        "gained": {**result.places,
                   "edges_with_trail": int(np.count_nonzero(pheromone.phi(palace, edges))),
                   "place_pheromone_mass": round(float(sum(
                       places.columns[k][:n].sum() for k in pheromone.NODE_KINDS)), 3),
                   "pheromone_mass": round(last.pheromone_mass, 3)},
    }


def run_archetypes(wings: int = 8, rooms: int = 10, drawers: int = 10, twins: int = 8,
                   cycles: int = 500, per_archetype: int = 3, seed: int = 0,
                   palace_dir: Path | None = None, embedder: Any = None) -> dict[str, Any]:
    """Return per archetype (and mixed) what a swarm did on one generated palace (or on the
    palace directory ``palace_dir``, read and never written), each run on a fresh copy with
    the same goal (the topic of one room, drawn with ``seed``). Cost: building the palace plus
    six swarm runs of ``cycles`` cycles."""
    t0 = time.perf_counter()
    planted: set[frozenset[str]] | None
    if palace_dir is None:
        base, planted = planted_palace(wings, rooms, drawers, twins, seed=seed)
        where: dict[str, Any] = {"generated": {"wings": wings, "rooms_per_wing": rooms,
                                               "drawers_per_room": drawers, "twins": twins}}
    else:
        from palazzo.persist.directory import PalaceDirectory

        with PalaceDirectory(palace_dir, lambda **kw: Palace(embedder=embedder, **kw)) as d:
            base = _copy(d.store.palace)
        planted, where = None, {"palace": str(palace_dir)}
    built = time.perf_counter() - t0
    s = base.drawers
    rows = np.flatnonzero(s.alive[: s.size] & s.has_vector[: s.size])
    rng = np.random.default_rng(seed)
    goal_row = int(rows[rng.integers(len(rows))])
    goal_room = room_id(s.wing[goal_row], s.room[goal_row])
    goal = s.vectors[rows[np.asarray([room_id(s.wing[r], s.room[r]) == goal_room
                                      for r in rows])]].astype(np.float64).mean(axis=0)
    runs = {}
    for kind in ARCHETYPES:
        runs[kind] = _measure(_copy(base), [kind] * per_archetype, cycles, seed, goal, planted)
    mixed = [k for _ in range(per_archetype) for k in ARCHETYPES]
    runs["mixed"] = _measure(_copy(base), mixed, cycles, seed, goal, planted)
    return {
        "benchmark": "swarm-archetypes", **where,
        "drawers": int(len(s.live_rows())), "rooms": len(base.rooms), "wings": len(base.wings),
        "edges": len(base.edges), "build_seconds": round(built, 3), "goal_room": goal_room,
        "cycles": cycles, "per_archetype": per_archetype, "seed": seed, "runs": runs,
    }
