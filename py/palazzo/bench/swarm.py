"""Swarm soak run: m agents for many cycles on a synthetic palace, the curve written as data.

The palace is the pathfinding benchmark's synthetic palace (seed 000 §6 topology) with random
unit drawer vectors; the goal is one drawer's own vector, so agents that reach it and its
neighbourhood earn reward. The run does not stop at convergence (``stop_on_converge`` off):
the point is to see pheromone mass, Φ variance, visited nodes and the frontier over the whole
soak, and when the two-of-three convergence criteria first and last held.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from palazzo.bench.pathfinding import synthetic_palace
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
