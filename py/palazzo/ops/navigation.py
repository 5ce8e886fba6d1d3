"""Graph navigation operations: Semantic A* paths, tunnels between wings, graph statistics.

The engine work is in :mod:`palazzo.stigmergy.pathfinding`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, EdgeKind, closet_id, room_id, wing_id
from palazzo.core.schema import quote
from palazzo.errors import NotFound, ValidationError, VectorsPending
from palazzo.ops.registry import GOAL, NAME, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.retrieval.search import search
from palazzo.stigmergy.pathfinding import (
    CONTEXTS,
    NodeVectors,
    known_node,
    navigate,
    node_vectors,
)
from palazzo.stigmergy.pheromone import deposit_path

operation = Operations()

NODE = {"type": "string", "minLength": 1, "maxLength": 500}


def resolve_node(palace: Palace, text: str) -> str:
    """Return the node id ``text`` names, or raise NotFound.

    Accepted, in this order: a node id ("palace", "wing:<w>", "room:<w>/<r>",
    "closet:<w>/<r>/<c>", a drawer, entity or agent id); "<wing>/<room>" for a room (every
    "/" is tried as the split, since names may contain "/"); a bare wing name.
    Cost: O(1) for ids with edges, O(len(text)) for shorthands.
    """
    if known_node(palace, text):
        return text
    parts = text.split("/")
    for i in range(1, len(parts)):
        key = ("/".join(parts[:i]), "/".join(parts[i:]))
        if key in palace.rooms:
            return room_id(*key)
    if text in palace.wings:
        return wing_id(text)
    raise NotFound(f"{quote(text)} is neither a node id, a 'wing/room' pair nor a wing name")


@dataclass(slots=True)
class GoalChoice:
    """The node a ``goal_query`` chose: ``by`` says how ("search": the top hybrid search hit,
    a drawer; "centroid": the room or closet whose mean vector is nearest), ``score`` is that
    method's score (RRF score, or cosine)."""

    node: str
    by: str
    score: float

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form of the choice."""
        return {"node": self.node, "by": self.by, "score": self.score}


def goal_by_search(palace: Palace, query: str) -> GoalChoice | None:
    """Return the top hybrid search hit for ``query`` (a drawer), or None when nothing
    matches. Cost: one :func:`~palazzo.retrieval.search.search` with limit 1."""
    hits = search(palace, query, limit=1)
    if not hits:
        return None
    return GoalChoice(node=hits[0].drawer_id, by="search", score=hits[0].score)


def goal_by_centroid(palace: Palace, query: str, vectors: NodeVectors) -> GoalChoice | None:
    """Return the room or closet whose mean drawer vector is nearest ``query`` (cosine), or
    None when the query or the palace has no vector. Cost: one embedding and one matvec over
    the rooms and closets."""
    if palace.embedder is None:
        return None
    try:
        q = np.asarray(palace.embedder.embed([query])[0], dtype=np.float64)
    except VectorsPending:  # the query's vector is still being computed
        return None
    names = [n for n, i in vectors.index.items()
             if vectors.level[n] >= 2 and vectors.present[i]]
    if not names or not q.any():
        return None
    cos = vectors.groups[[vectors.index[n] for n in names]] @ q
    best = int(np.argmax(cos))
    return GoalChoice(node=names[best], by="centroid", score=float(cos[best]))


def goal_for_query(palace: Palace, query: str, vectors: NodeVectors) -> GoalChoice:
    """Return the node ``query`` asks for: the room or closet with the nearest centroid, or,
    when the palace or the query has no vector, the top search hit (BM25 then). Raises
    NotFound when neither finds anything.

    Why the centroid (``palazzo bench pathfinding``, docs/benchmarks.md "Navigate by
    meaning"): it lands in the intended room about as often as the top search hit (100 vs
    99 % on topical rooms; 20 vs 14 % and 87 vs 91 % on a 20k-drawer palace with noisy and
    with distinctive queries) at a hundredth of the cost, and a room is where "toward a
    topic" ends.
    """
    choice = goal_by_centroid(palace, query, vectors) or goal_by_search(palace, query)
    if choice is None:
        raise NotFound(f"nothing in this palace matches the goal query {quote(query)}")
    return choice


@operation(
"navigate",
"Cheapest path between two palace nodes by Semantic A* (semantic, pheromone and "
"structural cost). Nodes: ids, 'wing/room' or a wing name; start defaults to the palace. "
"Give goal, or goal_query (text: the goal becomes the room or closet nearest in meaning, "
"reported as goal_choice). With deposit=true the path's edges are reinforced.",
obj({"start": NODE, "goal": NODE, "goal_query": GOAL, "context": {"enum": list(CONTEXTS)},
   "admissible": {"type": "boolean"}, "deposit": {"type": "boolean"},
   "reward": {"type": "number", "minimum": 0, "maximum": 1},
   "max_iterations": {"type": "integer", "minimum": 1, "maximum": 10_000_000}}),
mutates=True)
def _navigate(palace: Palace, args: dict[str, Any]) -> Result:
    if ("goal" in args) == ("goal_query" in args):
        raise ValidationError("give exactly one of goal (a node) and goal_query (a text)")
    start = resolve_node(palace, args.get("start", PALACE_ID))
    vectors = node_vectors(palace)
    choice = None
    if "goal_query" in args:
        choice = goal_for_query(palace, args["goal_query"], vectors)
        goal = choice.node
    else:
        goal = resolve_node(palace, args["goal"])
    path = navigate(palace, start, goal, context=args.get("context", "default"),
                    admissible=args.get("admissible", False),
                    max_iterations=args.get("max_iterations", 100_000), vectors=vectors)
    result = path.to_dict()
    result["goal_choice"] = None if choice is None else choice.to_dict()
    result["deposited"] = False
    if args.get("deposit", False) and path.found and path.steps:
        # The nodes let stigmergy reinforce the drawers on the path too.
        result["deposit"] = deposit_path(palace, path.edges, args.get("reward", 1.0),
                                         nodes=path.nodes)
        result["deposited"] = True
    return result


def _room_of(palace: Palace) -> dict[str, tuple[str, str]]:
    return {room_id(w, r): (w, r) for (w, r) in palace.rooms}


@operation("find_tunnels", "TUNNEL edges between rooms of different wings "
           "(optionally those touching one wing), with their pheromones.",
           obj({"wing": NAME}))
def _find_tunnels(palace: Palace, args: dict[str, Any]) -> Result:
    wing = args.get("wing")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    rooms = _room_of(palace)
    edges = palace.edges
    cols = edges.columns
    tunnels = []
    for e in edges.live():
        if edges.kind[e] is not EdgeKind.TUNNEL:
            continue
        a, b = rooms.get(edges.src[e]), rooms.get(edges.dst[e])
        if wing is not None and wing not in {a and a[0], b and b[0]}:
            continue
        tunnels.append({
            "edge": e, "src": edges.src[e], "dst": edges.dst[e],
            "src_wing": a and a[0], "src_room": a and a[1],
            "dst_wing": b and b[0], "dst_room": b and b[1],
            "current_cost": float(cols["current_cost"][e]),
            "success": float(cols["success"][e]), "traversal": float(cols["traversal"][e]),
            "recency": float(cols["recency"][e]),
        })
    return {"wing": wing, "count": len(tunnels), "tunnels": tunnels}


def _node_kinds(palace: Palace) -> dict[str, str]:
    kinds = {PALACE_ID: "palace"}
    kinds.update({wing_id(w): "wing" for w in palace.wings})
    kinds.update({room_id(w, r): "room" for (w, r) in palace.rooms})
    kinds.update({closet_id(w, r, c): "closet" for (w, r, c) in palace.closets})
    kinds.update({d: "drawer" for d in palace.drawers.row_of})
    kinds.update({e: "entity" for e in palace.entities})
    kinds.update({a.id: "agent" for a in palace.agents.values()})
    return kinds


def graph_stats(palace: Palace) -> Result:
    """Return node counts per kind, live edge counts per kind, the number of connected
    components (edges taken as undirected, isolated nodes count) and the mean degree.
    Cost: O(V + E) with a union-find."""
    kinds = _node_kinds(palace)
    edges = palace.edges
    live = edges.live()
    for e in live:  # endpoints known only to the edge table still are nodes
        kinds.setdefault(edges.src[e], "other")
        kinds.setdefault(edges.dst[e], "other")
    parent = {n: n for n in kinds}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]  # path halving keeps the trees shallow
            x = parent[x]
        return x

    edge_counts: dict[str, int] = {}
    for e in live:
        edge_counts[edges.kind[e].value] = edge_counts.get(edges.kind[e].value, 0) + 1
        ra, rb = find(edges.src[e]), find(edges.dst[e])
        if ra != rb:
            parent[ra] = rb
    node_counts: dict[str, int] = {}
    for k in kinds.values():
        node_counts[k] = node_counts.get(k, 0) + 1
    n = len(kinds)
    return {
        "nodes": n, "edges": len(live),
        "nodes_by_kind": dict(sorted(node_counts.items())),
        "edges_by_kind": dict(sorted(edge_counts.items())),
        "components": len({find(x) for x in kinds}),
        "mean_degree": 2 * len(live) / n if n else 0.0,
    }


@operation("graph_stats", "Node and edge counts per kind, connected components "
           "and mean degree of the palace graph.", obj({}))
def _graph_stats(palace: Palace, args: dict[str, Any]) -> Result:
    return graph_stats(palace)


__all__ = ["GoalChoice", "goal_by_centroid", "goal_by_search", "goal_for_query", "graph_stats",
           "node_vectors", "operation", "resolve_node"]
