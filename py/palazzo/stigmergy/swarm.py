"""Swarm coordination: m Active Inference agents walking the palace in SENSE → DECIDE → ACT →
UPDATE cycles (seed 000 §"Swarm Coordination", Algorithm "Swarm Coordination Cycle").

Each cycle, for every agent in order:

- SENSE: the candidate actions are the agent's neighbours in the palace graph (live edges in
  both directions; HAS_AGENT, FOCUSES_ON and WROTE edges are bookkeeping and are skipped).
  A confined agent (the specialist) only sees neighbours inside its wing; an agent whose
  strategy does not backtrack drops the node it just came from while it has another choice.
  Each candidate gets the interest score of the agent's archetype
  (:class:`palazzo.stigmergy.agents.Strategy`): for the balanced archetype and the default
  weights (1, 1, 1) that is ``I = V_epistemic + V_pragmatic + Q_edge = −EFE`` exactly; the
  explorer weighs only epistemic terms (its own uncertainty, nodes no agent of the swarm has
  seen, no exploration mark), the exploiter the trails (edge Φ and node exploitation) and the
  goal, the generalist adds a pull towards the wings it has seen least.
- DECIDE: a softmax draw ``p ∝ exp(I/τ)`` with the agent's (optionally annealed) temperature.
- ACT: the agent traverses the chosen edge. Besides walking, two archetypes act on what they
  find: a *generalist* looks, in each room it is in, for rooms of other wings with a centroid
  cosine of at least ``tunnel_threshold`` and no TUNNEL, and records each such pair as a
  pending proposal in ``palace.tunnel_proposals`` (:mod:`palazzo.stigmergy.tunnels`); a
  *specialist* notes the drawers of its wing it looked into and, every ``diary_every``
  cycles and at the end, turns them into a diary note (:class:`DiaryNote`: deterministic text
  naming the rooms walked and the drawers most relevant to the goal). The swarm returns the
  notes; the ``run_swarm`` operation writes them to the agent's diary
  (:mod:`palazzo.memory.diary`, a layer above this one).
- UPDATE: :func:`palazzo.stigmergy.pheromone.deposit_path` on the walked edge with reward
  ``clip(pragmatic(node), 0, 1)`` (0 without a goal), the arrived-at node as the only node:
  a drawer, room, wing, closet or entity gets exploitation += reward, exploration +=
  0.1·(1 − reward) (drawers in their columns, the others in ``palace.node_pheromones``); then
  the agent's precision about that node is updated
  (:func:`palazzo.stigmergy.agents.update_precision`; the explorer on every visit).

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
during a swarm: approved tunnels are added after the last cycle); per-cycle pheromone
statistics are whole-column NumPy operations.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, Agent, EdgeKind, room_id, wing_id
from palazzo.errors import ValidationError
from palazzo.stigmergy import pheromone, tunnels
from palazzo.stigmergy.agents import (
    ARCHETYPES,
    PRIOR_PRECISION,
    STRATEGIES,
    Strategy,
    anneal,
    archetype,
    choose,
    is_relevant,
    softmax_policy,
    update_precision,
)
from palazzo.stigmergy.pathfinding import NodeVectors, node_vectors

# Told after each cycle: the cycle's number and its metrics (a host's progress display).
CycleReport = Callable[[int, dict[str, Any]], None]
Cancel = Callable[[], bool]

SKIP_KINDS = frozenset({EdgeKind.HAS_AGENT, EdgeKind.FOCUSES_ON, EdgeKind.WROTE})
MAX_CYCLES = 10_000
DIARY_EVERY = 50  # cycles between a specialist's diary notes
NOTE_DRAWERS = 5  # drawers a note names
NOTE_ROOMS = 8  # rooms a note names
SNIPPET = 100  # characters of a drawer a note quotes
PROPOSALS_PER_ROOM = 3  # the best pairs a generalist proposes from one room
RESTLESS = 20  # moves in one wing after which a generalist's way out is fully attractive
MADE_BY = "made_by"  # an agent's state key: "swarm" for one a run made to keep a diary


@dataclass(slots=True)
class SwarmConfig:
    """Knobs of a swarm run; the defaults are the seed's (δ, the window and the acts' knobs
    are ours). ``skip_wings``: wings no specialist is given and no tunnel is proposed into
    (the ``run_swarm`` operation puts the agents' diary wings here). ``add_tunnels``: approve
    the generalists' proposals at the end of the run instead of leaving them pending.
    ``specialist_wing``: the wing of the specialists without a wing focus (by default each
    gets the next of :func:`specialist_wings`)."""

    decay_every: int = 10
    window: int = 10
    growth_threshold: float = 0.05
    variance_threshold: float = 0.05
    frontier_threshold: int = 10
    schedule: str = "constant"  # or "linear", "exponential", "cosine" over the run's cycles
    min_temperature: float = 0.05
    weights: tuple[float, float, float] = (1.0, 1.0, 1.0)
    stop_on_converge: bool = True
    tunnel_threshold: float = tunnels.TUNNEL_COSINE
    diary_every: int = DIARY_EVERY
    add_tunnels: bool = False
    skip_wings: frozenset[str] = frozenset()
    specialist_wing: str | None = None  # the wing of every specialist without a focus


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
class DiaryNote:
    """What a specialist found in its wing over some cycles, as its diary entry says it."""

    agent: str  # the agent's name
    agent_id: str
    wing: str
    first_cycle: int
    last_cycle: int
    text: str
    drawers: list[str]
    rooms: list[str]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able record. O(size of the note)."""
        return {"agent": self.agent, "agent_id": self.agent_id, "wing": self.wing,
                "first_cycle": self.first_cycle, "last_cycle": self.last_cycle,
                "text": self.text, "drawers": list(self.drawers), "rooms": list(self.rooms)}


@dataclass(slots=True)
class SwarmAgent:
    """An agent during a run: its record, strategy, position, beliefs and what it did."""

    record: Agent
    temperature: float
    position: str
    strategy: Strategy = field(default_factory=Strategy)
    wing: str | None = None  # the wing a confined agent stays in
    previous: str | None = None
    precision: dict[str, float] = field(default_factory=dict)
    moves: int = 0
    relevant: int = 0
    trail_moves: int = 0
    seen: set[str] = field(default_factory=set)
    rooms: set[str] = field(default_factory=set)
    drawers: set[str] = field(default_factory=set)
    wing_visits: dict[str, int] = field(default_factory=dict)
    stay: int = 0  # moves since the agent last entered another wing
    left_wing: int = 0
    looked: set[str] = field(default_factory=set)  # rooms a generalist compared
    proposed: int = 0
    notes: int = 0
    found: dict[str, float] = field(default_factory=dict)  # drawer -> pragmatic, this window
    walked: list[str] = field(default_factory=list)  # rooms, this window, first-seen order
    window_start: int = 1

    def summary(self) -> dict[str, Any]:
        """Return the agent's JSON-able end-of-run summary. O(1)."""
        out = {"id": self.record.id, "name": self.record.name,
               "archetype": self.record.archetype, "temperature": self.temperature,
               "position": self.position, "moves": self.moves,
               "relevant_observations": self.relevant, "beliefs": len(self.precision),
               "coverage": {"nodes": len(self.seen), "rooms": len(self.rooms),
                            "drawers": len(self.drawers)},
               "trail_moves": self.trail_moves,
               "trail_use": round(self.trail_moves / self.moves, 6) if self.moves else 0.0,
               "wings_visited": len(self.wing_visits),
               "tunnels_proposed": self.proposed, "diary_notes": self.notes}
        if self.strategy.confined:
            out["wing"] = self.wing
            out["left_wing"] = self.left_wing
        return out


@dataclass(slots=True)
class SwarmResult:
    """The outcome of :func:`run_swarm`: per-cycle metrics, a summary and what was made."""

    seed: int
    cycles_requested: int
    cycles_run: int
    converged: bool
    converged_at: int | None
    cancelled: bool
    has_goal: bool
    agents: list[dict[str, Any]]
    metrics: list[CycleMetrics]
    proposals: list[dict[str, Any]] = field(default_factory=list)
    tunnels_added: int = 0
    notes: list[DiaryNote] = field(default_factory=list)
    places: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """Return the JSON-able summary (no per-cycle list). O(agents + proposals + notes)."""
        last = self.metrics[-1] if self.metrics else None
        return {"seed": self.seed, "cycles_requested": self.cycles_requested,
                "cycles_run": self.cycles_run, "converged": self.converged,
                "converged_at": self.converged_at, "cancelled": self.cancelled,
                "has_goal": self.has_goal,
                "visited": last.visited if last else None,
                "frontier": last.frontier if last else None,
                "pheromone_mass": last.pheromone_mass if last else None,
                "agents": [dict(a) for a in self.agents],
                "tunnel_proposals": [dict(p) for p in self.proposals],
                "notes": [n.to_dict() for n in self.notes],
                "gained": {"tunnels_proposed": len(self.proposals),
                           "tunnels_added": self.tunnels_added,
                           "diary_notes": len(self.notes),
                           "places_with_pheromone": dict(self.places)}}

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

    None: the palace's agents (not counting those a swarm made to keep a specialist's diary:
    ``state[MADE_BY] == "swarm"``), or one of each archetype when it has none; an int m: m
    transient agents cycling through the five archetypes; archetype names: one transient agent
    each; Agent records: themselves. Transient agents are not stored in the palace.
    Cost: O(m).
    """
    if agents is None:
        mine = [a for a in palace.agents.values() if a.state.get(MADE_BY) != "swarm"]
        if mine:
            return mine
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


def specialist_wings(palace: Any, goal: np.ndarray | None, skip: frozenset[str],
                     vectors: NodeVectors | None = None) -> list[str]:
    """Return the wings a specialist may be given, best first: with a goal, by the cosine of
    the wing's centroid to it; without, by live drawers; then by name. Wings in ``skip`` and
    wings without drawers are left out. Cost: O(drawers) (plus :func:`node_vectors`' cost
    with a goal when ``vectors`` is not given)."""
    s = palace.drawers
    counts: dict[str, int] = {}
    for r in s.live_rows().tolist():
        counts[s.wing[r]] = counts.get(s.wing[r], 0) + 1
    wings = [w for w in palace.wings if counts.get(w) and w not in skip]
    if goal is None:
        return sorted(wings, key=lambda w: (-counts[w], w))
    nv = vectors or node_vectors(palace)

    def score(w: str) -> float:
        j = nv.index.get(wing_id(w))
        return float(nv.groups[j] @ goal) if j is not None and nv.present[j] else -2.0

    return sorted(wings, key=lambda w: (-score(w), w))


class _World:
    """The palace as the agents sense it: neighbours, wings and rooms of nodes, pragmatic
    values, node pheromones, trails and room centroids.

    Neighbour lists are cached (the graph is fixed during a run); pragmatic values are one
    matrix-vector product over the drawers and one over the wing/room/closet vectors; the
    room centroids are made once, when a generalist first needs them.
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
        self._vectors: NodeVectors | None = None
        # wing and room of every wing, room and closet node (drawers: their columns).
        self.wing_of: dict[str, str] = {wing_id(w): w for w in palace.wings}
        self.room_of: dict[str, str] = {}
        for w, r in palace.rooms:
            self.wing_of[room_id(w, r)] = w
            self.room_of[room_id(w, r)] = room_id(w, r)
        for c in palace.closets.values():
            self.wing_of[c.id] = c.wing
            self.room_of[c.id] = room_id(c.wing, c.room)
        self._rooms: tuple[dict[str, int], list[str], np.ndarray, np.ndarray] | None = None
        if goal is not None:
            vectors = s.vectors[: s.size].astype(np.float64)
            norms = np.linalg.norm(vectors, axis=1)
            ok = s.has_vector[: s.size] & s.alive[: s.size] & (norms > 0)
            self.drawer_prag = np.where(ok, vectors @ goal / np.where(ok, norms, 1.0), 0.0)
            nv = self.vectors()
            self.group_index = nv.index
            present = np.asarray(nv.present, dtype=bool)
            self.group_prag = np.where(present, nv.groups @ goal, 0.0) if len(present) \
                else self.group_prag

    def vectors(self) -> NodeVectors:
        """Return the wing/room/closet centroids, made on first use. O(drawers · dim) once."""
        if self._vectors is None:
            self._vectors = node_vectors(self.palace)
        return self._vectors

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

    def wing(self, node: str) -> str | None:
        """Return the wing ``node`` lies in (None for entities and the palace node). O(1)."""
        row = self.row_of.get(node)
        return self.palace.drawers.wing[row] if row is not None else self.wing_of.get(node)

    def room(self, node: str) -> str | None:
        """Return the room id ``node`` lies in (itself for a room; None above rooms and for
        entities). O(1)."""
        row = self.row_of.get(node)
        if row is not None:
            s = self.palace.drawers
            return room_id(s.wing[row], s.room[row])
        return self.room_of.get(node)

    def pragmatic(self, node: str) -> float:
        """Return cos(node vector, goal); 0 without a goal or a vector. O(1)."""
        if self.goal is None:
            return 0.0
        row = self.row_of.get(node)
        if row is not None:
            return float(self.drawer_prag[row])
        j = self.group_index.get(node)
        return 0.0 if j is None else float(self.group_prag[j])

    def room_matrix(self, skip: frozenset[str]
                    ) -> tuple[dict[str, int], list[str], np.ndarray, np.ndarray]:
        """Return (position of each room id, room ids, their wings' codes, their unit
        centroids) of the rooms that have a vector and lie outside ``skip``: what a
        generalist compares a room against. Made once a run. Cost: O(rooms · dim)."""
        if self._rooms is None:
            nv = self.vectors()
            ids = [room_id(w, r) for w, r in self.palace.rooms if w not in skip
                   and nv.present[nv.index[room_id(w, r)]]]
            codes: dict[str, int] = {}
            wings = np.fromiter((codes.setdefault(self.wing_of[i], len(codes)) for i in ids),
                                np.intp, len(ids))
            rows = np.fromiter((nv.index[i] for i in ids), np.intp, len(ids))
            self._rooms = ({r: i for i, r in enumerate(ids)}, ids, wings, nv.groups[rows])
        return self._rooms


def _domain(world: _World, a: SwarmAgent, nodes: list[str]) -> np.ndarray:
    """Return V_domain of each of ``nodes`` for agent ``a``: 1/(1 + its visits of the node's
    wing) for a node of another wing; min(1, stay/RESTLESS) for a way out of the current
    wing (its wing node, the palace node, an entity), ``stay`` being the agent's moves since
    it entered that wing; 0 deeper inside it. So a generalist works a wing for a while, then
    leaves for the wings it has seen least, over the hierarchy or straight through a TUNNEL,
    SIMILAR_TO or REFERENCES edge. Cost: O(len(nodes))."""
    here = world.wing(a.position)
    restless = min(1.0, a.stay / RESTLESS)
    out = np.zeros(len(nodes), dtype=np.float64)
    for i, n in enumerate(nodes):
        w = world.wing(n)
        if w is None or (w == here and n == wing_id(w)):
            out[i] = restless
        elif w != here:
            out[i] = 1.0 / (1.0 + a.wing_visits.get(w, 0))
    return out


def _pheromone_stats(palace: Any, rows: np.ndarray, carriers: np.ndarray) -> tuple[float, float]:
    """Return (total of the five pheromones, Var(Φ) over ``carriers``). O(rows + carriers)."""
    s, c = palace.drawers.columns, palace.edges.columns
    places = palace.node_pheromones
    mass = float(sum(s[k][rows].sum() for k in pheromone.NODE_KINDS))
    mass += float(sum(places.columns[k][: places.size].sum() for k in pheromone.NODE_KINDS))
    mass += float(sum(c[k][carriers].sum() for k in pheromone.EDGE_KINDS))
    variance = float(np.var(pheromone.phi(palace, carriers))) if len(carriers) else 0.0
    return mass, variance


def _propose(palace: Any, world: _World, a: SwarmAgent, room: str, config: SwarmConfig,
             made: list[dict[str, Any]]) -> None:
    """Compare ``room`` (once per agent) with the rooms of other wings and record the best
    new pairs at or above the threshold as pending proposals. Cost: one (rooms · dim)
    matrix-vector product."""
    if room in a.looked:
        return
    a.looked.add(room)
    at, ids, wings, matrix = world.room_matrix(config.skip_wings)
    mine = at.get(room)
    if mine is None:  # a room without a vector, or in a skipped wing
        return
    cosines = matrix @ matrix[mine]
    hits = np.flatnonzero((wings != wings[mine]) & (cosines >= config.tunnel_threshold))
    hits = hits[np.argsort(-cosines[hits], kind="stable")]
    count = 0
    for h in hits.tolist():
        if count >= PROPOSALS_PER_ROOM:
            break
        if tunnels.has_tunnel(palace, room, ids[h]) or palace.tunnel_proposals.known(
                room, ids[h]):
            continue
        p = palace.tunnel_proposals.propose(room, ids[h], float(cosines[h]), a.record.name)
        if p is not None:
            made.append(p.to_dict())
            a.proposed += 1
            count += 1


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET else flat[: SNIPPET - 1] + "…"


def _note(palace: Any, world: _World, a: SwarmAgent, last: int, goal_label: str | None
          ) -> DiaryNote | None:
    """Return the diary note of what specialist ``a`` found since its last note (None when
    it looked into no drawer), and start a new window. Cost: O(drawers found)."""
    found, walked, first = a.found, a.walked, a.window_start
    a.found, a.walked, a.window_start = {}, [], last + 1
    if not found:
        return None
    s = palace.drawers
    ranked = sorted(found.items(), key=lambda kv: -kv[1]) if goal_label is not None \
        else list(found.items())  # without a goal: in the order found
    top = ranked[:NOTE_DRAWERS]
    prefix = room_id(a.wing or "", "")
    names = [r.removeprefix(prefix) for r in walked[:NOTE_ROOMS]]
    more = f" and {len(walked) - NOTE_ROOMS} more" if len(walked) > NOTE_ROOMS else ""
    head = (f"{a.record.name} (specialist of wing {a.wing!r}), swarm cycles {first}–{last}"
            + (f", goal {goal_label}" if goal_label is not None else "") + ": "
            f"walked {len(walked)} room{'s' * (len(walked) != 1)} ({', '.join(names)}{more}) "
            f"and looked into {len(found)} drawer{'s' * (len(found) != 1)}.")
    lines = [head, "Most relevant to the goal:" if goal_label is not None
             else "Drawers, in the order found:"]
    for did, cos in top:
        row = s.row_of[did]
        where = f"{s.wing[row]}/{s.room[row]}"
        score = f" (cosine {cos:.3f})" if goal_label is not None else ""
        lines.append(f"- {did} in {where}{score}: \"{_snippet(s.content[row])}\"")
    a.notes += 1
    return DiaryNote(a.record.name, a.record.id, a.wing or "", first, last, "\n".join(lines),
                     [d for d, _ in top], list(walked))


def _places(palace: Any, world: _World) -> dict[str, int]:
    """Return how many wings, rooms, closets and entities carry some node pheromone. O(n)."""
    table = palace.node_pheromones
    ids, _ = table.live()
    out = {"wings": 0, "rooms": 0, "closets": 0, "entities": 0}
    for node in ids:
        if node.startswith("wing:") and node in world.wing_of:
            out["wings"] += 1
        elif node in world.room_of:
            out["rooms" if world.room_of[node] == node else "closets"] += 1
        elif node in palace.entities:
            out["entities"] += 1
    return out


def run_swarm(palace: Any, agents: int | Sequence[str] | Sequence[Agent] | None = None,
              cycles: int = 100, seed: int = 0,
              goal: str | np.ndarray | Sequence[float] | None = None,
              progress: CycleReport | None = None, cancel: Cancel | None = None,
              config: SwarmConfig | None = None) -> SwarmResult:
    """Run up to ``cycles`` swarm cycles on ``palace`` and return a :class:`SwarmResult`.

    Mutates the palace's pheromones (deposits and decay) and its tunnel proposals (new
    pending ones; with ``config.add_tunnels`` they are approved, adding TUNNEL edges, after
    the last cycle); the specialists' diary notes are returned, not written. ``progress`` is
    called once per completed cycle with (cycle, metrics dict); ``cancel`` is called before
    every cycle and a True stops the run cleanly (``cancelled=True``, the cycles done are
    kept). Cost per cycle: O(Σ agent degree) Python work plus O(drawers + edges) NumPy work for
    the pheromone statistics and, every δ cycles, the decay; a generalist adds one
    (rooms · dim) product the first time it is in a room.
    """
    config = config or SwarmConfig()
    if isinstance(cycles, bool) or not isinstance(cycles, int) or not 1 <= cycles <= MAX_CYCLES:
        raise ValidationError(f"cycles must be an integer from 1 to {MAX_CYCLES}")
    if config.decay_every < 1 or config.window < 1 or config.diary_every < 1:
        raise ValidationError("decay_every, window and diary_every must be at least 1")
    if config.schedule not in ("constant", "linear", "exponential", "cosine"):
        raise ValidationError(f"unknown schedule {config.schedule!r}")
    if not -1.0 <= config.tunnel_threshold <= 1.0:
        raise ValidationError("tunnel_threshold must be a cosine from -1 to 1")
    records = resolve_agents(palace, agents)
    unit_goal = resolve_goal(palace, goal)
    has_goal = unit_goal is not None
    goal_label = None if not has_goal else (repr(goal.strip()) if isinstance(goal, str)
                                            else "(a vector)")
    rng = np.random.default_rng(seed)
    world = _World(palace, unit_goal)
    swarm = [SwarmAgent(a, float(a.state.get("temperature", archetype(a.archetype).temperature)),
                        _start(palace, a), STRATEGIES[archetype(a.archetype).name])
             for a in records]
    confined = [a for a in swarm if a.strategy.confined]
    if confined:
        ranked = specialist_wings(palace, unit_goal, config.skip_wings,
                                  world.vectors() if has_goal else None)
        k = 0
        for a in confined:
            focus = a.record.focus.strip()
            if focus in palace.wings:
                a.wing = focus
            elif config.specialist_wing in palace.wings:
                a.wing = config.specialist_wing
            elif ranked:
                a.wing = ranked[k % len(ranked)]
                k += 1
            if a.wing is not None:
                a.position = wing_id(a.wing)
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

    def arrive(a: SwarmAgent, node: str) -> None:
        w = world.wing(node)
        a.stay = a.stay + 1 if w is None or w == world.wing(a.previous or PALACE_ID) else 0
        a.seen.add(node)
        if w is not None:
            a.wing_visits[w] = a.wing_visits.get(w, 0) + 1
        if a.wing is not None and a.strategy.confined and w != a.wing:
            a.left_wing += 1
        r = world.room(node)
        if r is not None:
            a.rooms.add(r)
            if a.strategy.keeps_diary and r not in a.walked:
                a.walked.append(r)
        if node in world.row_of:
            a.drawers.add(node)
            if a.strategy.keeps_diary and node not in a.found:
                a.found[node] = world.pragmatic(node)
        if a.strategy.proposes_tunnels and r is not None:
            _propose(palace, world, a, r, config, proposals)

    proposals: list[dict[str, Any]] = []
    notes: list[DiaryNote] = []
    for a in swarm:
        visit(a.position)
        a.seen.add(a.position)
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
            st = a.strategy
            # SENSE
            candidates = world.neighbours(a.position)
            if st.confined and a.wing is not None:
                candidates = [c for c in candidates if world.wing(c[1]) == a.wing]
            if not st.backtrack and len(candidates) > 1:
                ahead = [c for c in candidates if c[1] != a.previous]
                candidates = ahead or candidates
            if not candidates:
                continue
            nodes = [n for _, n in candidates]
            m = len(nodes)
            precision = np.fromiter((a.precision.get(n, PRIOR_PRECISION) for n in nodes),
                                    np.float64, m)
            prag = np.fromiter((world.pragmatic(n) for n in nodes), np.float64, m)
            interest = (st.epistemic * w1) / precision + (st.pragmatic * w2) * prag
            # Node pheromones clamped at 1, as in Φ (see pheromone.social).
            if st.exploit:
                interest += (st.exploit * w3) * np.minimum(
                    pheromone.node_values(palace, "exploitation", nodes), 1.0)
            if st.explore:
                interest -= (st.explore * w3) * np.minimum(
                    pheromone.node_values(palace, "exploration", nodes), 1.0)
            if st.novelty:
                interest += st.novelty * np.fromiter((n not in visited for n in nodes),
                                                     np.float64, m)
            trail = pheromone.phi(palace, [e for e, _ in candidates])
            if st.trail:
                interest += st.trail * trail
            if st.domain:
                interest += st.domain * _domain(world, a, nodes)
            # DECIDE (interest = −EFE for the balanced archetype with the default weights)
            tmin = min(config.min_temperature, a.temperature)
            temperature = anneal(config.schedule, t - 1, a.temperature, tmin, cycles)
            k = choose(softmax_policy(-interest, temperature), rng)
            edge, node = candidates[k]
            # ACT
            a.trail_moves += bool(trail[k] > 0.0)
            a.previous, a.position = a.position, node
            a.moves += 1
            new += visit(node)
            arrive(a, node)
            # UPDATE
            value = float(prag[k])
            pheromone.deposit_path(palace, [edge], min(max(value, 0.0), 1.0), nodes=[node])
            relevant = is_relevant(value, has_goal) or st.learn_every_visit
            a.relevant += is_relevant(value, has_goal)
            a.precision[node] = update_precision(a.precision.get(node, PRIOR_PRECISION),
                                                 relevant)
        decayed = t % config.decay_every == 0
        if decayed:
            pheromone.decay(palace, 1)
        if t % config.diary_every == 0:
            notes += [n for a in swarm if a.strategy.keeps_diary
                      and (n := _note(palace, world, a, t, goal_label)) is not None]
        history.append(len(visited))
        mass, variance = _pheromone_stats(palace, rows, carriers)
        rate = growth_rate(history, config.window)
        flags = convergence_flags(rate, variance, len(frontier), config)
        done = t >= config.window and is_converged(flags)
        if done and converged_at is None:
            converged_at = t
        cm = CycleMetrics(t, len(visited), new, len(frontier), mass, variance, rate, *flags,
                          converged=done, decayed=decayed)
        metrics.append(cm)
        if progress is not None:
            progress(t, cm.to_dict())
        if done and config.stop_on_converge:
            break

    ran = len(metrics)
    notes += [n for a in swarm if a.strategy.keeps_diary
              and (n := _note(palace, world, a, ran, goal_label)) is not None]
    added = 0
    if config.add_tunnels and proposals:
        pending = [p["id"] for p in proposals
                   if palace.tunnel_proposals.items[p["id"]].status == "pending"]
        if pending:
            added = len(tunnels.approve(palace, pending))
            proposals = [palace.tunnel_proposals.items[p["id"]].to_dict() for p in proposals]
    return SwarmResult(seed=seed, cycles_requested=cycles, cycles_run=ran,
                       converged=converged_at is not None, converged_at=converged_at,
                       cancelled=cancelled, has_goal=has_goal,
                       agents=[a.summary() for a in swarm], metrics=metrics,
                       proposals=proposals, tunnels_added=added, notes=notes,
                       places=_places(palace, world))
