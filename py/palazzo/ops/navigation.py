"""Graph navigation operations: Semantic A* paths, tunnels between wings, graph statistics.

The engine work is in :mod:`palazzo.stigmergy.pathfinding`.
"""

from __future__ import annotations

from typing import Any

from palazzo.core.model import PALACE_ID, EdgeKind, closet_id, room_id, wing_id
from palazzo.errors import NotFound
from palazzo.ops.registry import NAME, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.stigmergy.pathfinding import CONTEXTS, known_node, navigate, node_vectors
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
    raise NotFound(f"{text!r} is neither a node id, a 'wing/room' pair nor a wing name")


@operation(
"navigate",
"Cheapest path between two palace nodes by Semantic A* (semantic, pheromone and "
"structural cost). Nodes: ids, 'wing/room' or a wing name. With deposit=true the "
"path's edges are reinforced.",
obj({"start": NODE, "goal": NODE, "context": {"enum": list(CONTEXTS)},
   "admissible": {"type": "boolean"}, "deposit": {"type": "boolean"},
   "reward": {"type": "number", "minimum": 0, "maximum": 1},
   "max_iterations": {"type": "integer", "minimum": 1, "maximum": 10_000_000}},
  ("start", "goal")), mutates=True)
def _navigate(palace: Palace, args: dict[str, Any]) -> Result:
    start = resolve_node(palace, args["start"])
    goal = resolve_node(palace, args["goal"])
    path = navigate(palace, start, goal, context=args.get("context", "default"),
                    admissible=args.get("admissible", False),
                    max_iterations=args.get("max_iterations", 100_000))
    result = path.to_dict()
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


__all__ = ["graph_stats", "node_vectors", "operation", "resolve_node"]
