"""Pheromone operations: status, deposit, heat from use, decay, hot paths, cold spots, the node
pheromones of wings, rooms, closets and entities, and heat per room.

Heat from use (``pheromone_use``, issue 31): a person's actions on retrieval results deposit
on the path to the drawer, the self-optimising retrieval of seed 000 (§3.3, §6 "Frequently
accessed paths become progressively cheaper"). The rule, one journal record an action:

- search: exploration +0.1 on each hit shown and once on each of their rooms ("already
  searched here"), nothing else: seeing a result is not using it;
- open, copy, helpful (rewards 0.3, 0.6, 1): the drawer gets exploitation +reward and
  exploration +0.1·(1−reward) (the seed's exploration for a partly fruitless visit); the
  places above it (palace, wing, room, closet) get the same, position weighted down the path
  as :func:`palazzo.stigmergy.pheromone.deposit_places` does;
- with ``from`` (the drawer it was reached from, e.g. a nearby drawer opened from another): a
  link joining the two drawers (SIMILAR_TO...) or their rooms (HALL, TUNNEL) gets success
  +reward, and on open also traversal +0.1 and recency 1. Hierarchy edges carry no pheromone,
  so traversal, recency and success heat come only from such walks (and from navigation with
  deposit, and the agents).

``search`` itself stays read-only (a read-only palace, the MCP server and the CLI search as
before, and a search's ranking never changes unless it asks for ``pheromone`` > 0): hosts that
want heat from use (the browser's Search tab) call ``pheromone_use`` after the action.

The engine work is in :mod:`palazzo.stigmergy.pheromone`. Reports group drawers and edges with
``np.bincount`` over room codes, so their NumPy part is vectorised; only turning string ids
into codes is a Python pass.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from palazzo.core.model import HIERARCHY, PALACE_ID, EdgeKind, closet_id, room_id, wing_id
from palazzo.core.schema import quote
from palazzo.errors import NotFound, ValidationError
from palazzo.ops.registry import LIMIT, NAME, Operations, obj
from palazzo.palace import Palace
from palazzo.stigmergy import pheromone

operation = Operations()

Result = dict[str, Any]

REWARD = {"type": "number", "minimum": 0, "maximum": 1}
CYCLES = {"type": "integer", "minimum": 1, "maximum": 100_000}
# A path step is [src, dst, kind]; the schema checker has no tuple form, so the kind is
# checked in _path_edges (with messages naming the step); the length, by minItems/maxItems.
STEP = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 3,
        "maxItems": 3}
MAX_PATH = 1000


def _stats(values: np.ndarray) -> dict[str, float | int]:
    n = len(values)
    return {"total": float(values.sum()), "mean": float(values.mean()) if n else 0.0,
            "max": float(values.max()) if n else 0.0, "nonzero": int(np.count_nonzero(values))}


@operation("pheromone_status",
           "Totals, means, maxima and non-zero counts of the five pheromones (node "
           "pheromones of drawers, and of wings, rooms, closets and entities).",
           obj({}))
def _pheromone_status(palace: Palace, args: dict[str, Any]) -> Result:
    rows = palace.drawers.live_rows()
    edges = pheromone.carrier_edges(palace)
    s, c = palace.drawers.columns, palace.edges.columns
    table = palace.node_pheromones
    places = {}
    for kind, ids in _places(palace).items():
        places[kind] = {k: _stats(table.values(k, ids)) for k in pheromone.NODE_KINDS}
    return {
        "drawers": len(rows),
        "edges": len(edges),
        "nodes": {k: _stats(s[k][rows]) for k in pheromone.NODE_KINDS},
        "places": places,
        "edge_pheromones": {k: _stats(c[k][edges]) for k in pheromone.EDGE_KINDS},
        "rho": dict(pheromone.RHO),
    }


def _places(palace: Palace) -> dict[str, list[str]]:
    """Return the node ids of the wings, rooms, closets and entities, by kind. O(nodes)."""
    return {"wings": [wing_id(w) for w in palace.wings],
            "rooms": [room_id(*k) for k in palace.rooms],
            "closets": [closet_id(*k) for k in palace.closets],
            "entities": list(palace.entities)}


PLACE_KINDS = ("wing", "room", "closet", "entity")


@operation("node_pheromones", "Wings, rooms, closets and entities with their node "
           "pheromones (exploitation, exploration, Q_edge = their difference), strongest "
           "first; drawers are in cold_spots and get_drawer.",
           obj({"kind": {"enum": [*PLACE_KINDS, "all"]}, "wing": NAME, "limit": LIMIT,
                "order": {"enum": ["exploitation", "exploration"]}}))
def _node_pheromones(palace: Palace, args: dict[str, Any]) -> Result:
    """Only nodes that carry some pheromone are listed; ``wing`` keeps that wing and its
    rooms and closets (entities lie in no wing)."""
    wing = args.get("wing")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    what = args.get("kind", "all")
    order = args.get("order", "exploitation")
    kind_of: dict[str, tuple[str, str | None]] = {wing_id(w): ("wing", w) for w in palace.wings}
    kind_of.update((room_id(*k), ("room", k[0])) for k in palace.rooms)
    kind_of.update((closet_id(*k), ("closet", k[0])) for k in palace.closets)
    kind_of[PALACE_ID] = ("palace", None)
    ids, columns = palace.node_pheromones.live()
    rows = []
    for i, node in enumerate(ids):
        kind, in_wing = kind_of.get(node) or (("entity", None) if node in palace.entities
                                               else ("other", None))
        if (what != "all" and kind != what) or (wing is not None and in_wing != wing):
            continue
        x, r = float(columns["exploitation"][i]), float(columns["exploration"][i])
        rows.append({"node": node, "kind": kind, "wing": in_wing, "exploitation": x,
                     "exploration": r, "q_edge": x - r})
    rows.sort(key=lambda d: (-d[order], d["node"]))
    return {"nodes": rows[: args.get("limit", 10)], "matched": len(rows)}


def _path_edges(palace: Palace, path: list[list[str]]) -> list[int]:
    """Return the edge indices of ``path`` steps [src, dst, kind]; an undirected link (HALL,
    TUNNEL, SIMILAR_TO...) is found in either direction, as it is stored once."""
    kinds = {k.value: k for k in EdgeKind}
    out = []
    for i, step in enumerate(path):
        if len(step) != 3:
            raise ValidationError(f"path[{i}] must be [src, dst, kind], got {len(step)} items")
        src, dst, name = step
        if name not in kinds:
            raise ValidationError(f"path[{i}] kind {quote(name)} is not an edge kind; known: "
                                  + ", ".join(sorted(kinds)))
        kind = kinds[name]
        if kind in HIERARCHY:
            raise ValidationError(f"path[{i}] is a {name} edge: hierarchy edges carry no "
                                  "pheromone")
        edge = palace.edges.find(kind, src, dst)
        if edge is None:
            edge = palace.edges.find(kind, dst, src)
        if edge is None:
            raise NotFound(f"path[{i}]: no {name} edge between {quote(src)} and "
                           f"{quote(dst)}")
        out.append(edge)
    return out


QUERY = {"type": "string", "minLength": 1, "maxLength": 10_000}


def _trail(palace: Palace, query: str | None, ids: list[str], rewards: Any) -> int | None:
    """Remember ``rewards`` on ``ids`` with ``query``'s region (:mod:`palazzo.stigmergy.
    trails`); return how many trails the palace holds, or None without a query. The ids are
    checked by the caller first. Cost: tokenising the query, O(ids)."""
    if query is None:
        return None
    terms = palace.trails.region(palace.text_index.tokenizer, query)
    return palace.trails.deposit(terms, ids, [float(r) for r in rewards])


@operation("pheromone_deposit",
           "Reinforce ranked retrieval results (drawer_ids) or a walked path of "
           "[src, dst, kind] edges, position weighted r·(1−(i−1)/k). With 'query' (the "
           "search the drawers answered), the reward is also remembered with that query: "
           "a later search with pheromone > 0 reads it when its words are near.",
           obj({"drawer_ids": {"type": "array", "items": NAME, "minItems": 1},
                 "path": {"type": "array", "items": STEP, "minItems": 1},
                 "reward": REWARD, "query": QUERY}), mutates=True)
def _pheromone_deposit(palace: Palace, args: dict[str, Any]) -> Result:
    reward = args.get("reward", 1.0)
    has_path, has_drawers = "path" in args, "drawer_ids" in args
    if has_path == has_drawers:
        raise ValidationError("pheromone_deposit needs exactly one of 'drawer_ids' (ranked "
                              "retrieval feedback) or 'path' (walked edges)")
    if has_drawers:
        ids = args["drawer_ids"]
        if not 1 <= len(ids) <= MAX_PATH:
            raise ValidationError(f"drawer_ids must hold 1 to {MAX_PATH} ids")
        out = pheromone.deposit_drawers(palace, ids, reward)
        trails = _trail(palace, args.get("query"), list(ids), out["exploitation"])
        return {"kind": "drawers", **out, **({} if trails is None else {"trails": trails})}
    if "query" in args:
        raise ValidationError("'query' goes with 'drawer_ids' (the results it found), "
                              "not with a path")
    path = args["path"]
    if not 1 <= len(path) <= MAX_PATH:
        raise ValidationError(f"path must hold 1 to {MAX_PATH} steps")
    edges = _path_edges(palace, path)
    return {"kind": "path", **pheromone.deposit_path(palace, edges, reward)}


# Heat from use (issue 31): what a person's action deposits. ``reward`` is the seed's r_base
# (Eq. deposit) for the drawer and the places above it; opening is a weak sign of value, a copy
# a stronger one, "Helpful" the strongest.
USE_REWARD = {"open": 0.3, "copy": 0.6, "helpful": 1.0}
USES = ("search", *USE_REWARD)
MAX_HITS = 50  # hits one search deposits on (the interface shows 10)


def _place_path(palace: Palace, row: int) -> list[str]:
    """Return the place nodes above drawer ``row``: palace, wing, room and its closet if any."""
    s = palace.drawers
    wing, room, closet = s.wing[row], s.room[row], s.closet[row]
    return [PALACE_ID, wing_id(wing), room_id(wing, room),
            *([closet_id(wing, room, closet)] if closet else [])]


def _link(palace: Palace, a: str, b: str) -> int | None:
    """Return a live pheromone-carrying edge joining drawers ``a`` and ``b`` (either way; a
    SIMILAR_TO link, say), else one joining their rooms (a HALL or TUNNEL), else None.
    Cost: O(edges touching a and its room)."""
    s, e = palace.drawers, palace.edges
    ra, rb = palace.row(a), palace.row(b)
    pairs = [(s.ids[ra], s.ids[rb]),
             (room_id(s.wing[ra], s.room[ra]), room_id(s.wing[rb], s.room[rb]))]
    for x, y in pairs:
        if x == y:
            continue
        for i in e.touching(x):
            if e.kind[i] not in HIERARCHY and {e.src[i], e.dst[i]} == {x, y}:
                return i
    return None


@operation("pheromone_use",
           "Heat from use: deposit what one action on retrieval results says. search "
           "(drawer_ids = the hits shown, best first): exploration +0.1 on each hit and "
           "once on each of their rooms, nothing else (a search only explores). open / copy "
           "/ helpful (one drawer id): the drawer and the places above it (palace, wing, "
           "room, closet) get exploitation with reward 0.3 / 0.6 / 1 (position weighted "
           "down the places) and exploration +0.1·(1−reward); with 'from' (the drawer it "
           "was reached from), a link joining the two drawers or their rooms gets success "
           "+reward, and on open traversal +0.1 and recency 1. With 'query' (the search "
           "the drawer was found by; open / copy / helpful), the reward is also remembered "
           "with that query, for later searches near it with pheromone > 0. One journal "
           "record an action.",
           obj({"action": {"enum": list(USES)},
                "drawer_ids": {"type": "array", "items": NAME, "minItems": 1,
                               "maxItems": MAX_HITS},
                "from": NAME, "query": QUERY}, required=("action", "drawer_ids")),
           mutates=True)
def _pheromone_use(palace: Palace, args: dict[str, Any]) -> Result:
    """Search ranking is untouched by default: only a search with ``pheromone`` > 0 reads
    exploitation. Unknown drawers raise NotFound before anything changes. Cost: O(hits) for
    a search; O(edges touching the drawer 'from' and its room) with 'from'; else O(1)."""
    action, ids = args["action"], args["drawer_ids"]
    rows = [palace.row(d) for d in ids]  # NotFound before any change
    s = palace.drawers
    if action == "search":
        rooms = list(dict.fromkeys(room_id(s.wing[r], s.room[r]) for r in rows))
        np.add.at(s.columns["exploration"], np.asarray(rows, dtype=np.intp),
                  pheromone.EXPLORATION_DEPOSIT)
        table = palace.node_pheromones
        room_rows = table.rows(rooms, create=True)  # distinct rooms: a plain += is exact
        table.columns["exploration"][room_rows] += pheromone.EXPLORATION_DEPOSIT
        return {"action": action, "drawers": [s.ids[r] for r in rows], "places": rooms,
                "edge": None}
    if len(rows) != 1:
        raise ValidationError(f"{action} takes one drawer id, got {len(rows)}")
    row, reward = rows[0], USE_REWARD[action]
    link = None if args.get("from") is None else _link(palace, args["from"], s.ids[row])
    places = _place_path(palace, row)
    trails = _trail(palace, args.get("query"), [s.ids[row]], [reward])
    s.columns["exploitation"][row] += reward
    s.columns["exploration"][row] += pheromone.EXPLORATION_DEPOSIT * (1.0 - reward)
    pheromone.deposit_places(palace, places, reward)
    edge = None
    if link is not None:
        c = palace.edges.columns
        c["success"][link] += reward
        if action == "open":
            c["traversal"][link] += pheromone.TRAVERSAL_DEPOSIT
            c["recency"][link] = pheromone.RECENCY_FRESH
        pheromone.recompute_costs(palace, [link])
        edge = _edge_dict(palace, link, float(pheromone.phi(palace, [link])[0]))
    return {"action": action, "drawers": [s.ids[row]], "places": places, "edge": edge,
            "reward": reward, **({} if trails is None else {"trails": trails})}


@operation("decay_now", "Decay every pheromone by a number of cycles "
           "(φ ← φ·(1−ρ)^cycles) and recompute edge costs.",
           obj({"cycles": CYCLES}), mutates=True)
def _decay_now(palace: Palace, args: dict[str, Any]) -> Result:
    return pheromone.decay(palace, args.get("cycles", 1))


def _edge_dict(palace: Palace, i: int, phi: float) -> Result:
    e = palace.edges
    c = e.columns
    return {"src": e.src[i], "dst": e.dst[i], "kind": e.kind[i].value, "phi": round(phi, 12),
            **{k: float(c[k][i]) for k in (*pheromone.EDGE_KINDS, "base_cost",
                                           "current_cost")}}


@operation("hot_paths", "Edges with the strongest pheromone factor Φ (then success).",
           obj({"limit": LIMIT}))
def _hot_paths(palace: Palace, args: dict[str, Any]) -> Result:
    edges = pheromone.carrier_edges(palace)
    phi = pheromone.phi(palace, edges)
    success = palace.edges.columns["success"][edges]
    keep = phi > 0
    edges, phi, success = edges[keep], phi[keep], success[keep]
    # Highest Φ first, success breaks ties, then insertion order (lexsort: last key is primary).
    order = np.lexsort((edges, -success, -phi))[: args.get("limit", 10)]
    return {"edges": [_edge_dict(palace, int(edges[j]), float(phi[j])) for j in order]}


@operation("cold_spots", "Live drawers with the least exploitation + exploration "
           "(optionally of one wing): what nobody has visited.",
           obj({"wing": NAME, "limit": LIMIT}))
def _cold_spots(palace: Palace, args: dict[str, Any]) -> Result:
    wing = args.get("wing")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    s = palace.drawers
    rows = np.flatnonzero(s.mask(wing))
    c = s.columns
    heat = c["exploitation"][rows] + c["exploration"][rows]
    order = np.argsort(heat, kind="stable")[: args.get("limit", 10)]
    return {"drawers": [{"drawer_id": s.ids[r], "wing": s.wing[r], "room": s.room[r],
                         "exploitation": float(c["exploitation"][r]),
                         "exploration": float(c["exploration"][r])}
                        for r in (int(rows[j]) for j in order)]}


def _sum_mean(total: np.ndarray, count: np.ndarray, j: int) -> dict[str, float]:
    return {"sum": float(total[j]), "mean": float(total[j] / count[j]) if count[j] else 0.0}


@operation("pheromone_heat", "Per wing and room: its own node pheromones, drawer "
           "pheromone sums and means, and edge pheromone sums touching it (for colouring a "
           "map).",
           obj({"wing": NAME}))
def _pheromone_heat(palace: Palace, args: dict[str, Any]) -> Result:
    """Per wing and per room: drawer pheromone sums and means, and edge pheromone sums over
    the live pheromone edges touching the room (an end is the room, a closet or a drawer of
    it). An edge is counted once per room and once per wing even when both ends are inside."""
    rooms = sorted(palace.rooms)
    if args.get("wing") is not None:
        if args["wing"] not in palace.wings:
            raise NotFound(f"no wing named {args['wing']!r}")
        rooms = [k for k in rooms if k[0] == args["wing"]]
    wings = sorted({w for w, _ in rooms})
    room_code = {k: j for j, k in enumerate(rooms)}
    wing_of_room = np.array([wings.index(w) for w, _ in rooms], dtype=np.intp)
    nr, nw = len(rooms), len(wings)

    s = palace.drawers
    live = s.live_rows()
    codes = np.fromiter((room_code.get((s.wing[r], s.room[r]), -1) for r in live),
                        np.intp, len(live))
    rows, codes = live[codes >= 0], codes[codes >= 0]
    node_of = {room_id(*k): j for k, j in room_code.items()}
    node_of.update((x.id, room_code[(x.wing, x.room)]) for x in palace.closets.values()
                   if (x.wing, x.room) in room_code)
    node_of.update((s.ids[r], int(j)) for r, j in zip(rows.tolist(), codes.tolist(),
                                                      strict=True))

    def per(groups: np.ndarray, weights: np.ndarray | None, size: int) -> np.ndarray:
        return np.bincount(groups, weights, minlength=size).astype(np.float64)

    room_drawers = per(codes, None, nr)
    wing_drawers = per(wing_of_room[codes], None, nw)
    node_sums = {}
    for kind in pheromone.NODE_KINDS:
        values = s.columns[kind][rows]
        node_sums[kind] = (per(codes, values, nr), per(wing_of_room[codes], values, nw))

    e = palace.edges
    edges = pheromone.carrier_edges(palace)
    src = np.fromiter((node_of.get(e.src[i], -1) for i in edges), np.intp, len(edges))
    dst = np.fromiter((node_of.get(e.dst[i], -1) for i in edges), np.intp, len(edges))
    # One end per room: drop dst where it is the same room as src (or outside every room).
    dst_room = np.where(dst != src, dst, -1)
    src_w = np.where(src >= 0, wing_of_room[np.maximum(src, 0)], -1) if nr else src
    dst_w = np.where(dst >= 0, wing_of_room[np.maximum(dst, 0)], -1) if nr else dst
    dst_wing = np.where(dst_w != src_w, dst_w, -1)

    def touching(a: np.ndarray, b: np.ndarray, w: np.ndarray | None, size: int) -> np.ndarray:
        wa = None if w is None else w[a >= 0]
        wb = None if w is None else w[b >= 0]
        return per(a[a >= 0], wa, size) + per(b[b >= 0], wb, size)

    edge_sums = {}
    for kind in (*pheromone.EDGE_KINDS, "count"):
        values = None if kind == "count" else e.columns[kind][edges]
        edge_sums[kind] = (touching(src, dst_room, values, nr),
                           touching(src_w, dst_wing, values, nw))

    table = palace.node_pheromones
    own = [room_id(*k) for k in rooms], [wing_id(w) for w in wings]
    own_values = {k: (table.values(k, own[0]), table.values(k, own[1]))
                  for k in pheromone.NODE_KINDS}

    def entry(j: int, level: int, count: np.ndarray) -> Result:
        out: Result = {"drawers": int(count[j])}
        # The room's (wing's) own node pheromones, beside its drawers' sums and means.
        out["node"] = {k: float(v[level][j]) for k, v in own_values.items()}
        for kind in pheromone.NODE_KINDS:
            out[kind] = _sum_mean(node_sums[kind][level], count, j)
        out["edges"] = {k: (int(v[level][j]) if k == "count" else float(v[level][j]))
                        for k, v in edge_sums.items()}
        return out

    return {
        "wings": [{"wing": w, **entry(j, 1, wing_drawers)} for j, w in enumerate(wings)],
        "rooms": [{"wing": w, "room": r, **entry(j, 0, room_drawers)}
                  for j, (w, r) in enumerate(rooms)],
    }
