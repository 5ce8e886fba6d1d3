"""Pheromones as column algebra: decay, deposit and edge-cost recomputation (seed 000 §3.3).

Five pheromones live in NumPy columns: on every node ``exploitation`` ("this location is
valuable") and ``exploration`` ("already searched here") — drawers in the drawer store's
columns, every other node (wing, room, closet, entity, the palace node) in the palace's
:class:`~palazzo.core.columns.NodeTable` (``palace.node_pheromones``); on non-hierarchy edges
``success`` ("this path led to a result"), ``traversal`` ("frequently used path") and
``recency`` ("used recently"), next to ``base_cost`` and ``current_cost``. Every update here
is a whole-column multiply or an unbuffered ``np.add.at`` over index arrays: never a Python
loop over drawers.

Time is counted in explicit *cycles* (``decay(palace, cycles)``, the ``decay_now`` operation,
later the swarm), never read from a wall clock: the same calls on the same palace give the same
numbers, so a journal replays exactly and tests pin values without faking time.

Hierarchy edges (HAS_WING, HAS_ROOM, HAS_CLOSET, HAS_DRAWER) carry no pheromone: deposits
skip them, so their pheromones stay exactly zero, their Φ is zero and their current cost is
their base cost. Decay and recomputation therefore run over every live edge without building a
per-kind mask (a Python pass over the edge kinds would cost more than the multiply itself).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from palazzo.core.model import HIERARCHY, PALACE_ID
from palazzo.errors import NotFound, ValidationError

# Decay rates ρ per cycle (seed 000 §3.3, Table "five GraphPalace pheromone types").
RHO: dict[str, float] = {
    "exploitation": 0.02,
    "exploration": 0.05,
    "success": 0.01,
    "traversal": 0.03,
    "recency": 0.10,
}
NODE_KINDS = ("exploitation", "exploration")
EDGE_KINDS = ("success", "traversal", "recency")

# Values decayed below FLOOR become exactly 0: otherwise an old deposit would shrink through
# the subnormals for thousands of cycles and count as "non-zero" in every status report.
FLOOR = 1e-6

# Deposits the seed leaves open (documented defaults, ours):
# - traversal: +0.1 per use of an edge, so about ten uses saturate its min(·, 1) clamp in Φ;
# - recency: set to 1.0 (fresh) on use, so it reads "cycles since last use" as 0.9^cycles;
# - exploration: +0.1·(1 − reward) per visit of a drawer, i.e. a full mark for a fruitless
#   visit and none for a fully rewarded one ("already searched here, nothing found").
TRAVERSAL_DEPOSIT = 0.1
RECENCY_FRESH = 1.0
EXPLORATION_DEPOSIT = 0.1

# Composite factor weights and the largest cost cut (seed 000 §3.3, Eq. phi and edgecost).
PHI_WEIGHTS = {"success": 0.5, "recency": 0.3, "traversal": 0.2}
MAX_DISCOUNT = 0.5


def half_life(rho: float) -> float:
    """Return the half-life in cycles of decay rate ``rho``: ln(0.5)/ln(1−ρ). O(1).

    The seed quotes ln2/ρ, its small-ρ approximation (34.7 vs 34.3 for ρ = 0.02).
    """
    return math.log(0.5) / math.log(1.0 - rho)


def position_weights(k: int) -> np.ndarray:
    """Return the k position weights 1 − (i−1)/k for i = 1..k (seed 000 Eq. deposit). O(k).

    k = 4 gives 1, .75, .5, .25: early routing decisions are reinforced most.
    """
    return 1.0 - np.arange(k, dtype=np.float64) / max(k, 1)


def _check_reward(reward: float) -> float:
    reward = float(reward)
    if not 0.0 <= reward <= 1.0:
        raise ValidationError(f"reward must be between 0 and 1, got {reward}")
    return reward


def _floor(column: np.ndarray) -> int:
    """Zero the values of ``column`` (a view) in (0, FLOOR); return how many. O(len)."""
    small = (column > 0.0) & (column < FLOOR)
    count = int(np.count_nonzero(small))
    if count:
        column[small] = 0.0
    return count


def live_edges(palace: Any) -> np.ndarray:
    """Return the indices (np.intp) of live edges. O(edges), vectorised."""
    e = palace.edges
    return np.flatnonzero(e.alive[: len(e.kind)]).astype(np.intp, copy=False)


def carrier_edges(palace: Any) -> np.ndarray:
    """Return the indices (np.intp) of live non-hierarchy edges, those that carry pheromones.

    Cost: one Python pass over the edge kinds (for reports, not for the decay loop).
    """
    e = palace.edges
    n = len(e.kind)
    carries = np.fromiter((k not in HIERARCHY for k in e.kind), bool, n)
    return np.flatnonzero(carries & e.alive[:n]).astype(np.intp, copy=False)


def decay(palace: Any, cycles: int = 1) -> dict[str, Any]:
    """Decay every pheromone by ``cycles`` cycles: φ ← φ·(1−ρ)^cycles, then floor to 0.

    Returns {"cycles", "factors": {kind: (1−ρ)^cycles}, "zeroed": {kind: values floored}}.
    Node pheromones of drawers and of every other node decay alike, and the query trails
    (:mod:`palazzo.stigmergy.trails`) as exploitation does. Dead drawer rows are
    already zero; dead edges are left as they were. Edge costs are
    recomputed afterwards (the seed recomputes after every deposit or decay event).
    Cost: one in-place multiply and one compare per pheromone column, O(rows + edges).
    """
    if isinstance(cycles, bool) or not isinstance(cycles, int) or cycles < 0:
        raise ValidationError(f"cycles must be a non-negative integer, got {cycles!r}")
    factors = {kind: (1.0 - rho) ** cycles for kind, rho in RHO.items()}
    zeroed = dict.fromkeys(RHO, 0)
    if cycles == 0:
        return {"cycles": 0, "factors": factors, "zeroed": zeroed}
    s = palace.drawers
    places = palace.node_pheromones
    for kind in NODE_KINDS:
        # Dead rows are zero, so multiplying the whole prefix is exact and avoids a gather.
        column = s.columns[kind][: s.size]
        column *= factors[kind]
        zeroed[kind] = _floor(column)
        column = places.columns[kind][: places.size]
        column *= factors[kind]
        zeroed[kind] += _floor(column)
    palace.trails.decay(factors["exploitation"])  # (rewards kept with their queries)
    edges = palace.edges
    n = len(edges.kind)
    alive = edges.alive[:n]
    for kind in EDGE_KINDS:
        column = edges.columns[kind][:n]
        np.multiply(column, factors[kind], out=column, where=alive)
        zeroed[kind] = _floor(column)
    recompute_costs(palace)
    return {"cycles": cycles, "factors": factors, "zeroed": zeroed}


def phi(palace: Any, edges: np.ndarray | None = None) -> np.ndarray:
    """Return Φ = 0.5·min(success,1) + 0.3·min(recency,1) + 0.2·min(traversal,1) per edge.

    ``edges`` are edge indices (all edges ever added when None). O(len(edges)), vectorised.
    """
    c = palace.edges.columns
    n = len(palace.edges.kind)
    index = slice(0, n) if edges is None else np.asarray(edges, dtype=np.intp)
    total = np.zeros(n if edges is None else len(index), dtype=np.float64)
    for kind, weight in PHI_WEIGHTS.items():
        total += weight * np.minimum(c[kind][index], 1.0)
    return total


def recompute_costs(palace: Any, edges: Sequence[int] | np.ndarray | None = None) -> int:
    """Set current_cost = base_cost·(1 − 0.5·Φ) on ``edges`` (every live edge when None).

    Returns how many edges were recomputed. Cost: O(len(edges)), a few column operations.
    """
    index = live_edges(palace) if edges is None else np.asarray(edges, dtype=np.intp)
    c = palace.edges.columns
    c["current_cost"][index] = c["base_cost"][index] * (1.0 - MAX_DISCOUNT * phi(palace, index))
    return int(len(index))


def _drawer_rows(palace: Any, drawer_ids: Sequence[str]) -> np.ndarray:
    rows = np.empty(len(drawer_ids), dtype=np.intp)
    for i, did in enumerate(drawer_ids):
        rows[i] = palace.row(did)  # NotFound names the first unknown drawer
    return rows


def deposit_path(palace: Any, edge_indices: Sequence[int], reward: float = 1.0,
                 nodes: Sequence[str] | None = None) -> dict[str, Any]:
    """Reinforce a walked path of k edges; return what was deposited.

    Update rules (per use; an edge walked twice gets both deposits):

    - success(e_i) += reward·(1 − (i−1)/k) (seed 000 Eq. deposit, position weighted);
    - traversal(e_i) += TRAVERSAL_DEPOSIT (0.1) whatever the reward (the edge was used);
    - recency(e_i) = RECENCY_FRESH (1.0);
    - for the j-th of the m drawer ids in ``nodes``: exploitation += reward·(1 − (j−1)/m),
      the seed's position weighting applied to nodes (our extension), and exploration +=
      0.1·(1 − reward); the other nodes of ``nodes`` (rooms, wings, closets, entities, the
      palace node; agent nodes are skipped) get the same two deposits, weighted by their own
      positions among themselves (so a drawer's deposit does not depend on how many rooms the
      path crossed before it), in ``palace.node_pheromones``;
    - hierarchy edges of the path (an A* walk may go down wing -> room -> drawer) get no
      deposit, but still count in k and in the positions, as the seed's k is the path length;
    - then current_cost of the path edges is recomputed.

    ``nodes`` defaults to the path's node sequence (src of e_1, then each dst). Everything is
    checked before anything changes: dead or unknown edges raise ValidationError, unknown
    nodes NotFound, a reward outside [0, 1] ValidationError. Cost: O(k + m) vectorised.
    """
    reward = _check_reward(reward)
    e = palace.edges
    index = np.asarray(list(edge_indices), dtype=np.intp)
    if len(index) == 0:
        raise ValidationError("a path needs at least one edge")
    n = len(e.kind)
    for i in index.tolist():
        if not 0 <= i < n or not e.alive[i]:
            raise ValidationError(f"edge {i} does not exist")
    carries = np.fromiter((e.kind[i] not in HIERARCHY for i in index.tolist()), bool, len(index))
    if nodes is None:
        nodes = [e.src[int(index[0])], *(e.dst[i] for i in index.tolist())]
    drawer_ids = [x for x in nodes if x in palace.drawers.row_of]
    places = [x for x in nodes if x not in palace.drawers.row_of and x not in palace.agents]
    for x in nodes:
        if x not in palace.drawers.row_of and x != PALACE_ID and x not in e.out \
                and x not in e.inc:
            raise NotFound(f"no node with id {x!r}")

    k = len(index)
    weights = reward * position_weights(k)
    c = e.columns
    on = index[carries]
    np.add.at(c["success"], on, weights[carries])  # unbuffered: a repeated edge gets both
    np.add.at(c["traversal"], on, TRAVERSAL_DEPOSIT)
    c["recency"][on] = RECENCY_FRESH
    rows = _drawer_rows(palace, drawer_ids)
    if len(rows):
        s = palace.drawers.columns
        np.add.at(s["exploitation"], rows, reward * position_weights(len(rows)))
        np.add.at(s["exploration"], rows, EXPLORATION_DEPOSIT * (1.0 - reward))
    deposit_places(palace, places, reward)
    recompute_costs(palace, np.unique(on))
    return {"edges": k, "skipped_hierarchy": int(k - len(on)),
            "success": [round(float(w), 12) if keep else 0.0
                        for w, keep in zip(weights, carries.tolist(), strict=True)],
            "drawers": [str(d) for d in drawer_ids], "places": [str(x) for x in places],
            "reward": reward}


def deposit_places(palace: Any, nodes: Sequence[str], reward: float) -> None:
    """Give the j-th of the m non-drawer ``nodes`` exploitation += reward·(1 − (j−1)/m) and
    exploration += 0.1·(1 − reward) in ``palace.node_pheromones`` (rows made on first use).

    The caller has checked the nodes and the reward. Cost: O(m) vectorised."""
    if not nodes:
        return
    table = palace.node_pheromones
    rows = table.rows(list(nodes), create=True)
    np.add.at(table.columns["exploitation"], rows, reward * position_weights(len(rows)))
    np.add.at(table.columns["exploration"], rows, EXPLORATION_DEPOSIT * (1.0 - reward))


def node_values(palace: Any, kind: str, nodes: Sequence[str]) -> np.ndarray:
    """Return node pheromone ``kind`` ("exploitation" or "exploration") of each of ``nodes``,
    drawers from their columns and every other node from ``palace.node_pheromones`` (0 for a
    node nothing was deposited on). Cost: O(len(nodes)) dict lookups, one gather each side."""
    nodes = list(nodes)
    row_of = palace.drawers.row_of
    rows = np.fromiter((row_of.get(n, -1) for n in nodes), np.intp, len(nodes))
    out = palace.node_pheromones.values(kind, nodes)
    drawer = rows >= 0
    if drawer.any():
        out[drawer] = palace.drawers.columns[kind][rows[drawer]]
    return out


def social(palace: Any, nodes: Sequence[str]) -> np.ndarray:
    """Return Q_edge = min(exploitation, 1) − min(exploration, 1) of each of ``nodes`` (seed
    Eq. social), for drawers and every other node alike.

    Each pheromone is clamped at 1 as in the edge factor Φ (seed Eq. phi): unclamped, a room
    many agents pass through piles up exploitation without bound and outweighs the epistemic
    and pragmatic terms (each at most 1) until every agent circles it. Cost:
    :func:`node_values` twice."""
    return (np.minimum(node_values(palace, "exploitation", nodes), 1.0)
            - np.minimum(node_values(palace, "exploration", nodes), 1.0))


def deposit_drawers(palace: Any, drawer_ids: Sequence[str], reward: float = 1.0
                    ) -> dict[str, Any]:
    """Retrieval feedback: the i-th of k ranked drawers gets exploitation += reward·(1−(i−1)/k).

    The seed's position weighting (Eq. deposit) applied to ranks: the first result is
    reinforced most. Returns {"drawers", "exploitation": deposits}. Unknown ids raise NotFound
    before anything changes. Cost: O(k) vectorised.
    """
    reward = _check_reward(reward)
    if len(drawer_ids) == 0:
        raise ValidationError("drawer_ids must name at least one drawer")
    rows = _drawer_rows(palace, drawer_ids)
    weights = reward * position_weights(len(rows))
    np.add.at(palace.drawers.columns["exploitation"], rows, weights)
    return {"drawers": list(drawer_ids), "exploitation": [round(float(w), 12) for w in weights]}
