"""Swarm coordination: m Active Inference agents walking the palace in SENSE → DECIDE → ACT →
UPDATE cycles (seed 000 §"Swarm Coordination", Algorithm "Swarm Coordination Cycle").

Each cycle, for every agent in order:

- SENSE: the candidate actions are the agent's neighbours in the palace graph (live edges in
  both directions; HAS_AGENT, FOCUSES_ON and WROTE edges are bookkeeping and are skipped).
  Each gets the interest score ``I = w1·V_epistemic + w2·V_pragmatic + w3·Q_edge``
  (:mod:`palazzo.stigmergy.agents`; the default weights (1, 1, 1) make I = −EFE exactly).
- DECIDE: a softmax draw ``p ∝ exp(I/τ)`` with the agent's (optionally annealed) temperature.
- ACT: the agent traverses the chosen edge. Our swarm only traverses; it adds no drawers.
- UPDATE: :func:`palazzo.stigmergy.pheromone.deposit_path` on the walked edge with reward
  ``clip(pragmatic(node), 0, 1)`` (0 without a goal), the arrived-at node as the only node
  (so a drawer gets exploitation += reward, exploration += 0.1·(1 − reward)); then the
  agent's precision about that node is updated (:func:`palazzo.stigmergy.agents.update_precision`).

Every ``decay_every`` cycles (δ, default 10) all pheromones decay by one step
(:func:`palazzo.stigmergy.pheromone.decay` with cycles=1, the seed's Eq. decay applied once).

Convergence: at least two of three criteria (seed defaults):

1. growth rate of the visited node set over the last ``window`` (10) cycles below
   ``growth_threshold`` (0.05 = 5 % new nodes per window);
2. variance of Φ over the live pheromone-carrying edges below ``variance_threshold`` (0.05);
3. frontier size (unvisited nodes adjacent to the visited set) below ``frontier_threshold``
   (10).

Criteria 2 and 3 hold trivially on a fresh small palace (no pheromone, small frontier), so
convergence is only tested from cycle ``window`` on, once the growth rate is defined.

Randomness comes only from ``numpy.random.default_rng(seed)``: the same seed on the same
palace gives the same result. The palace graph is read once per run (it does not change
during a swarm); per-cycle pheromone statistics are whole-column NumPy operations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, Agent, EdgeKind, wing_id
from palazzo.errors import ValidationError
from palazzo.stigmergy import pheromone
from palazzo.stigmergy.agents import (
    ARCHETYPES,
    PRIOR_PRECISION,
    anneal,
    archetype,
    choose,
    is_relevant,
    softmax_policy,
    update_precision,
)
from palazzo.stigmergy.pathfinding import node_vectors

# Told after each cycle: the cycle's number and its metrics (a host's progress display).
CycleReport = Callable[[int, dict[str, Any]], None]
Cancel = Callable[[], bool]

SKIP_KINDS = frozenset({EdgeKind.HAS_AGENT, EdgeKind.FOCUSES_ON, EdgeKind.WROTE})
MAX_CYCLES = 10_000


@dataclass(slots=True)
class SwarmConfig:
    """Knobs of a swarm run; the defaults are the seed's (δ and the window are ours)."""

    decay_every: int = 10
    window: int = 10
    growth_threshold: float = 0.05
    variance_threshold: float = 0.05
    frontier_threshold: int = 10
    schedule: str = "constant"  # or "linear", "exponential", "cosine" over the run's cycles
    min_temperature: float = 0.05
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    stop_on_converge: bool = True


@dataclass(slots=True)
class CycleMetrics:
    """What one cycle left behind."""

    cycle: int
    visited: int
    new_visits: int
    frontier: int
    pheromone_mass: float
    pheromone_variance: float
    growth_rate: float | None
    growth_ok: bool
    variance_ok: bool
    frontier_ok: bool
    converged: bool
    decayed: bool

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form of the metrics. O(1)."""
        return {"cycle": self.cycle, "visited": self.visited, "new_visits": self.new_visits,
                "frontier": self.frontier, "pheromone_mass": self.pheromone_mass,
                "pheromone_variance": self.pheromone_variance,
                "growth_rate": self.growth_rate, "growth_ok": self.growth_ok,
                "variance_ok": self.variance_ok, "frontier_ok": self.frontier_ok,
                "converged": self.converged, "decayed": self.decayed}


@dataclass(slots=True)
class SwarmAgent:
    """An agent during a run: its record, base temperature, position and beliefs."""

    record: Agent
    temperature: float
    position: str
    precision: dict[str, float] = field(default_factory=dict)
    moves: int = 0
    relevant: int = 0

    def summary(self) -> dict[str, Any]:
        """Return the agent's JSON-able end-of-run summary. O(1)."""
        return {"id": self.record.id, "name": self.record.name,
                "archetype": self.record.archetype, "temperature": self.temperature,
                "position": self.position, "moves": self.moves,
                "relevant_observations": self.relevant, "beliefs": len(self.precision)}


@dataclass(slots=True)
class SwarmResult:
    """The outcome of :func:`run_swarm`: per-cycle metrics and a summary."""

    seed: int
    cycles_requested: int
    cycles_run: int
    converged: bool
    converged_at: int | None
    cancelled: bool
    has_goal: bool
    agents: list[dict[str, Any]]
    metrics: list[CycleMetrics]

    def summary(self) -> dict[str, Any]:
        """Return the JSON-able summary (no per-cycle list). O(agents)."""
        last = self.metrics[-1] if self.metrics else None
        return {"seed": self.seed, "cycles_requested": self.cycles_requested,
                "cycles_run": self.cycles_run, "converged": self.converged,
                "converged_at": self.converged_at, "cancelled": self.cancelled,
                "has_goal": self.has_goal,
                "visited": last.visited if last else None,
                "frontier": last.frontier if last else None,
                "pheromone_mass": last.pheromone_mass if last else None,
                "agents": [dict(a) for a in self.agents]}

    def to_dict(self) -> dict[str, Any]:
        """Return the summary plus "metrics", one dict per cycle. O(cycles + agents)."""
        return {**self.summary(), "metrics": [m.to_dict() for m in self.metrics]}


def convergence_flags(growth_rate: float | None, variance: float, frontier: int,
                      config: SwarmConfig) -> tuple[bool, bool, bool]:
    """Return (growth below θ_g, variance below θ_v, frontier below θ_f). An undefined growth
    rate (fewer cycles than the window) is not below anything. O(1)."""
    growth_ok = growth_rate is not None and growth_rate < config.growth_threshold
    return (growth_ok, variance < config.variance_threshold,
            frontier < config.frontier_threshold)


def is_converged(flags: Sequence[bool]) -> bool:
    """Return whether at least two of the three criteria hold. O(1)."""
    return sum(bool(f) for f in flags) >= 2


def growth_rate(history: Sequence[int], window: int) -> float | None:
    """Return (visited now − visited ``window`` cycles ago) / max(visited then, 1), or None
    when the history (index 0 = before the first cycle) is shorter than the window. O(1)."""
    if len(history) <= window:
        return None
    before = history[-1 - window]
    return (history[-1] - before) / max(before, 1)


# -- setting up a run -----------------------------------------------------------------------
def resolve_goal(palace: Any, goal: str | np.ndarray | Sequence[float] | None
                 ) -> np.ndarray | None:
    """Return the unit goal vector (float64) of text (embedded with the palace's embedder) or
    of a vector, or None. Raises ValidationError without an embedder, on a wrong dimension or
    a zero vector. Cost: one embedding for text."""
    if goal is None:
        return None
    if isinstance(goal, str):
        if not goal.strip():
            raise ValidationError("goal text must not be empty")
        if palace.embedder is None:
            raise ValidationError("a text goal needs a palace with an embedder")
        vector = np.asarray(palace.embedder.embed([goal])[0], dtype=np.float64)
    else:
        vector = np.asarray(goal, dtype=np.float64).ravel()
    if vector.shape != (palace.drawers.dim,):
        raise ValidationError(f"goal vector must have {palace.drawers.dim} numbers, "
                              f"got {vector.size}")
    norm = float(np.linalg.norm(vector))
    if not np.isfinite(norm) or norm == 0.0:
        raise ValidationError("goal vector must be finite and non-zero")
    return vector / norm


ORDER = tuple(ARCHETYPES)


def resolve_agents(palace: Any, agents: int | Sequence[str] | Sequence[Agent] | None
                   ) -> list[Agent]:
    """Return the agent records of a run.

    None: the palace's agents, or one of each archetype when it has none; an int m: m
    transient agents cycling through the five archetypes; archetype names: one transient agent
    each; Agent records: themselves. Transient agents are not stored in the palace.
    Cost: O(m).
    """
    if agents is None:
        if palace.agents:
            return list(palace.agents.values())
        agents = list(ORDER)
    if isinstance(agents, bool):
        raise ValidationError("agents must be a count, archetype names or agent records")
    if isinstance(agents, int):
        if agents < 1:
            raise ValidationError("a swarm needs at least one agent")
        agents = [ORDER[i % len(ORDER)] for i in range(agents)]
    out = []
    for i, a in enumerate(agents):
        if isinstance(a, Agent):
            archetype(a.archetype)  # validates
            out.append(a)
        else:
            kind = archetype(a)
            out.append(Agent(id=f"swarm:{i}", name=f"{kind.name}-{i}", archetype=kind.name,
                             state={"temperature": kind.temperature}))
    if not out:
        raise ValidationError("a swarm needs at least one agent")
    return out


def _start(palace: Any, agent: Agent) -> str:
    focus = agent.focus.strip()
    if focus in palace.wings:
        return wing_id(focus)
    if focus and (focus in palace.edges.out or focus in palace.edges.inc):
        return focus
    return PALACE_ID


class _World:
    """The palace as the agents sense it: neighbours, pragmatic values and node pheromones.

    Neighbour lists are cached (the graph is fixed during a run); pragmatic values are one
    matrix-vector product over the drawers and one over the wing/room/closet vectors.
    """

    def __init__(self, palace: Any, goal: np.ndarray | None) -> None:
        self.palace = palace
        self.goal = goal
        self._neighbours: dict[str, list[tuple[int, str]]] = {}
        s = palace.drawers
        self.row_of = s.row_of
        self.drawer_prag = np.zeros(s.size, dtype=np.float64)
        self.group_index: dict[str, int] = {}
        self.group_prag = np.zeros(0, dtype=np.float64)
        if goal is not None:
            vectors = s.vectors[: s.size].astype(np.float64)
            norms = np.linalg.norm(vectors, axis=1)
            ok = s.has_vector[: s.size] & s.alive[: s.size] & (norms > 0)
            self.drawer_prag = np.where(ok, vectors @ goal / np.where(ok, norms, 1.0), 0.0)
            nv = node_vectors(palace)
            self.group_index = nv.index
            present = np.asarray(nv.present, dtype=bool)
            self.group_prag = np.where(present, nv.groups @ goal, 0.0) if len(present) \
                else self.group_prag

    def neighbours(self, node: str) -> list[tuple[int, str]]:
        """Return (edge, other end) of every live edge at ``node``, agent links skipped.
        O(degree) the first time, O(1) after."""
        cached = self._neighbours.get(node)
        if cached is None:
            e = self.palace.edges
            cached = [(i, e.dst[i]) for i in e.out.get(node, ()) if e.kind[i] not in SKIP_KINDS]
            cached += [(i, e.src[i]) for i in e.inc.get(node, ())
                       if e.kind[i] not in SKIP_KINDS]
            self._neighbours[node] = cached
        return cached

    def pragmatic(self, node: str) -> float:
        """Return cos(node vector, goal); 0 without a goal or a vector. O(1)."""
        if self.goal is None:
            return 0.0
        row = self.row_of.get(node)
        if row is not None:
            return float(self.drawer_prag[row])
        j = self.group_index.get(node)
        return 0.0 if j is None else float(self.group_prag[j])

    def social(self, nodes: Sequence[str]) -> np.ndarray:
        """Return exploitation − exploration per node (0 for non-drawers). O(len(nodes))."""
        rows = np.fromiter((self.row_of.get(n, -1) for n in nodes), np.intp, len(nodes))
        out = np.zeros(len(nodes), dtype=np.float64)
        is_drawer = rows >= 0
        if is_drawer.any():
            c = self.palace.drawers.columns
            r = rows[is_drawer]
            out[is_drawer] = c["exploitation"][r] - c["exploration"][r]
        return out


def _pheromone_stats(palace: Any, rows: np.ndarray, carriers: np.ndarray) -> tuple[float, float]:
    """Return (total of the five pheromones, Var(Φ) over ``carriers``). O(rows + carriers)."""
    s, c = palace.drawers.columns, palace.edges.columns
    mass = float(sum(s[k][rows].sum() for k in pheromone.NODE_KINDS))
    mass += float(sum(c[k][carriers].sum() for k in pheromone.EDGE_KINDS))
    variance = float(np.var(pheromone.phi(palace, carriers))) if len(carriers) else 0.0
    return mass, variance


def run_swarm(palace: Any, agents: int | Sequence[str] | Sequence[Agent] | None = None,
              cycles: int = 100, seed: int = 0,
              goal: str | np.ndarray | Sequence[float] | None = None,
              progress: CycleReport | None = None, cancel: Cancel | None = None,
              config: SwarmConfig | None = None) -> SwarmResult:
    """Run up to ``cycles`` swarm cycles on ``palace`` and return a :class:`SwarmResult`.

    Mutates the palace's pheromones (deposits and decay) and nothing else. ``progress`` is
    called once per completed cycle with (cycle, metrics dict); ``cancel`` is called before
    every cycle and a True stops the run cleanly (``cancelled=True``, the cycles done are
    kept). Cost per cycle: O(Σ agent degree) Python work plus O(drawers + edges) NumPy work for
    the pheromone statistics and, every δ cycles, the decay.
    """
    config = config or SwarmConfig()
    if isinstance(cycles, bool) or not isinstance(cycles, int) or not 1 <= cycles <= MAX_CYCLES:
        raise ValidationError(f"cycles must be an integer from 1 to {MAX_CYCLES}")
    if config.decay_every < 1 or config.window < 1:
        raise ValidationError("decay_every and window must be at least 1")
    if config.schedule not in ("constant", "linear", "exponential", "cosine"):
        raise ValidationError(f"unknown schedule {config.schedule!r}")
    records = resolve_agents(palace, agents)
    unit_goal = resolve_goal(palace, goal)
    has_goal = unit_goal is not None
    rng = np.random.default_rng(seed)
    world = _World(palace, unit_goal)
    swarm = [SwarmAgent(a, float(a.state.get("temperature", archetype(a.archetype).temperature)),
                        _start(palace, a)) for a in records]
    rows = palace.drawers.live_rows().astype(np.intp, copy=False)
    kinds = palace.edges.kind
    carriers = pheromone.carrier_edges(palace)  # agent links never carry swarm pheromone:
    carriers = carriers[np.fromiter((kinds[i] not in SKIP_KINDS for i in carriers.tolist()),
                                    bool, len(carriers))]
    w1, w2, w3 = config.weights

    visited: set[str] = set()
    frontier: set[str] = set()

    def visit(node: str) -> bool:
        if node in visited:
            return False
        visited.add(node)
        frontier.discard(node)
        frontier.update(n for _, n in world.neighbours(node) if n not in visited)
        return True

    for a in swarm:
        visit(a.position)
    history = [len(visited)]
    metrics: list[CycleMetrics] = []
    cancelled = False
    converged_at: int | None = None

    for t in range(1, cycles + 1):
        if cancel is not None and cancel():
            cancelled = True
            break
        new = 0
        for a in swarm:
            # SENSE
            candidates = world.neighbours(a.position)
            if not candidates:
                continue
            nodes = [n for _, n in candidates]
            precision = np.fromiter((a.precision.get(n, PRIOR_PRECISION) for n in nodes),
                                    np.float64, len(nodes))
            prag = np.fromiter((world.pragmatic(n) for n in nodes), np.float64, len(nodes))
            interest = w1 / precision + w2 * prag + w3 * world.social(nodes)
            # DECIDE (interest = −EFE with the default weights)
            tmin = min(config.min_temperature, a.temperature)
            temperature = anneal(config.schedule, t - 1, a.temperature, tmin, cycles)
            k = choose(softmax_policy(-interest, temperature), rng)
            edge, node = candidates[k]
            # ACT
            a.position = node
            a.moves += 1
            new += visit(node)
            # UPDATE
            value = float(prag[k])
            pheromone.deposit_path(palace, [edge], min(max(value, 0.0), 1.0), nodes=[node])
            relevant = is_relevant(value, has_goal)
            a.relevant += relevant
            a.precision[node] = update_precision(a.precision.get(node, PRIOR_PRECISION),
                                                 relevant)
        decayed = t % config.decay_every == 0
        if decayed:
            pheromone.decay(palace, 1)
        history.append(len(visited))
        mass, variance = _pheromone_stats(palace, rows, carriers)
        rate = growth_rate(history, config.window)
        flags = convergence_flags(rate, variance, len(frontier), config)
        done = t >= config.window and is_converged(flags)
        if done and converged_at is None:
            converged_at = t
        m = CycleMetrics(t, len(visited), new, len(frontier), mass, variance, rate, *flags,
                         converged=done, decayed=decayed)
        metrics.append(m)
        if progress is not None:
            progress(t, m.to_dict())
        if done and config.stop_on_converge:
            break

    return SwarmResult(seed=seed, cycles_requested=cycles, cycles_run=len(metrics),
                       converged=converged_at is not None, converged_at=converged_at,
                       cancelled=cancelled, has_goal=has_goal,
                       agents=[a.summary() for a in swarm], metrics=metrics)
