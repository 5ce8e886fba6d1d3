"""The operations registry: the one surface every host drives.

Each user-visible action is an :class:`Operation` with a name, a JSON Schema for its input and
a function returning a JSON-able dict. The MCP server lists and calls them, the browser
worker's RPC calls them, the CLI exposes them and the Panel UI calls them.
"""

from __future__ import annotations

import importlib.util
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.errors import NotFound, UnknownOperation, ValidationError
from palazzo.model import MAX_KEY, MAX_META
from palazzo.palace import MAX_CONTENT, Palace
from palazzo.schema import validate

Result = dict[str, Any]
Runner = Callable[[Palace, dict[str, Any]], Result]


@dataclass(slots=True, frozen=True)
class Operation:
    """One named action on a palace.

    ``mutates`` tells persistence whether the call must be journalled. ``atomic`` is a promise
    of a mutating operation: it raises a :class:`PalazzoError` only before it has changed
    anything, so persistence need not reload the palace after such a failure (a reload costs
    a boot; other failures still get one).
    """

    name: str
    summary: str
    schema: dict[str, Any]
    run: Runner
    mutates: bool = False
    atomic: bool = False

    def describe(self) -> dict[str, Any]:
        """Return the operation's public description (name, summary, input schema)."""
        return {
            "name": self.name,
            "summary": self.summary,
            "input_schema": self.schema,
            "mutates": self.mutates,
        }


class Registry:
    """Named operations, looked up and validated in one place."""

    def __init__(self) -> None:
        self._ops: dict[str, Operation] = {}

    def add(self, op: Operation) -> Operation:
        """Register ``op`` and return it; a second operation of the same name is a bug."""
        if op.name in self._ops:
            raise ValueError(f"operation {op.name!r} is registered twice")
        self._ops[op.name] = op
        return op

    def names(self) -> list[str]:
        """Return the registered operation names in sorted order."""
        return sorted(self._ops)

    def get(self, name: str) -> Operation:
        """Return the operation called ``name`` or raise :class:`UnknownOperation`."""
        try:
            return self._ops[name]
        except KeyError:
            known = ", ".join(self.names())
            raise UnknownOperation(f"no operation named {name!r}; known: {known}") from None

    def describe(self) -> list[dict[str, Any]]:
        """Return every operation's description, sorted by name."""
        return [self._ops[n].describe() for n in self.names()]

    def check(self, name: str, args: dict[str, Any] | None = None) -> Operation:
        """Return the operation ``name`` after checking ``args`` against its schema; raise
        :class:`ValidationError` (or :class:`UnknownOperation`) otherwise. Touches no palace."""
        op = self.get(name)
        args = {} if args is None else args
        if not isinstance(args, dict):
            raise ValidationError(f"arguments of {name!r} must be an object")
        validate(args, op.schema, where=f"{name} arguments")
        return op

    def call(self, palace: Palace, name: str, args: dict[str, Any] | None = None) -> Result:
        """Validate ``args`` against the operation's schema, run it and return its result.

        Invalid arguments raise :class:`ValidationError` before the palace is touched.
        """
        op = self.check(name, args)
        return op.run(palace, {} if args is None else args)


def _obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(required),
            "additionalProperties": False}


NAME = {"type": "string", "minLength": 1, "maxLength": 200}
TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT}
OPT_TEXT = {"type": "string", "maxLength": MAX_META}  # metadata: descriptions, sources
GOAL = {"type": "string", "minLength": 1, "maxLength": 10_000}  # what an agent looks for
IMPORTANCE = {"type": "number", "minimum": 0, "maximum": 1}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 1000}
THRESHOLD = {"type": "number", "minimum": -1, "maximum": 1}


def _palace_status(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo import __version__

    emb = palace.embedder
    store = palace.drawers
    return {
        "name": palace.name,
        "created_at": palace.created_at,
        **palace.counts(),
        "embedded": int(store.has_vector[: store.size].sum()),
        "embedder": None if emb is None else {"name": emb.name, "dim": emb.dim,
                                              "fingerprint": emb.fingerprint},
        "engine": {
            "version": __version__,
            "python": platform.python_version(),
            "platform": sys.platform,
            # SciPy brings BLAS for large matmuls; in the browser it loads after first render.
            "scipy": importlib.util.find_spec("scipy") is not None,
        },
    }


def _room_counts(palace: Palace) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    s = palace.drawers
    for r in s.live_rows():
        key = (s.wing[r], s.room[r])
        counts[key] = counts.get(key, 0) + 1
    return counts


def _list_wings(palace: Palace, args: dict[str, Any]) -> Result:
    counts = _room_counts(palace)
    wings = []
    for w in sorted(palace.wings):
        rooms = [k for k in palace.rooms if k[0] == w]
        wings.append({"name": w, "description": palace.wings[w].description,
                      "rooms": len(rooms), "drawers": sum(counts.get(k, 0) for k in rooms)})
    return {"wings": wings}


def _list_rooms(palace: Palace, args: dict[str, Any]) -> Result:
    wing = args.get("wing")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    counts = _room_counts(palace)
    rooms = [{"wing": r.wing, "name": r.name, "description": r.description,
              "drawers": counts.get(k, 0)}
             for k, r in sorted(palace.rooms.items()) if wing is None or r.wing == wing]
    return {"rooms": rooms}


def _get_taxonomy(palace: Palace, args: dict[str, Any]) -> Result:
    counts = _room_counts(palace)
    tree: dict[str, dict[str, int]] = {w: {} for w in sorted(palace.wings)}
    for (w, r) in sorted(palace.rooms):
        tree[w][r] = counts.get((w, r), 0)
    return {"taxonomy": tree}


def _add_wing(palace: Palace, args: dict[str, Any]) -> Result:
    wing, created = palace.add_wing(args["name"], args.get("description", ""))
    return {"wing": wing.name, "created": created}


def _add_room(palace: Palace, args: dict[str, Any]) -> Result:
    room, created = palace.add_room(args["wing"], args["name"], args.get("description", ""))
    return {"wing": room.wing, "room": room.name, "created": created}


def _add_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    did, created = palace.add_drawer(
        args["wing"], args["room"], args["content"], source=args.get("source", ""),
        source_file=args.get("source_file", ""), importance=args.get("importance", 0.5),
        closet=args.get("closet"), key=args.get("key", ""),
    )
    return {"drawer_id": did, "created": created}


def _get_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    return {"drawer": palace.drawer(args["drawer_id"]).to_dict()}


SNIPPET = 200


def _list_drawers(palace: Palace, args: dict[str, Any]) -> Result:
    wing, room = args.get("wing"), args.get("room")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    if room is not None:
        if wing is None:
            raise ValidationError("room needs its wing")
        palace.room(wing, room)  # NotFound names what is missing
    s = palace.drawers
    rows = np.flatnonzero(s.mask(wing, room))
    order = np.lexsort((rows, -s.columns["created_at"][rows]))  # newest first, then row
    start, limit = args.get("offset", 0), args.get("limit", 50)
    picked = rows[order][start:start + limit]
    return {"total": int(len(rows)), "offset": start,
            "drawers": [{"id": s.ids[r], "wing": s.wing[r], "room": s.room[r],
                         "closet": s.closet[r], "snippet": s.content[r][:SNIPPET],
                         "chars": len(s.content[r]),
                         "created_at": float(s.columns["created_at"][r])}
                        for r in (int(x) for x in picked)]}


def _update_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    fields = {k: args[k] for k in ("content", "importance", "source", "source_file") if k in args}
    return {"drawer": palace.update_drawer(args["drawer_id"], **fields).to_dict()}


def _delete_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    did = palace.drawers.ids[palace.row(args["drawer_id"])]  # an old id finds it too
    assert did is not None
    palace.delete_drawer(did)
    return {"drawer_id": did, "deleted": True}


def _check_duplicate(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo.model import drawer_id
    from palazzo.search import vector_scores

    content = args["content"]
    threshold = args.get("threshold", 0.9)
    exact = None
    if "wing" in args and "room" in args:
        did = drawer_id(content, args["wing"], args["room"])
        exact = did if did in palace.drawers.row_of else None
    s = palace.drawers
    if exact is None:
        for r in s.live_rows():
            if s.content[r] == content:
                exact = s.ids[r]
                break
    near = []
    sims = vector_scores(palace, content, best_chunk=False)
    if sims is not None:
        rows = [int(r) for r in np.flatnonzero(sims >= threshold)]
        rows.sort(key=lambda r: (-sims[r], r))
        near = [{"drawer_id": s.ids[r], "wing": s.wing[r], "room": s.room[r],
                 "similarity": round(float(sims[r]), 6)} for r in rows[: args.get("limit", 10)]]
    return {"is_duplicate": exact is not None or bool(near), "exact": exact, "near": near}


def _search(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo.search import MAX_QUERY, search

    query = args["query"]
    hits = search(palace, query, limit=args.get("limit", 10), wing=args.get("wing"),
                  room=args.get("room"), mode=args.get("mode", "hybrid"),
                  pheromone=args.get("pheromone", 0.0))
    out = {"query": query[:MAX_QUERY], "results": [h.to_dict() for h in hits]}
    if len(query) > MAX_QUERY:
        out["query_cut_to"] = MAX_QUERY  # what was read; the rest was ignored
    return out


def _bulk_replace(palace: Palace, args: dict[str, Any]) -> Result:
    find, replace = args["find"], args["replace"]
    mask = palace.drawers.mask(args.get("wing"), args.get("room"))
    changed = []
    for r in np.flatnonzero(mask):
        text = palace.drawers.content[r]
        if find in text:
            new = text.replace(find, replace)
            if not new.strip():
                raise ValidationError(
                    f"replacing would leave drawer {palace.drawers.ids[r]} empty; nothing changed"
                )
            if len(new) > MAX_CONTENT:
                raise ValidationError(
                    f"replacing would make drawer {palace.drawers.ids[r]} longer than "
                    f"{MAX_CONTENT} characters; nothing changed")
            changed.append((palace.drawers.ids[r], new))
    _check_replace_ids(palace, changed)
    if not args.get("dry_run", False):
        for did, new in changed:
            palace.update_drawer(did, content=new)
    return {"matched": len(changed), "changed": 0 if args.get("dry_run") else len(changed),
            "drawer_ids": [d for d, _ in changed]}


def _check_replace_ids(palace: Palace, changed: list[tuple[str, str]]) -> None:
    """Refuse a bulk replace (before anything changes) that would give two drawers of one
    room the same text, since identity follows content. Cost: one sha256 per changed drawer."""
    from palazzo.model import drawer_id

    s = palace.drawers
    mine = {did for did, _ in changed}
    taken: dict[str, str] = {}
    for did, new in changed:
        r = s.row_of[did]
        nid = drawer_id(new, s.wing[r], s.room[r], s.key[r])
        other = taken.get(nid) or (nid if nid in s.row_of and nid != did else None)
        if other is not None or (nid in mine and nid != did):
            raise ValidationError(
                f"replacing would give drawers {did} and {other or nid} the same text in "
                f"{s.wing[r]}/{s.room[r]}; nothing changed")
        taken[nid] = did


def _reindex(palace: Palace, args: dict[str, Any]) -> Result:
    """Embed the live drawers that lack a vector (every live drawer with ``force``); return
    the vectors written (``embedded``), the drawers not tried yet (``remaining``) and the
    drawers tried that got no vector (``no_vector``: count, the first ids, the reason).

    Counts come from ``has_vector`` after embedding, not from the rows handed to the
    embedder: a text with no token the embedder can read ("no", "d" for the hashing
    embedder) gets the zero vector, which is no vector. Such drawers stay missing, so with
    ``limit`` (a host embedding in steps) a step goes on past them until it has written
    ``limit`` vectors or tried every drawer: each step either makes progress or ends with
    ``remaining`` 0, and a host's loop over steps always ends. Cost: embedding the tried
    drawers: at most ``limit`` that get a vector, plus the drawers that cannot get one, which
    every step tries again (cheap for the embedders that make zero vectors, hashing and
    TF-IDF: such a text has no features).
    """
    if palace.embedder is None:
        raise ValidationError("this palace has no embedder to reindex with")
    s = palace.drawers
    # A fitted embedder (tfidf) is refitted on the drawers as they are now; a changed fit
    # changes its fingerprint, which drops every old vector, so all are embedded again.
    fit = getattr(getattr(palace.embedder, "inner", palace.embedder), "fit", None)
    live = s.live_rows()
    if fit is not None and len(live):
        before = palace.embedder.fingerprint
        fit([s.content[r] for r in live])
        if palace.embedder.fingerprint != before:
            palace.set_embedder(palace.embedder)
    rows = live
    if not args.get("force", False):
        rows = rows[~s.has_vector[rows]]
    todo = len(rows)
    step = args.get("limit", max(todo, 1))
    written, tried, failed = 0, 0, []
    while tried < todo and written < step:
        batch = rows[tried : tried + step - written]
        palace.embed_rows(batch)
        got = s.has_vector[batch]
        written += int(got.sum())
        failed.extend(int(r) for r in batch[~got])
        tried += len(batch)
    listed = 20
    return {"embedded": written, "remaining": todo - tried, "embedder": palace.embedder.name,
            "fingerprint": palace.embedder.fingerprint,
            "total_embedded": int(s.has_vector[: s.size].sum()),
            "no_vector": {"count": len(failed),
                          "drawer_ids": [s.ids[r] for r in failed[:listed]],
                          "reason": "no token the embedder can read" if failed else None}}


def _export(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo.palacefile import export_jsonl, export_palace

    if args.get("format", "json") == "jsonl":
        return {"format": "jsonl", "text": export_jsonl(palace)}
    vectors = args.get("vectors", "float32")
    return {"format": "json",
            "document": export_palace(palace, vectors=None if vectors == "none" else vectors)}


def _import(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo.palacefile import parse, read_palace

    if "document" in args:
        doc = args["document"]
    elif "text" in args:
        doc = parse(args["text"])
    else:
        raise ValidationError("import needs 'document' (an object) or 'text' (JSON text)")

    def make(**kw: Any) -> Palace:
        return Palace(embedder=palace.embedder, clock=palace.clock, **kw)

    new = read_palace(doc, make)
    written = 0
    if palace.embedder is not None and args.get("reindex", True):
        s = new.drawers
        rows = s.live_rows()
        todo = rows[~s.has_vector[rows]]
        new.embed_rows(todo)
        written = int(s.has_vector[todo].sum())  # vectors written, not drawers tried
    new.provenance.keyring = palace.provenance.keyring  # an import never brings keys
    palace.replace_with(new)
    return {"imported": new.counts(), "embedded_now": written}


def _export_graph(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo.graphexport import export_graph

    return export_graph(palace, args.get("format", "d3"), args.get("level", "rooms"),
                        args.get("wing"), args.get("entity"), args.get("hops", 2))


def _build() -> Registry:
    reg = Registry()
    add = reg.add
    add(Operation("palace_status", "Name, size, embedder and engine of the open palace.",
                  _obj({}), _palace_status))
    add(Operation("list_wings", "Wings with their room and drawer counts.", _obj({}),
                  _list_wings))
    add(Operation("list_rooms", "Rooms (of one wing, or all) with drawer counts.",
                  _obj({"wing": NAME}), _list_rooms))
    add(Operation("get_taxonomy", "Wing -> room -> drawer count tree.", _obj({}),
                  _get_taxonomy))
    add(Operation("add_wing", "Create a wing (a major domain); existing wings are kept.",
                  _obj({"name": NAME, "description": OPT_TEXT}, ("name",)), _add_wing,
                  mutates=True, atomic=True))
    add(Operation("add_room", "Create a room in a wing (the wing is created if missing).",
                  _obj({"wing": NAME, "name": NAME, "description": OPT_TEXT},
                       ("wing", "name")), _add_room, mutates=True, atomic=True))
    add(Operation("add_drawer",
                  "Store verbatim text in a wing/room; the same text in the same room is "
                  "stored once (unless a key, such as 'file#chunk', tells them apart).",
                  _obj({"wing": NAME, "room": NAME, "content": TEXT, "source": OPT_TEXT,
                        "source_file": OPT_TEXT, "importance": IMPORTANCE, "closet": NAME,
                        "key": {"type": "string", "maxLength": MAX_KEY}},
                       ("wing", "room", "content")), _add_drawer, mutates=True, atomic=True))
    add(Operation("get_drawer", "One drawer with its full text and metadata.",
                  _obj({"drawer_id": NAME}, ("drawer_id",)), _get_drawer))
    add(Operation("list_drawers", "Drawers of the palace, a wing or a room, newest first "
                  "(id, place, the first 200 characters), with offset and limit.",
                  _obj({"wing": NAME, "room": NAME, "limit": LIMIT,
                        "offset": {"type": "integer", "minimum": 0}}), _list_drawers))
    add(Operation("update_drawer", "Change a drawer's text or metadata; new text gives it "
                  "the id of that text (the old id still finds it).",
                  _obj({"drawer_id": NAME, "content": TEXT, "importance": IMPORTANCE,
                        "source": OPT_TEXT, "source_file": OPT_TEXT}, ("drawer_id",)),
                  _update_drawer, mutates=True, atomic=True))
    add(Operation("delete_drawer", "Delete a drawer from the palace and every index.",
                  _obj({"drawer_id": NAME}, ("drawer_id",)), _delete_drawer, mutates=True,
                  atomic=True))
    add(Operation("check_duplicate",
                  "Whether text is already stored: exact match, and near matches by cosine.",
                  _obj({"content": TEXT, "wing": NAME, "room": NAME, "threshold": THRESHOLD,
                        "limit": LIMIT}, ("content",)), _check_duplicate))
    add(Operation("search",
                  "Hybrid search (vectors + BM25, fused by RRF) with optional wing/room filter; "
                  "pheromone > 0 adds the learned-from-use term (off by default).",
                  _obj({"query": TEXT, "limit": LIMIT, "wing": NAME, "room": NAME,
                        "mode": {"enum": ["hybrid", "vector", "bm25", "blend"]},
                        "pheromone": {"type": "number", "minimum": 0, "maximum": 10}},
                       ("query",)),
                  _search))
    add(Operation("bulk_replace", "Find and replace text across drawers (optionally a wing "
                  "or room); changed drawers are re-indexed.",
                  _obj({"find": TEXT, "replace": {"type": "string", "maxLength": MAX_CONTENT},
                        "wing": NAME, "room": NAME, "dry_run": {"type": "boolean"}},
                       ("find", "replace")),
                  _bulk_replace, mutates=True, atomic=True))
    add(Operation("reindex", "Embed drawers that lack a vector of the current embedder "
                  "(all of them with force).",
                  _obj({"force": {"type": "boolean"}, "limit": LIMIT}), _reindex,
                  mutates=True))
    add(Operation("export", "The palace as a palace JSON document (or JSONL, a drawer a line).",
                  _obj({"format": {"enum": ["json", "jsonl"]},
                        "vectors": {"enum": ["float32", "float16", "none"]}}), _export))
    add(Operation("import", "Replace the open palace by a palace JSON document, validated "
                  "completely first; on any error nothing changes.",
                  _obj({"document": {"type": "object"}, "text": {"type": "string"},
                        "reindex": {"type": "boolean"}}), _import, mutates=True))
    add(Operation("export_graph", "The palace (rooms level, or every drawer; optionally one "
                  "wing) or an entity's knowledge-graph neighbourhood as Graphviz DOT, "
                  "Mermaid or D3 node-link JSON.",
                  _obj({"format": {"enum": ["dot", "mermaid", "d3"]},
                        "level": {"enum": ["rooms", "drawers"]}, "wing": NAME,
                        "entity": NAME, "hops": {"type": "integer", "minimum": 0,
                                                 "maximum": 6}}), _export_graph))
    # Operations of other engine areas live beside their modules; imported here, not at the
    # top, because they import this module's Operation and schema helpers.
    from palazzo import ops_agents, ops_kg, ops_navigation, ops_pheromone, ops_provenance

    ops_pheromone.register(reg)
    ops_navigation.register(reg)
    ops_agents.register(reg)
    ops_kg.register(reg)
    ops_provenance.register(reg)
    return reg


REGISTRY = _build()


def catalog() -> list[dict[str, Any]]:
    """Return every operation's name, summary, input schema and whether it mutates."""
    return REGISTRY.describe()


def default_registry() -> Registry:
    """Return a new registry holding every built-in operation (for hosts that extend it)."""
    return _build()
