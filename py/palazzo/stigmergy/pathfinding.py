"""Semantic A* over the palace graph (seed 000 §4.2, "Semantic A* Pathfinding").

The graph is the palace's live edges, walked in both directions. Traversing edge ``e`` into
node ``v`` costs ``α·C_semantic(v) + β·C_pheromone(e) + γ·C_structural(e)``, the seed's three
terms on the seed's scales:

- ``C_semantic(v) = 1 − cos(vec(v), vec(goal))``, the cosine distance, in [0, 2]; 1 (cosine
  0) when either has no vector. Drawers use their stored vector; wings, rooms and closets the
  normalised mean of their drawers' vectors (:func:`node_vectors`).
- ``C_pheromone(e) = 1 − Φ(e)`` with ``Φ = 0.5·min(success,1) + 0.3·min(recency,1)
  + 0.2·min(traversal,1)``: the one place pheromone lowers the cost.
- ``C_structural(e)`` = the edge's ``base_cost``, fixed per edge kind (HALL 0.5, TUNNEL 0.7,
  ...). Not ``current_cost``: that is ``base_cost·(1 − 0.5·Φ)``, and charging it here would
  count the pheromone discount a second time (issue 18).

The weights ``(α, β, γ)`` come from the query context (:data:`WEIGHTS`, the seed's table).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, closet_id, room_id, wing_id
from palazzo.errors import NotFound, ValidationError
from palazzo.stigmergy import pheromone

# (α semantic, β pheromone, γ structural) per query context: seed 000 Table "Context-adaptive
# A* cost weights", verbatim.
WEIGHTS: dict[str, tuple[float, float, float]] = {
    "default": (0.40, 0.30, 0.30),
    "hypothesis_testing": (0.30, 0.40, 0.30),
    "exploratory_research": (0.50, 0.20, 0.30),
    "evidence_gathering": (0.35, 0.35, 0.30),
    "memory_recall": (0.50, 0.30, 0.20),
}
CONTEXTS = tuple(WEIGHTS)
NO_VECTOR_SEMANTIC = 1.0  # cosine 0: neither near nor far


@dataclass(slots=True)
class Step:
    """One traversed edge: the node it reaches, the edge, and its unweighted cost parts."""

    node: str
    edge: int
    kind: str
    semantic: float
    pheromone: float
    structural: float
    cost: float

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form of the step."""
        return {"node": self.node, "edge": self.edge, "kind": self.kind,
                "semantic": self.semantic, "pheromone": self.pheromone,
                "structural": self.structural, "cost": self.cost}


@dataclass(slots=True)
class Path:
    """The result of :func:`navigate`. ``steps`` is empty when nothing was found (or when
    start is the goal); ``total_cost`` is None when ``found`` is False; ``reason`` says why."""

    start: str
    goal: str
    context: str
    admissible: bool
    found: bool
    steps: list[Step] = field(default_factory=list)
    total_cost: float | None = None
    iterations: int = 0
    reason: str = ""

    @property
    def nodes(self) -> list[str]:
        """Return the visited nodes, start first (empty when not found)."""
        return [self.start, *(s.node for s in self.steps)] if self.found else []

    @property
    def edges(self) -> list[int]:
        """Return the traversed edge indices in order."""
        return [s.edge for s in self.steps]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form of the path."""
        return {"start": self.start, "goal": self.goal, "context": self.context,
                "admissible": self.admissible, "found": self.found, "nodes": self.nodes,
                "steps": [s.to_dict() for s in self.steps], "total_cost": self.total_cost,
                "length": len(self.steps), "iterations": self.iterations,
                "reason": self.reason}


@dataclass(slots=True)
class NodeVectors:
    """Unit vectors of wings, rooms and closets (the mean of their drawers) plus, for every
    hierarchy node, its wing and depth. Valid until the palace changes."""

    index: dict[str, int]  # wing/room/closet id -> row of ``groups``
    groups: np.ndarray  # (k, dim) float64, unit rows; a zero row means "no vector"
    present: list[bool]  # per row of ``groups``: has a vector (a list: O(1) without NumPy)
    wing_of: dict[str, str]  # wing/room/closet id -> wing name
    level: dict[str, int]  # palace 0, wing 1, room 2, closet 3


def _group_sums(values: np.ndarray, labels: np.ndarray, k: int) -> np.ndarray:
    """Return the (k, dim) sums of ``values`` rows per label. Cost: one sort and one
    ``np.add.reduceat`` (faster than a 2-D ``np.add.at``)."""
    out = np.zeros((k, values.shape[1]), dtype=np.float64)
    if len(labels) == 0:
        return out
    order = np.argsort(labels, kind="stable")
    ordered = labels[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]).astype(np.intp)
    out[ordered[starts]] = np.add.reduceat(values[order], starts, axis=0)
    return out


def node_vectors(palace) -> NodeVectors:
    """Return the vectors and positions of the palace's wings, rooms and closets.

    Cost: O(drawers · dim) — three grouped sums over the embedded drawers' matrix.
    """
    names: list[str] = []
    wing_of: dict[str, str] = {}
    level: dict[str, int] = {PALACE_ID: 0}
    for w in palace.wings:
        names.append(wing_id(w))
        wing_of[names[-1]] = w
        level[names[-1]] = 1
    for w, r in palace.rooms:
        names.append(room_id(w, r))
        wing_of[names[-1]] = w
        level[names[-1]] = 2
    for w, r, c in palace.closets:
        names.append(closet_id(w, r, c))
        wing_of[names[-1]] = w
        level[names[-1]] = 3
    index = {n: i for i, n in enumerate(names)}
    s = palace.drawers
    rows = np.flatnonzero(s.alive[: s.size] & s.has_vector[: s.size]).astype(np.intp)
    values = s.vectors[rows].astype(np.float64)
    # Each embedded drawer counts towards its wing, its room and (if it has one) its closet.
    labels = [index.get(wing_id(s.wing[r]), -1) for r in rows]
    labels += [index.get(room_id(s.wing[r], s.room[r]), -1) for r in rows]
    labels += [-1 if s.closet[r] is None else index.get(closet_id(s.wing[r], s.room[r],
                                                                  s.closet[r]), -1)
               for r in rows]
    lab = np.asarray(labels, dtype=np.intp)
    stacked = np.concatenate([values, values, values]) if len(rows) else values
    keep = lab >= 0
    sums = _group_sums(stacked[keep], lab[keep], len(names))
    norms = np.linalg.norm(sums, axis=1)
    groups = sums / np.where(norms > 0, norms, 1.0)[:, None]
    return NodeVectors(index=index, groups=groups, present=(norms > 0).tolist(),
                       wing_of=wing_of, level=level)


def known_node(palace, node: str, vectors: NodeVectors | None = None) -> bool:
    """Return whether ``node`` is a node of the palace graph.

    Cost: O(1) for nodes with edges, drawers and entities (nearly all); otherwise a scan of
    the agents and, without ``vectors``, of the rooms and closets.
    """
    edges = palace.edges
    if node in edges.out or node in edges.inc or node == PALACE_ID:
        return True
    if node in palace.drawers.row_of or node in palace.entities:
        return True
    if any(a.id == node for a in palace.agents.values()):
        return True
    if vectors is not None:
        return node in vectors.index
    if node.startswith("wing:") and node[5:] in palace.wings:
        return True
    return (any(room_id(*k) == node for k in palace.rooms)
            or any(closet_id(*k) == node for k in palace.closets))


class _Costs:
    """Edge and node costs for one search; every value is computed lazily and cached."""

    def __init__(self, palace, goal: str, weights: tuple[float, float, float],
                 nv: NodeVectors) -> None:
        self.alpha, self.beta, self.gamma = weights
        self.palace = palace
        self.goal = goal
        self.nv = nv
        self.store = palace.drawers
        cols = palace.edges.columns
        self.success, self.recency = cols["success"], cols["recency"]
        self.traversal, self.base = cols["traversal"], cols["base_cost"]
        self.goal_vec = self.vector(goal)
        self._sem: dict[str, float] = {goal: 0.0}
        self._static: dict[int, float] = {}
        self._min_static: float | None = None

    def vector(self, node: str) -> np.ndarray | None:
        """Return the unit vector of ``node`` or None when it has none."""
        row = self.store.row_of.get(node)
        if row is not None:
            return self.store.vectors[row] if self.store.has_vector[row] else None
        i = self.nv.index.get(node)
        if i is not None and self.nv.present[i]:
            return self.nv.groups[i]
        return None

    def semantic(self, node: str) -> float:
        """Return C_semantic(node) = 1 − cos in [0, 2]. O(dim) the first time, O(1) after."""
        c = self._sem.get(node)
        if c is None:
            v = self.vector(node)
            if v is None or self.goal_vec is None:
                c = NO_VECTOR_SEMANTIC
            else:
                # Clipped: float rounding can push the cosine of near-equal vectors past 1.
                c = min(2.0, max(0.0, 1.0 - float(v @ self.goal_vec)))
            self._sem[node] = c
        return c

    def pheromone(self, e: int) -> float:
        """Return C_pheromone(e) = 1 − Φ(e) in [0, 1]."""
        phi = (0.5 * min(float(self.success[e]), 1.0) + 0.3 * min(float(self.recency[e]), 1.0)
               + 0.2 * min(float(self.traversal[e]), 1.0))
        return 1.0 - min(1.0, max(0.0, phi))

    def structural(self, e: int) -> float:
        """Return C_structural(e), the edge's base cost (no pheromone discount)."""
        return float(self.base[e])

    def static(self, e: int) -> float:
        """Return β·C_pheromone(e) + γ·C_structural(e) (the part not depending on nodes)."""
        c = self._static.get(e)
        if c is None:
            c = self.beta * self.pheromone(e) + self.gamma * self.structural(e)
            self._static[e] = c
        return c

    def min_static(self) -> float:
        """Return the smallest static cost over live edges (a lower bound on any edge's
        cost, since C_semantic ≥ 0). Cost: O(edges) vectorised, once per search."""
        if self._min_static is None:
            edges = self.palace.edges
            n = len(edges.kind)
            live = edges.alive[:n]
            if not live.any():
                self._min_static = 0.0
            else:
                cols = edges.columns
                phi = pheromone.phi(self.palace)
                cost = (self.beta * (1.0 - np.clip(phi, 0.0, 1.0))
                        + self.gamma * cols["base_cost"][:n])
                self._min_static = max(0.0, float(cost[live].min()))
        return self._min_static


def _wing_and_level(node: str, costs: _Costs) -> tuple[str | None, int | None]:
    row = costs.store.row_of.get(node)
    if row is not None:
        return costs.store.wing[row], 3 if costs.store.closet[row] is None else 4
    return costs.nv.wing_of.get(node), costs.nv.level.get(node)


def _adaptive_heuristic(goal: str, costs: _Costs, admissible: bool):
    """Return h(node) -> float.

    Adaptive (seed): inside the goal's wing trust semantics, h = α·C_semantic(v), up to 2α;
    elsewhere estimate the hops (down to the room level, across, down to the goal) times the
    cheapest edge. Neither part is a lower bound: α·C_semantic(v) can exceed the cost of the
    one cheap edge that joins v to the goal, and SIMILAR_TO and RELATES_TO edges skip levels.
    So adaptive paths may cost more than the optimum, and with a closed set (no reopening)
    no bound on how much is proven here; ``palazzo bench pathfinding`` measures the excess
    against admissible mode on every pair.

    Admissible: every path from v ≠ goal ends with an edge into the goal, costing at least
    ``k`` = the cheapest static cost of the goal's own edges (C_semantic(goal) = 0); a v not
    adjacent to the goal needs one more edge costing at least the global minimum ``m``
    (C_semantic ≥ 0 whatever its scale). So h = 0 / k / k + m is admissible and consistent
    (h(u) ≤ c(u, v) + h(v) by case analysis), and A* with a closed set returns an optimal
    path.
    """
    edges = costs.palace.edges
    if admissible:
        incident = [*edges.out.get(goal, ()), *edges.inc.get(goal, ())]
        k = min((costs.static(e) for e in incident), default=0.0)
        near = {edges.dst[e] if edges.src[e] == goal else edges.src[e] for e in incident}
        far = k + costs.min_static()

        def h_admissible(node: str) -> float:
            if node == goal:
                return 0.0
            return k if node in near else far

        return h_admissible

    goal_wing, goal_level = _wing_and_level(goal, costs)

    def h_adaptive(node: str) -> float:
        if node == goal:
            return 0.0
        wing, lvl = _wing_and_level(node, costs)
        if goal_wing is not None and wing == goal_wing:
            return costs.alpha * costs.semantic(node)
        if lvl is None or goal_level is None:
            return costs.min_static()
        hops = abs(lvl - 2) + abs(goal_level - 2) + 1
        return hops * costs.min_static()

    return h_adaptive


def navigate(palace, start: str, goal: str, context: str = "default",
             admissible: bool = False, max_iterations: int = 100_000,
             vectors: NodeVectors | None = None) -> Path:
    """Return the cheapest path found from ``start`` to ``goal`` (node ids) by Semantic A*.

    ``context`` picks the cost weights (:data:`WEIGHTS`). ``admissible`` uses a lower-bound
    heuristic so the path is provably optimal; otherwise the seed's adaptive heuristic,
    which expands fewer nodes but may miss the optimum. ``vectors`` lets a caller running
    many searches on an unchanged palace build :func:`node_vectors` once.

    Raises NotFound for an unknown node and ValidationError for an unknown context.
    Cost: O(drawers · dim) for the node vectors (unless given), then O((V + E) log V) for
    the search in the worst case, O(dim) per newly reached node for its semantic cost.
    """
    if context not in WEIGHTS:
        raise ValidationError(f"unknown context {context!r}; use one of {', '.join(CONTEXTS)}")
    if max_iterations < 1:
        raise ValidationError("max_iterations must be at least 1")
    nv = vectors if vectors is not None else node_vectors(palace)
    for what, node in (("start", start), ("goal", goal)):
        if not known_node(palace, node, nv):
            raise NotFound(f"{what} {node!r} is not a node of this palace")
    path = Path(start=start, goal=goal, context=context, admissible=admissible, found=False)
    costs = _Costs(palace, goal, WEIGHTS[context], nv)
    h = _adaptive_heuristic(goal, costs, admissible)
    edges = palace.edges
    out, inc, src, dst = edges.out, edges.inc, edges.src, edges.dst
    alpha = costs.alpha
    tie = itertools.count()  # FIFO among equal f, so results do not depend on node names
    heap: list[tuple[float, float, int, str]] = [(h(start), 0.0, next(tie), start)]
    g_score: dict[str, float] = {start: 0.0}
    came: dict[str, tuple[str, int]] = {}
    closed: set[str] = set()
    while heap:
        _, g_u, _, u = heapq.heappop(heap)
        if u in closed:
            continue  # a stale entry: u was reached more cheaply before
        path.iterations += 1
        if u == goal:
            path.found = True
            path.total_cost = g_u
            path.steps = _steps(came, start, goal, costs)
            path.reason = "found"
            return path
        if path.iterations >= max_iterations:
            path.reason = f"stopped after {max_iterations} iterations without reaching the goal"
            return path
        closed.add(u)
        for e in itertools.chain(out.get(u, ()), inc.get(u, ())):
            v = dst[e] if src[e] == u else src[e]
            if v in closed:
                continue
            g_v = g_u + alpha * costs.semantic(v) + costs.static(e)
            if g_v < g_score.get(v, math.inf):
                g_score[v] = g_v
                came[v] = (u, e)
                heapq.heappush(heap, (g_v + h(v), g_v, next(tie), v))
    path.reason = "goal is not reachable from start"
    return path


def _steps(came: dict[str, tuple[str, int]], start: str, goal: str, costs: _Costs) -> list[Step]:
    """Return the steps from ``start`` to ``goal`` following ``came``. O(path length)."""
    steps: list[Step] = []
    node = goal
    while node != start:
        prev, e = came[node]
        sem, ph, st = costs.semantic(node), costs.pheromone(e), costs.structural(e)
        cost = costs.alpha * sem + costs.beta * ph + costs.gamma * st
        steps.append(Step(node=node, edge=e, kind=costs.palace.edges.kind[e].value,
                          semantic=sem, pheromone=ph, structural=st, cost=cost))
        node = prev
    steps.reverse()
    return steps
