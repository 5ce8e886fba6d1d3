"""The palace JSON file: one versioned envelope holding everything a palace is.

``{"format": "palazzo", "version": 2, "exported_at": …, "palace": {…}}`` with every wing,
room, closet, drawer (verbatim text, identity ``key`` when it has one, metadata,
pheromones), the ids edited drawers had before (``drawer_aliases``: old id -> current id),
edge (costs, pheromones), entity and agent, the node pheromones of wings, rooms, closets and
entities (``node_pheromones``, the non-zero ones; absent in older files), the generalist
agents' ``tunnel_proposals``, the query trails (``trails``: each remembered query's terms
and the drawers it found helpful with their strengths; absent when there are none), and
optionally the embedding matrix (base64 float16 or float32) with the embedder that made it,
plus the chunk vectors of long drawers (``chunk_vectors``: drawer ids repeated once a chunk,
in chunk order, the matrix in the same dtype and dim as ``vectors``, and ``kinds``, one
digit a chunk: 0 a window of the text, 1 or 2 an event sentence, 3 the opening window of a
long turn whose later windows are not embedded yet, absent when all are windows).

Reading validates the whole file before anything is built, so a malformed, truncated or
hostile file is refused with the place it went wrong, and the open palace is never touched
(the caller swaps in the new palace only on success). What a file must hold to be read:

- every number finite and within float range (no NaN, Infinity, ``1e400``, 400-digit
  integers), every text valid Unicode (no lone surrogates), object keys strings;
- names as the operations accept them (:func:`palazzo.core.model.clean_name`), drawer texts and
  keys within the limits ``add_drawer`` enforces, the palace name a clean name;
- no duplicate wing, room, closet, entity, agent, drawer or edge (kind, src, dst);
- every drawer id equal to ``drawer_id(content, wing, room, key)``;
- exactly one hierarchy edge into every wing, room, closet and drawer, from its own parent
  (so no reversed edge, self-loop or orphan);
- pheromones and costs non-negative; vectors of unit length (what embedders make).

Version 1 files (before drawer keys) are still read: a drawer whose id is not that of its
text there was edited when ids did not follow text; it is given the id of its text, and its
old id becomes an alias, as an edit does now.
"""

from __future__ import annotations

import base64
import json
import math
import re
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from palazzo.core import jsontext
from palazzo.core.columns import DRAWER_FLOATS, EDGE_FLOATS, NODE_FLOATS, NodeTable
from palazzo.core.model import (
    CHUNK_SIZE,
    HIERARCHY,
    MAX_CONTENT,
    MAX_KEY,
    MAX_NAME,
    PALACE_ID,
    Agent,
    Closet,
    EdgeKind,
    Entity,
    Room,
    Wing,
    clean_name,
    closet_id,
    drawer_id,
    room_id,
    wing_id,
)
from palazzo.core.schema import quote
from palazzo.errors import ImportRejected, PalazzoError
from palazzo.memory.conversation import Conversations
from palazzo.memory.diary import Diaries
from palazzo.memory.kg import KnowledgeGraph
from palazzo.provenance.kernel import Provenance
from palazzo.stigmergy.trails import QueryTrails
from palazzo.stigmergy.tunnels import TunnelProposals

FORMAT = "palazzo"
VERSION = 2
READS = (1, 2)  # file versions this module reads (1: before drawer keys and aliases)
VECTOR_DTYPES = {"float16": np.float16, "float32": np.float32}
MAX_FILE_CHARS = 2_000_000_000


def export_palace(palace, vectors: str | None = "float32", exported_at: float | None = None
                  ) -> dict[str, Any]:
    """Return the palace as the JSON-able envelope.

    ``vectors`` is "float32" (exact), "float16" (half the size) or None (leave them out; a
    reader re-embeds). Drawers come in row order of live rows. Cost: O(drawers + edges).
    """
    s = palace.drawers
    rows = s.live_rows()
    drawers = []
    for r in rows:
        r = int(r)
        d = {
            "id": s.ids[r], "wing": s.wing[r], "room": s.room[r], "closet": s.closet[r],
            "content": s.content[r], "source": s.source[r], "source_file": s.source_file[r],
        }
        if s.key[r]:
            d["key"] = s.key[r]
        d.update({name: float(s.columns[name][r]) for name in DRAWER_FLOATS})
        drawers.append(d)
    edges = []
    for i in palace.edges.live():
        e = {"kind": palace.edges.kind[i].value, "src": palace.edges.src[i],
             "dst": palace.edges.dst[i], "props": palace.edges.props[i]}
        e.update({name: float(palace.edges.columns[name][i]) for name in EDGE_FLOATS})
        edges.append(e)
    body: dict[str, Any] = {
        "name": palace.name,
        "created_at": palace.created_at,
        "seed": palace.seed,
        "settings": {"similar_threshold": palace.similar_threshold,
                     "similar_limit": palace.similar_limit,
                     "chunk_size": palace.chunk_size},
        "wings": [{"name": w.name, "description": w.description, "created_at": w.created_at}
                  for w in palace.wings.values()],
        "rooms": [{"wing": r.wing, "name": r.name, "description": r.description,
                   "created_at": r.created_at, **({"source": r.source} if r.source else {})}
                  for r in palace.rooms.values()],
        "closets": [{"wing": c.wing, "room": c.room, "name": c.name, "summary": c.summary,
                     "created_at": c.created_at} for c in palace.closets.values()],
        "entities": [{"id": e.id, "name": e.name, "type": e.type, "properties": e.properties}
                     for e in palace.entities.values()],
        "agents": [{"id": a.id, "name": a.name, "focus": a.focus, "archetype": a.archetype,
                    "created_at": a.created_at, "state": a.state}
                   for a in palace.agents.values()],
        "drawers": drawers,
        "drawer_aliases": dict(sorted(palace.drawer_aliases.items())),
        "edges": edges,
        "vectors": None,
        "chunk_vectors": None,
        "kg": palace.kg.to_json(),
        "conversations": palace.conversations.to_json(),
        "provenance": palace.provenance.to_json(),
        "diaries": palace.diaries.to_json(),
    }
    # Written only when there are some, so a palace without them exports as it always did.
    places = _node_pheromones(palace.node_pheromones)
    if places:
        body["node_pheromones"] = places
    if palace.tunnel_proposals.items:
        body["tunnel_proposals"] = palace.tunnel_proposals.to_json()
    if palace.trails.by_terms:
        body["trails"] = palace.trails.to_json()
    emb = palace.embedder
    embedded = [int(r) for r in rows if s.has_vector[r]]
    # Vectors kept from a file while no embedder is attached (a browser boot) still belong to
    # their embedder: the store remembers its name and fingerprint.
    name = emb.name if emb is not None else s.embedder_name
    if vectors is not None and s.fingerprint is not None and name and embedded:
        if vectors not in VECTOR_DTYPES:
            raise PalazzoError(f"vectors must be one of {', '.join(VECTOR_DTYPES)} or None")
        matrix = s.vectors[embedded].astype(VECTOR_DTYPES[vectors])
        body["vectors"] = {
            "embedder": name, "fingerprint": s.fingerprint, "dim": int(s.dim),
            "dtype": vectors, "ids": [s.ids[r] for r in embedded], "data": _b64(matrix),
        }
        body["chunk_vectors"] = _export_chunks(s, embedded, VECTOR_DTYPES[vectors])
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": float(palace.clock() if exported_at is None else exported_at),
        "palace": body,
    }


def _b64(matrix: np.ndarray) -> str:
    """Return the little-endian bytes of ``matrix`` as base64 text."""
    return base64.b64encode(matrix.astype("<" + matrix.dtype.str[1:]).tobytes()).decode("ascii")


def _export_chunks(s, rows: list[int], dtype: type) -> dict[str, Any] | None:
    """Return the ``chunk_vectors`` object for the chunked drawers among ``rows`` (None when
    no drawer has chunks). Cost: O(chunks · dim)."""
    chunked = [r for r in rows if r in s.chunks.of_row]
    if not chunked:
        return None
    slots = np.asarray([i for r in chunked for i in s.chunks.of_row[r]], dtype=np.intp)
    out = {"ids": [s.ids[r] for r in chunked for _ in s.chunks.of_row[r]],
           "data": _b64(s.chunks.vectors[slots].astype(dtype))}
    kinds = s.chunks.kind[slots]
    if kinds.any():  # one digit a chunk: 0 a window, 1/2 an event sentence, 3 an opening
        out["kinds"] = "".join(map(str, kinds.tolist()))
    return out


def export_filename(palace: str, when: float | None = None) -> str:
    """Return the download name of palace ``palace``'s export: ``<palace>-<YYYY-MM-DD>.json``
    (local date), so exports of several palaces and days never overwrite each other."""
    day = time.strftime("%Y-%m-%d", time.localtime(time.time() if when is None else when))
    return f"{palace}-{day}.json"


def export_jsonl(palace) -> str:
    """Return one JSON line a drawer (row order), for diffs and git; no vectors."""
    doc = export_palace(palace, vectors=None, exported_at=0.0)["palace"]["drawers"]
    return "".join(json.dumps(d, ensure_ascii=False, sort_keys=True) + "\n" for d in doc)


# -- reading ---------------------------------------------------------------------------------

class _Check:
    """Small typed accessors that raise ImportRejected naming the path of the bad value."""

    @staticmethod
    def obj(value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise ImportRejected(f"{where} must be an object")
        return value

    @staticmethod
    def arr(value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            raise ImportRejected(f"{where} must be a list")
        return value

    @staticmethod
    def text(d: dict[str, Any], key: str, where: str, default: str | None = None,
             nullable: bool = False, limit: int = MAX_CONTENT) -> Any:
        if key not in d:
            if default is not None or nullable:
                return default
            raise ImportRejected(f"{where}.{key} is missing")
        value = d[key]
        if value is None and nullable:
            return None
        if not isinstance(value, str):
            raise ImportRejected(f"{where}.{key} must be a string")
        if len(value) > limit:
            raise ImportRejected(f"{where}.{key} is longer than {limit} characters")
        if not value.isascii() and (why := _bad_leaf(value)) is not None:
            raise ImportRejected(f"{where}.{key} {why}")
        return value

    @staticmethod
    def num(d: dict[str, Any], key: str, where: str, default: float | None = None,
            lo: float = -math.inf, hi: float = math.inf) -> float:
        if key not in d:
            if default is None:
                raise ImportRejected(f"{where}.{key} is missing")
            return default
        value = d[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ImportRejected(f"{where}.{key} must be a number")
        number = float(value) if -_FLOAT_MAX <= value <= _FLOAT_MAX else math.nan
        if number != number:  # NaN, or an integer past float range
            raise ImportRejected(f"{where}.{key} {_bad_leaf(value)}")
        if not lo <= number <= hi:
            raise ImportRejected(f"{where}.{key} is out of range ({number})")
        return number

    @staticmethod
    def name(d: dict[str, Any], key: str, where: str, what: str) -> str:
        value = _Check.text(d, key, where, limit=MAX_CONTENT)
        try:
            cleaned = clean_name(value, what)
        except PalazzoError as err:
            raise ImportRejected(f"{where}.{key}: {err}") from None
        if cleaned != value:
            raise ImportRejected(f"{where}.{key} is not a normalised {what} name")
        return value


def _bad_leaf(value: Any) -> str | None:
    """Return why the JSON leaf ``value`` cannot be kept (None when it can)."""
    if isinstance(value, float):
        return None if math.isfinite(value) else f"is not a finite number ({value})"
    if isinstance(value, int) and not isinstance(value, bool) and \
            not -_FLOAT_MAX <= value <= _FLOAT_MAX:
        return "is an integer beyond float range"
    if isinstance(value, str) and not value.isascii() and _SURROGATE.search(value):
        return "is not valid Unicode text (it holds a lone surrogate)"
    return None


_FLOAT_MAX = int(np.finfo(np.float64).max)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _scan(doc: Any, where: str) -> None:
    """Raise ImportRejected naming the first number that is not finite or beyond float range,
    text that is not valid Unicode, object key that is not a string, or nesting deeper than
    the palace file's text may have (:data:`palazzo.core.jsontext.MAX_DEPTH`), anywhere in
    ``doc`` (``where`` names ``doc`` itself, and says how deep in the file it is).

    Free-form values (properties, agent state, edge props) and the sections other modules
    read pass through here, so each reader sees only values it can do arithmetic on and
    encode, whatever parsed the file (``json.loads`` reads ``NaN``, ``Infinity`` and
    ``1e400``), and what is accepted can be exported and read back as text. The walk has no
    recursion (a document made in Python may nest deeper than a parsed one) and keeps no
    paths; a second walk finds the path only when something is wrong. Cost: O(values).
    """
    top = where.count(".") + where.count("[") + 2  # brackets around doc in the file's text
    stack = [(doc, top)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            if depth > jsontext.MAX_DEPTH or not all(isinstance(k, str) for k in value):
                break
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            if depth > jsontext.MAX_DEPTH:
                break
            stack.extend((v, depth + 1) for v in value)
        elif _bad_leaf(value) is not None:
            break
    else:
        return
    # Something is wrong: walk again in document order, keeping paths, to name it.
    paths: list[tuple[Any, str, int]] = [(doc, where, top)]
    while paths:
        value, at, depth = paths.pop()
        if isinstance(value, dict | list) and depth > jsontext.MAX_DEPTH:
            raise ImportRejected(f"{at} nests deeper than the {jsontext.MAX_DEPTH} levels a "
                                 "palace file may have")
        if isinstance(value, dict):
            for k in value:
                if not isinstance(k, str):
                    raise ImportRejected(f"{at} has a key that is not a string ({quote(k)})")
            paths.extend((v, f"{at}.{k}", depth + 1) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            paths.extend((v, f"{at}[{i}]", depth + 1)
                         for i, v in reversed(list(enumerate(value))))
        elif (why := _bad_leaf(value)) is not None:
            raise ImportRejected(f"{at} {why}")


def parse(text: str | bytes) -> dict[str, Any]:
    """Return the JSON document in ``text``; syntax errors and hostile nesting are refused."""
    if len(text) > MAX_FILE_CHARS:
        raise ImportRejected("the file is larger than palazzo reads (2 GB)")
    return jsontext.loads(text, what="the palace file", error=ImportRejected)


def read_palace(doc: Any, make_palace: Callable[..., Any]) -> Any:
    """Validate the envelope ``doc`` completely, then return a new palace built from it.

    ``make_palace(name=…, seed=…, similar_threshold=…, similar_limit=…)`` creates the empty
    palace (the caller supplies clock and embedder). Vectors are restored only when their
    fingerprint matches that embedder's; otherwise those drawers are left for ``reindex``.
    Raises ImportRejected with the path of the first problem (what is checked: the module
    docstring). Cost: O(size of the file), with one sha256 over every drawer's text.
    """
    c = _Check
    env = c.obj(doc, "file")
    if env.get("format") != FORMAT:
        raise ImportRejected("file.format must be 'palazzo' (this is not a palazzo palace file)")
    version = env.get("version")
    if isinstance(version, bool) or version not in READS:
        raise ImportRejected(f"file.version {quote(version)} is not supported (this palazzo reads "
                             f"{', '.join(map(str, READS))})")
    body = c.obj(env.get("palace"), "file.palace")
    where = "palace"
    name = c.name(body, "name", where, "palace")
    settings = c.obj(body.get("settings", {}), f"{where}.settings")
    threshold = settings.get("similar_threshold", 0.9)
    if threshold is not None:
        threshold = c.num(settings, "similar_threshold", f"{where}.settings", lo=-1.0, hi=1.0)
    limit = int(c.num(settings, "similar_limit", f"{where}.settings", 5.0, 0, 10_000))
    chunk_size = settings.get("chunk_size", CHUNK_SIZE)
    if chunk_size is not None:
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int):
            raise ImportRejected(f"{where}.settings.chunk_size must be an integer or null")
        c.num(settings, "chunk_size", f"{where}.settings", lo=100, hi=MAX_CONTENT)
    seed = body.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ImportRejected(f"{where}.seed must be an integer from 0 to 2**63 - 1")
    created_at = c.num(body, "created_at", where, 0.0)

    wings = []
    for i, w in enumerate(c.arr(body.get("wings", []), f"{where}.wings")):
        at = f"{where}.wings[{i}]"
        w = c.obj(w, at)
        wings.append(Wing(c.name(w, "name", at, "wing"), c.text(w, "description", at, ""),
                          c.num(w, "created_at", at, 0.0)))
    wing_names = {w.name for w in wings}
    if len(wing_names) != len(wings):
        raise ImportRejected(f"{where}.wings has duplicate names")

    rooms = []
    for i, r in enumerate(c.arr(body.get("rooms", []), f"{where}.rooms")):
        at = f"{where}.rooms[{i}]"
        r = c.obj(r, at)
        room = Room(c.name(r, "wing", at, "wing"), c.name(r, "name", at, "room"),
                    c.text(r, "description", at, ""), c.num(r, "created_at", at, 0.0),
                    c.text(r, "source", at, ""))
        if room.wing not in wing_names:
            raise ImportRejected(f"{at}.wing: no wing named {quote(room.wing)} in the file")
        rooms.append(room)
    room_keys = {(r.wing, r.name) for r in rooms}
    if len(room_keys) != len(rooms):
        raise ImportRejected(f"{where}.rooms has duplicates")

    closets = []
    for i, cl in enumerate(c.arr(body.get("closets", []), f"{where}.closets")):
        at = f"{where}.closets[{i}]"
        cl = c.obj(cl, at)
        closet = Closet(c.name(cl, "wing", at, "wing"), c.name(cl, "room", at, "room"),
                        c.name(cl, "name", at, "closet"), c.text(cl, "summary", at, ""),
                        c.num(cl, "created_at", at, 0.0))
        if (closet.wing, closet.room) not in room_keys:
            raise ImportRejected(f"{at}: no room {quote(closet.wing)}/{quote(closet.room)} in "
                                 "the file")
        closets.append(closet)
    closet_keys = {(x.wing, x.room, x.name) for x in closets}
    if len(closet_keys) != len(closets):
        raise ImportRejected(f"{where}.closets has duplicates")

    entities = []
    for i, e in enumerate(c.arr(body.get("entities", []), f"{where}.entities")):
        at = f"{where}.entities[{i}]"
        e = c.obj(e, at)
        props = c.obj(e.get("properties", {}), f"{at}.properties")
        _scan(props, f"{at}.properties")
        entities.append(Entity(c.text(e, "id", at), c.text(e, "name", at),
                               c.text(e, "type", at, "concept"), props))
    if len({e.id for e in entities}) != len(entities):
        raise ImportRejected(f"{where}.entities has duplicate ids")
    agents = []
    for i, a in enumerate(c.arr(body.get("agents", []), f"{where}.agents")):
        at = f"{where}.agents[{i}]"
        a = c.obj(a, at)
        state = c.obj(a.get("state", {}), f"{at}.state")
        _scan(state, f"{at}.state")
        agents.append(Agent(c.text(a, "id", at), c.text(a, "name", at),
                            c.text(a, "focus", at, ""), c.text(a, "archetype", at, "balanced"),
                            c.num(a, "created_at", at, 0.0), state))
    if len({a.id for a in agents}) != len(agents):
        raise ImportRejected(f"{where}.agents has duplicate ids")

    drawers = [_read_drawer(c.obj(d, f"{where}.drawers[{i}]"), f"{where}.drawers[{i}]",
                            version)
               for i, d in enumerate(c.arr(body.get("drawers", []), f"{where}.drawers"))]
    taken = {rec["id"] for rec in drawers if "stale" not in rec}
    for rec in drawers:
        if "stale" in rec and rec["id"] in taken:
            # A version 1 drawer edited to the text of another drawer of its room: both are
            # kept, this one keyed by its old id.
            rec["key"] = rec["stale"]
            rec["id"] = drawer_id(rec["content"], rec["wing"], rec["room"], rec["key"])
    seen: set[str] = set()
    renamed: dict[str, str] = {}  # version 1: stale id -> the id of the drawer's text
    for i, rec in enumerate(drawers):
        at = f"{where}.drawers[{i}]"
        if (rec["wing"], rec["room"]) not in room_keys:
            raise ImportRejected(f"{at}: no room {quote(rec['wing'])}/{quote(rec['room'])} in "
                                 "the file")
        closet = (rec["wing"], rec["room"], rec["closet"])
        if rec["closet"] is not None and closet not in closet_keys:
            raise ImportRejected(f"{at}.closet: no closet {quote(rec['closet'])} in that room")
        if rec["id"] in seen:
            raise ImportRejected(f"{at}.id {quote(rec['id'])} appears twice")
        seen.add(rec["id"])
        if "stale" in rec:
            if rec["stale"] in renamed:
                raise ImportRejected(f"{at}.id {quote(rec['stale'])} appears twice")
            renamed[rec["stale"]] = rec["id"]
    if not seen.isdisjoint(renamed):
        raise ImportRejected(f"{where}.drawers: id {quote(min(seen & set(renamed)))} is both a "
                             "drawer's own id and the old id of another one")
    aliases = _read_aliases(body.get("drawer_aliases", {}), seen, renamed,
                            f"{where}.drawer_aliases")

    # node -> (the hierarchy edge that must lead into it, from which parent)
    into = {wing_id(w): (EdgeKind.HAS_WING, PALACE_ID) for w in wing_names}
    into.update({room_id(*k): (EdgeKind.HAS_ROOM, wing_id(k[0])) for k in room_keys})
    into.update({closet_id(*k): (EdgeKind.HAS_CLOSET, room_id(k[0], k[1]))
                 for k in closet_keys})
    into.update({rec["id"]: (EdgeKind.HAS_DRAWER, room_id(rec["wing"], rec["room"])
                             if rec["closet"] is None
                             else closet_id(rec["wing"], rec["room"], rec["closet"]))
                 for rec in drawers})
    nodes = {PALACE_ID, *into, *(e.id for e in entities), *(a.id for a in agents)}
    edges = []
    kinds = {k.value: k for k in EdgeKind}
    keys: set[tuple[str, str, str]] = set()
    for i, e in enumerate(c.arr(body.get("edges", []), f"{where}.edges")):
        at = f"{where}.edges[{i}]"
        e = c.obj(e, at)
        kind = c.text(e, "kind", at)
        if kind not in kinds:
            raise ImportRejected(f"{at}.kind {quote(kind)} is not an edge kind")
        rec = {"kind": kinds[kind], "src": c.text(e, "src", at), "dst": c.text(e, "dst", at),
               "props": c.obj(e.get("props", {}), f"{at}.props")}
        if rec["props"]:
            _scan(rec["props"], f"{at}.props")
        for end in ("src", "dst"):
            rec[end] = renamed.get(rec[end], rec[end])
            if rec[end] not in nodes:
                raise ImportRejected(f"{at}.{end}: no node {quote(rec[end])} in the file")
        key = (kind, rec["src"], rec["dst"])
        if key in keys:
            raise ImportRejected(f"{at}: a second {kind} edge from {quote(key[1])} to "
                                 f"{quote(key[2])}")
        keys.add(key)
        if rec["kind"] in HIERARCHY and into.get(rec["dst"]) != (rec["kind"], rec["src"]):
            raise ImportRejected(f"{at}: a {kind} edge from {quote(rec['src'])} to "
                                 f"{quote(rec['dst'])} is not one of the hierarchy (parent "
                                 "down to child)")
        for col in EDGE_FLOATS:
            rec[col] = c.num(e, col, at, 1.0 if "cost" in col else 0.0, 0.0)
        edges.append(rec)
    for node, (kind, up) in into.items():
        if (kind.value, up, node) not in keys:
            raise ImportRejected(f"{where}.edges: {quote(node)} has no {kind.value} edge from "
                                 f"{quote(up)} (an orphan)")

    places = _read_node_pheromones(body.get("node_pheromones", []),
                                   nodes - seen - {a.id for a in agents},
                                   f"{where}.node_pheromones")
    proposals = TunnelProposals.from_json(body.get("tunnel_proposals", []),
                                          {room_id(*k) for k in room_keys},
                                          f"{where}.tunnel_proposals")
    trails = QueryTrails.from_json(body.get("trails", []), f"{where}.trails")
    vectors = _read_vectors(body.get("vectors"), seen, renamed, f"{where}.vectors")
    chunk_vectors = _read_chunks(body.get("chunk_vectors"), vectors, renamed,
                                 f"{where}.chunk_vectors")

    palace = make_palace(name=name, seed=seed, similar_threshold=threshold,
                         similar_limit=limit, chunk_size=chunk_size)
    palace.created_at = created_at
    for w in wings:
        palace.wings[w.name] = w
    for r in rooms:
        palace.rooms[(r.wing, r.name)] = r
    for x in closets:
        palace.closets[(x.wing, x.room, x.name)] = x
    palace.entities = {e.id: e for e in entities}
    palace.agents = {a.id: a for a in agents}
    for rec in drawers:
        row = palace.drawers.add(rec["id"], rec["content"], rec["wing"], rec["room"],
                                 rec["closet"], rec["source"], rec["source_file"],
                                 {k: rec[k] for k in DRAWER_FLOATS}, key=rec["key"])
        palace.text_index.add(row, rec["content"])
    palace.drawer_aliases = aliases
    for rec in edges:
        i = palace.edges.add(rec["kind"], rec["src"], rec["dst"], rec["props"])
        for key in EDGE_FLOATS:
            palace.edges.columns[key][i] = rec[key]
    palace.node_pheromones = places
    palace.tunnel_proposals = proposals
    palace.trails = trails
    emb = palace.embedder
    if vectors is not None and emb is None:
        # No embedder yet (the browser attaches MiniLM after boot): keep the vectors under
        # their own fingerprint; attaching that embedder later keeps them, another drops them.
        if vectors["dim"] != palace.drawers.dim:
            palace.drawers.resize_vectors(vectors["dim"])
        palace.drawers.set_fingerprint(vectors["fingerprint"], vectors["embedder"])
    if vectors is not None and vectors["fingerprint"] == palace.drawers.fingerprint \
            and vectors["dim"] == palace.drawers.dim:
        for drawer, vec in zip(vectors["ids"], vectors["matrix"], strict=True):
            row = palace.drawers.row_of[drawer]
            if drawer in chunk_vectors:
                matrix, kinds = chunk_vectors[drawer]
                palace.drawers.set_chunks(row, matrix, mean=vec, kinds=kinds)
            else:
                palace.drawers.set_vector(row, vec)
    # Sections of later issues, read once drawers, entities and edges exist (they refer to
    # them); each reader validates its whole section and raises ImportRejected.
    for section in ("kg", "conversations", "provenance", "diaries"):
        _scan(body.get(section), f"{where}.{section}")
    palace.kg = KnowledgeGraph.from_json(palace, body.get("kg", {}), f"{where}.kg")
    palace.conversations = Conversations.from_json(palace, body.get("conversations", {}),
                                                   f"{where}.conversations")
    palace.provenance = Provenance.from_json(palace, body.get("provenance", {}),
                                             f"{where}.provenance")
    diaries = body.get("diaries", [])
    if renamed and isinstance(diaries, list):  # version 1: entries follow their drawer
        diaries = [{**x, "drawer_id": renamed.get(x.get("drawer_id"), x.get("drawer_id"))}
                   if isinstance(x, dict) and isinstance(x.get("drawer_id"), str) else x
                   for x in diaries]
    palace.diaries = Diaries.from_json(palace, diaries, f"{where}.diaries")
    return palace


def _read_drawer(d: dict[str, Any], at: str, version: int) -> dict[str, Any]:
    """Return the checked drawer record ``d`` (without its place in rooms and closets).

    Its id must be the id of its text (``drawer_id``). In a version 1 file a drawer with
    another id was edited when ids did not follow text: it gets the id of its text and the
    record keeps the old one as ``stale``. Cost: one sha256 of the text.
    """
    c = _Check
    rec = {
        "id": c.text(d, "id", at, limit=MAX_NAME),
        "wing": c.name(d, "wing", at, "wing"),
        "room": c.name(d, "room", at, "room"),
        "closet": None if d.get("closet") is None else c.name(d, "closet", at, "closet"),
        "content": c.text(d, "content", at, limit=MAX_CONTENT),
        "key": c.text(d, "key", at, "", limit=MAX_KEY),
        "source": c.text(d, "source", at, ""),
        "source_file": c.text(d, "source_file", at, ""),
    }
    if "key" in d and not rec["key"]:
        raise ImportRejected(f"{at}.key must not be empty (leave it out instead)")
    for key in DRAWER_FLOATS:
        if key == "importance":
            rec[key] = c.num(d, key, at, 0.5, 0.0, 1.0)
        else:  # times are any finite number; pheromones are never negative
            rec[key] = c.num(d, key, at, 0.0, 0.0 if key.startswith("explo") else -math.inf)
    if not rec["content"].strip():
        raise ImportRejected(f"{at}.content must not be empty")
    real = drawer_id(rec["content"], rec["wing"], rec["room"], rec["key"])
    if real != rec["id"]:
        if version != 1:
            raise ImportRejected(f"{at}.id {quote(rec['id'])} is not the id of its content, wing, "
                                 f"room and key ({real})")
        rec["stale"], rec["id"] = rec["id"], real
    return rec


def _node_pheromones(table: NodeTable) -> list[dict[str, Any]]:
    """Return the non-zero node pheromones of wings, rooms, closets and entities as records
    {"id", "exploitation", "exploration"}, in the order the nodes first got some."""
    ids, columns = table.live()
    return [{"id": node, **{k: float(columns[k][i]) for k in NODE_FLOATS}}
            for i, node in enumerate(ids)]


def _read_node_pheromones(value: Any, nodes: set[str], where: str) -> NodeTable:
    """Return the node pheromone table of a file's ``node_pheromones`` records: each names a
    node of the file that is not a drawer (nor an agent, which carries none), once, with
    non-negative pheromones. Files before version 2's node pheromones have none."""
    c = _Check
    ids: list[str] = []
    columns: dict[str, list[float]] = {k: [] for k in NODE_FLOATS}
    for i, rec in enumerate(c.arr(value, where)):
        at = f"{where}[{i}]"
        rec = c.obj(rec, at)
        node = c.text(rec, "id", at, limit=MAX_NAME + 64)
        if node not in nodes:
            raise ImportRejected(f"{at}.id: no wing, room, closet or entity {quote(node)} in the "
                                 "file")
        ids.append(node)
        for k in NODE_FLOATS:
            columns[k].append(c.num(rec, k, at, 0.0, 0.0))
    if len(set(ids)) != len(ids):
        raise ImportRejected(f"{where} names a node twice")
    return NodeTable.from_columns(ids, {k: np.asarray(v) for k, v in columns.items()})


def _read_aliases(value: Any, ids: set[str], renamed: dict[str, str], where: str
                  ) -> dict[str, str]:
    """Return the alias table (old drawer id -> current id) of the file plus the ids version
    1 drawers had; every target must be a drawer of the file and no alias one."""
    table = _Check.obj(value, where)
    out = {old: renamed.get(new, new) if isinstance(new, str) else new
           for old, new in table.items()}
    for old, new in out.items():
        if len(old) > MAX_NAME or _bad_leaf(old) is not None:
            raise ImportRejected(f"{where} has a key that is no drawer id ({quote(old)})")
        if not isinstance(new, str) or new not in ids:
            raise ImportRejected(f"{where}[{quote(old)}] must be the id of a drawer in the file")
        if old in ids:
            raise ImportRejected(f"{where}[{quote(old)}] is a drawer's own id, not an old one")
    return {**out, **renamed}


def _read_vectors(value: Any, ids: set[str], renamed: dict[str, str], where: str
                  ) -> dict[str, Any] | None:
    """Return the checked ``vectors`` section (None when there is none): dtype, dim, the
    drawer ids (version 1 stale ids renamed) and their unit-length rows as float32."""
    if value is None:
        return None
    c = _Check
    v = c.obj(value, where)
    dtype = c.text(v, "dtype", where)
    if dtype not in VECTOR_DTYPES:
        raise ImportRejected(f"{where}.dtype must be float16 or float32")
    dim = int(c.num(v, "dim", where, lo=1, hi=65_536))
    names = _drawer_ids(v.get("ids"), renamed, f"{where}.ids")
    if len(set(names)) != len(names) or not ids.issuperset(names):
        raise ImportRejected(f"{where}.ids must name each drawer of the file at most once")
    matrix = _read_matrix(v, len(names), dim, dtype, where)
    return {"fingerprint": c.text(v, "fingerprint", where, limit=MAX_NAME), "dim": dim,
            "dtype": dtype, "embedder": c.text(v, "embedder", where, "", limit=MAX_NAME),
            "ids": names, "matrix": matrix}


def _drawer_ids(value: Any, renamed: dict[str, str], where: str) -> list[str]:
    """Return the list of drawer ids ``value`` (stale version 1 ids renamed) or raise."""
    names = _Check.arr(value, where)
    if not all(isinstance(n, str) for n in names):
        raise ImportRejected(f"{where} must be a list of drawer ids")
    return [renamed.get(n, n) for n in names] if renamed else names


# Embedders make rows of unit length (palazzo.embed); float16 keeps that to about 1e-3.
NORM_TOLERANCE = 1e-2


def _read_matrix(v: dict[str, Any], rows: int, dim: int, dtype: str, where: str
                 ) -> np.ndarray:
    """Return ``v["data"]`` decoded as a (rows, dim) float32 matrix of unit-length rows, or
    raise (a row of zeros, huge values or NaN is no embedder's). Cost: O(rows · dim)."""
    try:
        raw = base64.b64decode(_Check.text(v, "data", where, limit=MAX_FILE_CHARS),
                               validate=True)
    except ValueError:
        raise ImportRejected(f"{where}.data is not valid base64") from None
    itemsize = np.dtype(VECTOR_DTYPES[dtype]).itemsize
    if len(raw) != rows * dim * itemsize:
        raise ImportRejected(
            f"{where}.data holds {len(raw)} bytes, expected {rows}×{dim}×{itemsize}"
        )
    matrix = np.frombuffer(raw, dtype="<" + np.dtype(VECTOR_DTYPES[dtype]).str[1:])
    matrix = matrix.reshape(rows, dim).astype(np.float32)
    if not np.isfinite(matrix).all():
        raise ImportRejected(f"{where}.data holds values that are not finite")
    with np.errstate(over="ignore"):
        norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix, dtype=np.float64))
    bad = np.flatnonzero(np.abs(norms - 1.0) > NORM_TOLERANCE)
    if len(bad):
        raise ImportRejected(f"{where}.data row {int(bad[0])} has length {norms[bad[0]]:.6g}, "
                             "not 1 (embedders make unit vectors)")
    return matrix


def _read_chunks(value: Any, vectors: dict[str, Any] | None, renamed: dict[str, str],
                 where: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Return drawer id -> (its chunk matrix, rows in chunk order; their kinds) from
    ``chunk_vectors``.

    The chunks use the dtype and dim of ``vectors``; every id must be a drawer that has a
    vector there, and a drawer's chunks must be consecutive. ``kinds`` (optional; files
    before event sentences hold windows only) is one digit a chunk, 0 to 3
    (:mod:`palazzo.core.columns`: a window, an event sentence, an opening window alone).
    Cost: O(chunks · dim).
    """
    if value is None:
        return {}
    c = _Check
    v = c.obj(value, where)
    if vectors is None:
        raise ImportRejected(f"{where} needs palace.vectors (they share its dtype and dim)")
    names = _drawer_ids(v.get("ids"), renamed, f"{where}.ids")
    if not set(vectors["ids"]).issuperset(names):
        raise ImportRejected(f"{where}.ids must name drawers that have a vector in the file")
    runs = [n for i, n in enumerate(names) if i == 0 or names[i - 1] != n]
    if len(runs) != len(set(runs)):
        raise ImportRejected(f"{where}.ids must list the chunks of a drawer consecutively")
    matrix = _read_matrix(v, len(names), vectors["dim"], vectors["dtype"], where)
    kinds_text = v.get("kinds", "0" * len(names))
    if not (isinstance(kinds_text, str) and len(kinds_text) == len(names)
            and set(kinds_text) <= {"0", "1", "2", "3"}):
        raise ImportRejected(f"{where}.kinds must be one digit 0 to 3 a chunk")
    kinds = np.frombuffer(kinds_text.encode("ascii"), dtype=np.uint8) - ord("0")
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    start = 0
    for name in runs:
        end = start
        while end < len(names) and names[end] == name:
            end += 1
        if end - start > 1 and (kinds[start:end] == 3).any():
            raise ImportRejected(f"{where}: an opening window (kind 3) must be its drawer's "
                                 "only chunk")
        out[name] = (matrix[start:end], kinds[start:end])
        start = end
    return out
