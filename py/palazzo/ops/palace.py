"""Operations on the palace itself: its status and taxonomy, wings, rooms and drawers,
search, duplicates, bulk replace, reindexing, palace JSON export and import, graph exports."""

from __future__ import annotations

import importlib.util
import platform
import sys
from typing import Any

import numpy as np

from palazzo._version import __version__
from palazzo.core.model import MAX_CONTENT, MAX_KEY, drawer_id
from palazzo.embed import workload
from palazzo.errors import NotFound, ValidationError
from palazzo.formats.graphexport import export_graph
from palazzo.formats.palacefile import export_jsonl, export_palace, parse, read_palace
from palazzo.memory.enrichment import ALPHA, POOL
from palazzo.memory.sources import source_of
from palazzo.memory.summary import aaak_lines
from palazzo.ops.communities import community_mask
from palazzo.ops.memory import enriched
from palazzo.ops.registry import (
    IMPORTANCE,
    LIMIT,
    NAME,
    OPT_TEXT,
    TEXT,
    THRESHOLD,
    Operations,
    Result,
    obj,
)
from palazzo.palace import Palace
from palazzo.retrieval import events as event_list
from palazzo.retrieval import recency, scripts
from palazzo.retrieval.search import MAX_QUERY, search, vector_scores

operation = Operations()

@operation("palace_status", "Name, size, embedder and engine of the open palace.",
           obj({}))
def _palace_status(palace: Palace, args: dict[str, Any]) -> Result:
    emb = palace.embedder
    store = palace.drawers
    live = store.live_rows()
    unread = scripts.unread_mask(palace, live)  # once: the status and to_embed both use it
    return {
        "name": palace.name,
        "created_at": palace.created_at,
        **palace.counts(),
        "embedded": int(store.has_vector[: store.size].sum()),
        # vectors of the windows long drawers are cut into (each also has its own vector)
        # and of the drawers' dated sentences (memory.events), which are counted apart too
        "chunk_vectors": len(store.chunks),
        "event_sentences": store.chunks.event_count(),
        # drawers written in a script the embedder does not read (Korean for English
        # MiniLM): their words rank them, not their vectors; None when it reads every script
        "unread": None if unread is None else {"drawers": int(unread.sum()),
                                               "script": scripts.reads(emb)},
        # drawers still waiting for a vector they can get (what background embedding does),
        # of them a person's own turns of conversations (embedded first), and the long
        # turns searchable by their opening window's vector, the rest to come
        **_to_embed(palace, live, unread),
        "embedder": None if emb is None else {
            "name": emb.name, "dim": emb.dim, "fingerprint": emb.fingerprint,
            # what computes the vectors ("ONNX Runtime, wasm, 1 thread", "NumPy"), if known
            "runtime": getattr(getattr(emb, "inner", emb), "runtime", None)},
        "engine": {
            "version": __version__,
            "python": platform.python_version(),
            "platform": sys.platform,
            # SciPy brings BLAS for large matmuls; in the browser it loads when the atlas (or
            # the NumPy model) first needs it.
            "scipy": importlib.util.find_spec("scipy") is not None,
        },
    }


def _to_embed(palace: Palace, live: np.ndarray,
              unread: np.ndarray | None) -> dict[str, int]:
    """Return ``{"to_embed": n, "to_embed_own": m, "to_complete": k}``: how many live
    drawers lack a vector their embedder can give them (those in a script it does not read
    never get one), how many of those are a user's own turns of a conversation, and how many
    drawers have their opening window's vector only, the rest of their windows to come
    (:meth:`Palace.embedding_texts`). ``live`` are the live rows and ``unread`` their
    :func:`scripts.unread_mask`. Cost: O(live drawers + chunks), plus one set lookup per
    waiting drawer (:meth:`Palace.own_turns` is cached)."""
    s = palace.drawers
    wanting = ~s.has_vector[live]
    if unread is not None:
        wanting &= ~unread
    waiting = live[wanting]
    complete = len(s.chunks.opening_rows())
    if not len(waiting):
        return {"to_embed": 0, "to_embed_own": 0, "to_complete": complete}
    users = palace.own_turns()
    own = sum(s.ids[int(r)] in users for r in waiting.tolist()) if users else 0
    return {"to_embed": int(len(waiting)), "to_embed_own": int(own), "to_complete": complete}


def _room_counts(palace: Palace) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    s = palace.drawers
    for r in s.live_rows():
        key = (s.wing[r], s.room[r])
        counts[key] = counts.get(key, 0) + 1
    return counts


@operation("list_wings", "Wings with their room and drawer counts.", obj({}))
def _list_wings(palace: Palace, args: dict[str, Any]) -> Result:
    counts = _room_counts(palace)
    wings = []
    for w in sorted(palace.wings):
        rooms = [k for k in palace.rooms if k[0] == w]
        wings.append({"name": w, "description": palace.wings[w].description,
                      "rooms": len(rooms), "drawers": sum(counts.get(k, 0) for k in rooms)})
    return {"wings": wings}


@operation("list_rooms", "Rooms (of one wing, or all) with drawer counts.",
           obj({"wing": NAME}))
def _list_rooms(palace: Palace, args: dict[str, Any]) -> Result:
    wing = args.get("wing")
    if wing is not None and wing not in palace.wings:
        raise NotFound(f"no wing named {wing!r}")
    counts = _room_counts(palace)
    rooms = [{"wing": r.wing, "name": r.name, "description": r.description,
              "drawers": counts.get(k, 0), **({"source": r.source} if r.source else {})}
             for k, r in sorted(palace.rooms.items()) if wing is None or r.wing == wing]
    return {"rooms": rooms}


@operation("get_taxonomy", "Wing -> room -> drawer count tree.", obj({}))
def _get_taxonomy(palace: Palace, args: dict[str, Any]) -> Result:
    counts = _room_counts(palace)
    tree: dict[str, dict[str, int]] = {w: {} for w in sorted(palace.wings)}
    for (w, r) in sorted(palace.rooms):
        tree[w][r] = counts.get((w, r), 0)
    return {"taxonomy": tree}


@operation("add_wing", "Create a wing (a major domain); existing wings are kept.",
           obj({"name": NAME, "description": OPT_TEXT}, ("name",)), mutates=True, atomic=True)
def _add_wing(palace: Palace, args: dict[str, Any]) -> Result:
    wing, created = palace.add_wing(args["name"], args.get("description", ""))
    return {"wing": wing.name, "created": created}


@operation("add_room", "Create a room in a wing (the wing is created if missing); "
           "source records what it holds elsewhere (e.g. an imported conversation's id).",
           obj({"wing": NAME, "name": NAME, "description": OPT_TEXT, "source": OPT_TEXT},
                ("wing", "name")), mutates=True, atomic=True)
def _add_room(palace: Palace, args: dict[str, Any]) -> Result:
    room, created = palace.add_room(args["wing"], args["name"], args.get("description", ""),
                                    args.get("source", ""))
    return {"wing": room.wing, "room": room.name, "created": created}


@operation("add_drawer",
           "Store verbatim text in a wing/room; the same text in the same room is "
           "stored once (unless a key, such as 'file#chunk', tells them apart). "
           "created_at (seconds since 1970) keeps the time of a drawer put back, "
           "e.g. by an undo; the palace clock is used without it.",
           obj({"wing": NAME, "room": NAME, "content": TEXT, "source": OPT_TEXT,
                 "source_file": OPT_TEXT, "importance": IMPORTANCE, "closet": NAME,
                 "key": {"type": "string", "maxLength": MAX_KEY},
                 "created_at": {"type": "number", "minimum": 0}},
                ("wing", "room", "content")), mutates=True, atomic=True)
def _add_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    did, created = palace.add_drawer(
        args["wing"], args["room"], args["content"], source=args.get("source", ""),
        source_file=args.get("source_file", ""), importance=args.get("importance", 0.5),
        closet=args.get("closet"), key=args.get("key", ""),
        created_at=args.get("created_at"),
    )
    return {"drawer_id": did, "created": created}


@operation("get_drawer", "One drawer with its full text and metadata, and where it came "
           "from (source: a file's path and part, or a conversation's title, speaker and "
           "time).", obj({"drawer_id": NAME}, ("drawer_id",)))
def _get_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    return {"drawer": palace.drawer(args["drawer_id"]).to_dict(),
            "source": source_of(palace, palace.row(args["drawer_id"]))}


SNIPPET = 200


@operation("list_drawers", "Drawers of the palace, a wing or a room, newest first "
           "(id, place, the first 200 characters, where it came from), with offset and "
           "limit.",
           obj({"wing": NAME, "room": NAME, "limit": LIMIT,
                 "offset": {"type": "integer", "minimum": 0}}))
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
                         "created_at": float(s.columns["created_at"][r]),
                         "source": source_of(palace, r)}
                        for r in (int(x) for x in picked)]}


@operation("update_drawer", "Change a drawer's text or metadata; new text gives it "
           "the id of that text (the old id still finds it).",
           obj({"drawer_id": NAME, "content": TEXT, "importance": IMPORTANCE,
                 "source": OPT_TEXT, "source_file": OPT_TEXT}, ("drawer_id",)),
           mutates=True, atomic=True)
def _update_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    fields = {k: args[k] for k in ("content", "importance", "source", "source_file") if k in args}
    return {"drawer": palace.update_drawer(args["drawer_id"], **fields).to_dict()}


@operation("delete_drawer", "Delete a drawer from the palace and every index.",
           obj({"drawer_id": NAME}, ("drawer_id",)), mutates=True, atomic=True)
def _delete_drawer(palace: Palace, args: dict[str, Any]) -> Result:
    did = palace.drawers.ids[palace.row(args["drawer_id"])]  # an old id finds it too
    assert did is not None
    palace.delete_drawer(did)
    return {"drawer_id": did, "deleted": True}


@operation("check_duplicate",
           "Whether text is already stored: exact match, and near matches by cosine.",
           obj({"content": TEXT, "wing": NAME, "room": NAME, "threshold": THRESHOLD,
                 "limit": LIMIT}, ("content",)))
def _check_duplicate(palace: Palace, args: dict[str, Any]) -> Result:
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


@operation("search",
           "Hybrid search (vectors + BM25, fused by RRF) with optional wing/room filter; "
           "pheromone > 0 adds the learned-from-use term (off by default); a query about "
           "the present (now, currently, these days...) prefers the newer of the drawers it "
           "found, weighed by recency (default 1, 0 turns it off); a query that names an "
           "event (... when the road exam happened?) matches it against the drawers' dated "
           "sentences, weighed by events (default 2, 0 turns it off). rerank (hybrid, off by "
           "default) re-orders the best candidates: recency (relevance x 0.5^(age / "
           "half_life_days), age from the newest drawer), mmr (diversity: near-duplicates "
           "drop; mmr_lambda weighs relevance against novelty) or composite (0.5 relevance, "
           "0.3 outcome from use, 0.2 recency); each result's scores.rerank says by how much. "
           "A hybrid search without rerank is enriched: the best hits are joined with the "
           "knowledge graph and re-ranked by alpha·semantic + (1−alpha)·structural, "
           "alpha = enrich (default 0.9; 1 keeps the fused order); each result also names "
           "its entities, and the answer carries the graph context. community (an id from "
           "the communities operation) keeps to one community's drawers. Each result "
           "says where it came from (source: a file's path and part, or a conversation's "
           "title, speaker and time).",
           obj({"query": TEXT, "limit": LIMIT, "wing": NAME, "room": NAME,
                 "mode": {"enum": ["hybrid", "vector", "bm25", "blend"]},
                 "pheromone": {"type": "number", "minimum": 0, "maximum": 10},
                 "recency": {"type": "number", "minimum": 0, "maximum": 10},
                 "events": {"type": "number", "minimum": 0, "maximum": 5},
                 "rerank": {"enum": ["recency", "mmr", "composite"]},
                 "half_life_days": {"type": "number", "minimum": 0.01, "maximum": 36500},
                 "mmr_lambda": {"type": "number", "minimum": 0, "maximum": 1},
                 "enrich": {"type": "number", "minimum": 0, "maximum": 1},
                 "community": {"type": "integer", "minimum": 0}},
                ("query",)))
def _search(palace: Palace, args: dict[str, Any]) -> Result:
    query = args["query"]
    limit = args.get("limit", 10)
    mode = args.get("mode", "hybrid")
    alpha = args.get("enrich", ALPHA if mode == "hybrid" and "rerank" not in args else 1.0)
    enrich = alpha < 1.0
    within = community_mask(palace, args["community"]) if "community" in args else None
    hits = search(palace, query, limit=max(limit, POOL) if enrich else limit,
                  wing=args.get("wing"),
                  room=args.get("room"), mode=mode,
                  pheromone=args.get("pheromone", 0.0),
                  recency=args.get("recency", recency.WEIGHT),
                  events=args.get("events", event_list.WEIGHT),
                  rerank=args.get("rerank"), within=within,
                  **{k: args[k] for k in ("half_life_days", "mmr_lambda") if k in args})
    if enrich:
        out = enriched(palace, query, hits, limit, alpha,
                       wing=args.get("wing"), room=args.get("room"), within=within)
    else:
        row_of = palace.drawers.row_of
        for h in hits:
            h.source = source_of(palace, row_of[h.drawer_id])
        out = {"query": query[:MAX_QUERY], "results": [h.to_dict() for h in hits]}
    if len(query) > MAX_QUERY:
        out["query_cut_to"] = MAX_QUERY  # what was read; the rest was ignored
    if mode == "hybrid" and not scripts.readable(query, palace.embedder):
        out["by_words"] = (f"semantic search reads {scripts.reads(palace.embedder).title()} "
                           "script only (English): this query is ranked by its words")
    return out


@operation("bulk_replace", "Find and replace text across drawers (optionally a wing "
           "or room); changed drawers are re-indexed.",
           obj({"find": TEXT, "replace": {"type": "string", "maxLength": MAX_CONTENT},
                 "wing": NAME, "room": NAME, "dry_run": {"type": "boolean"}},
                ("find", "replace")), mutates=True, atomic=True)
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


def _reindex_replay(args: dict[str, Any], result: Result) -> dict[str, Any]:
    """Return the arguments that replay a ``reindex`` step exactly: the drawers it tried,
    by id, so a later palazzo whose order of embedding differs replays the same step."""
    if "drawers" in args or "limit" not in args:
        return args
    return {**args, "drawers": result["tried"]}


@operation("reindex", "Embed drawers that lack a vector of the current embedder "
           "(all of them with force); with limit, a step: the most wanted first (a "
           "person's own turns, then short drawers, newest first); with drawers, those. "
           "With opening_first, a person's long turn gets its opening window's vector "
           "first and the rest after every drawer has one.",
           obj({"force": {"type": "boolean"}, "limit": LIMIT,
                "drawers": {"type": "array", "items": NAME, "maxItems": 10_000},
                "opening_first": {"type": "boolean"}}),
           mutates=True, replay=_reindex_replay)
def _reindex(palace: Palace, args: dict[str, Any]) -> Result:
    """Embed the live drawers that lack a vector (every live drawer with ``force``); return
    the vectors written (``embedded``), the drawers not tried yet (``remaining``) and the
    drawers tried that got no vector (``no_vector``: count, the first ids, the reason).

    Counts come from ``has_vector`` after embedding, not from the rows handed to the
    embedder: a text with no token the embedder can read ("no", "d" for the hashing
    embedder) gets the zero vector, which is no vector. Such drawers stay missing, so with
    ``limit`` (a host embedding in steps) a step goes on past them until it has written
    ``limit`` vectors or tried every drawer: each step either makes progress or ends with
    ``remaining`` 0, and a host's loop over steps always ends. A drawer holding its opening
    window's vector only (``opening_first``, :meth:`Palace.embedding_texts`) is waiting too:
    a step that gives a drawer its opening window counts it in ``embedded`` and in
    ``remaining`` (its rest), and the step that gives it the rest in ``embedded``; with
    ``opening_first``, ``remaining`` counts twice the drawers still to open that way (two
    steps each: :meth:`Palace.opening_later`), so the time left a host shows holds. With
    ``limit``, ``work`` says how much model work the step did, how much is left, and the
    work of the queue's next drawers (:func:`palazzo.embed.workload.ahead`): a host's rate
    counts in it. Cost:
    embedding the tried drawers: at most ``limit`` that get a vector, plus the drawers that
    cannot get one, which every step tries again (cheap for the embedders that make zero
    vectors, hashing and TF-IDF: such a text has no features).
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
    if "drawers" in args:
        rows = np.asarray(sorted({palace.row(d) for d in args["drawers"]}), dtype=np.intp)
        if not args.get("force", False):
            waiting = ~s.has_vector[rows]
            waiting |= np.isin(rows, s.chunks.opening_rows())
            rows = rows[waiting]
    elif args.get("force", False):
        rows = live
    if args.get("force", False):
        # Embedded again whole: a long turn's opening window is not kept for its rest.
        for r in np.intersect1d(rows, s.chunks.opening_rows()).tolist():
            s.set_vector(r, np.zeros(s.dim, np.float32))
    else:
        rows = (palace.embedding_queue() if "limit" in args
                else np.union1d(live[~s.has_vector[live]], s.chunks.opening_rows()))
    # Text the embedder does not read gets no vector and is no failure (scripts.Unread):
    # left out here (with force, still handed over: a vector it had is taken away).
    unread = scripts.unread_mask(palace, rows)
    if unread is not None and not args.get("force", False):
        rows = rows[~unread]
    todo = len(rows)
    step = args.get("limit", max(todo, 1))
    opening_first = args.get("opening_first", False)
    # the model work of what waits, for a host's rate and time left (steps only)
    work = (workload.costs(palace, rows, opening_first, exact=step + workload.HORIZON)
            if "limit" in args else None)
    written, tried, failed, opened = 0, 0, [], 0
    while tried < todo and written < step:
        batch = rows[tried : tried + step - written]
        answered = palace.embed_rows(batch, opening_first=opening_first)
        done = batch[:answered]
        got = s.has_vector[done]
        written += int(got.sum())
        opened += sum(bool(s.opening(int(r))) for r in done[got])  # their rest: still to come
        missed = done[~got]
        if unread is not None and len(missed):
            missed = missed[~scripts.unread_mask(palace, missed)]
        failed.extend(int(r) for r in missed)
        tried += answered
        if answered < len(batch):
            break  # the rest's vectors are still being computed elsewhere: a later step
    if opening_first:  # those still to open take two steps each
        opened += palace.opening_later(rows[tried:])
    listed = 20
    out: Result = {
        "embedded": written, "remaining": todo - tried + opened,
        "embedder": palace.embedder.name,
        "tried": [s.ids[int(r)] for r in rows[:tried]] if "limit" in args else [],
        "fingerprint": palace.embedder.fingerprint,
        "total_embedded": int(s.has_vector[: s.size].sum()),
        "no_vector": {"count": len(failed),
                      "drawer_ids": [s.ids[r] for r in failed[:listed]],
                      "reason": "no token the embedder can read" if failed else None}}
    if work is not None:
        out["work"] = workload.ahead(*work, tried)
    return out


@operation("export", "The palace as a palace JSON document (or JSONL, a drawer a line; or "
           "aaak: every drawer as one compact AAAK line with its id, a view for a model to "
           "read cheaply, never a replacement for the verbatim text).",
           obj({"format": {"enum": ["json", "jsonl", "aaak"]},
                 "vectors": {"enum": ["float32", "float16", "none"]}}), heavy=True)
def _export(palace: Palace, args: dict[str, Any]) -> Result:
    if args.get("format", "json") == "jsonl":
        return {"format": "jsonl", "text": export_jsonl(palace)}
    if args.get("format") == "aaak":
        return {"format": "aaak", "text": aaak_lines(palace)}
    vectors = args.get("vectors", "float32")
    return {"format": "json",
            "document": export_palace(palace, vectors=None if vectors == "none" else vectors)}


@operation("import", "Replace the contents of the open palace by a palace JSON document, "
           "validated completely first; on any error nothing changes. The palace keeps its "
           "own name unless take_name is true.",
           obj({"document": {"type": "object"}, "text": {"type": "string"},
                 "reindex": {"type": "boolean"}, "take_name": {"type": "boolean"}}),
           mutates=True, own=("document",))  # read_palace checks a document as a file
def _import(palace: Palace, args: dict[str, Any]) -> Result:
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
    palace.replace_with(new, keep_name=not args.get("take_name", False))
    return {"imported": new.counts(), "embedded_now": written}


@operation("export_graph", "The palace (rooms level, or every drawer; optionally one "
           "wing) or an entity's knowledge-graph neighbourhood as Graphviz DOT, "
           "Mermaid or D3 node-link JSON.",
           obj({"format": {"enum": ["dot", "mermaid", "d3"]},
                 "level": {"enum": ["rooms", "drawers"]}, "wing": NAME,
                 "entity": NAME, "hops": {"type": "integer", "minimum": 0,
                                          "maximum": 6}}))
def _export_graph(palace: Palace, args: dict[str, Any]) -> Result:
    return export_graph(palace, args.get("format", "d3"), args.get("level", "rooms"),
                        args.get("wing"), args.get("entity"), args.get("hops", 2))

