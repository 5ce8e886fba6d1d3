"""Operations of the memory layer that read the whole palace: the wake-up context,
extraction of entities and facts from drawers, and enriched search.

The engine work is in :mod:`palazzo.memory.wakeup`, :mod:`palazzo.memory.extraction` (run by
:meth:`palazzo.palace.Palace.extract_rows`) and :mod:`palazzo.memory.enrichment`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from palazzo.errors import ValidationError
from palazzo.memory import enrichment, summary, wakeup
from palazzo.memory.sources import source_of
from palazzo.ops.registry import LIMIT, NAME, TEXT, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.retrieval.search import MAX_QUERY, Hit, search

operation = Operations()


@operation("wake_up",
           "A compact start-of-session context within a token budget: identity, current "
           "facts, open decisions, the most important drawers and the active rooms; every "
           "line names the drawer, fact or room it came from. Deterministic.",
           obj({"budget": {"type": "integer", "minimum": wakeup.MIN_BUDGET,
                           "maximum": wakeup.MAX_BUDGET,
                           "description": "tokens to spend (estimated as characters / 4); "
                                          f"default {wakeup.DEFAULT_BUDGET}"}}))
def _wake_up(palace: Palace, args: dict[str, Any]) -> Result:
    return wakeup.wake_up(palace, args.get("budget", wakeup.DEFAULT_BUDGET))


@operation("extract",
           "Extract entities and facts from existing drawers (all, or a wing/room): each "
           "entity a drawer names gets a REFERENCES edge, each fact (decisions, preferences, "
           "'X uses/is/moved to Y', dated events) a knowledge-graph observation with the "
           "drawer as evidence. Facts come from the person's own words only: a "
           "conversation's assistant (and tool) turns give known names, not facts, unless "
           "'assistant' is true. By fixed English rules, not a model. New drawers are "
           "extracted when added; running it again adds nothing twice.",
           obj({"wing": NAME, "room": NAME,
                "assistant": {"type": "boolean",
                              "description": "also take facts from assistant and tool turns "
                                             "(their 'I' is then read as the user's); "
                                             "default false"}}), mutates=True)
def _extract(palace: Palace, args: dict[str, Any]) -> Result:
    rows = [int(r) for r in np.flatnonzero(palace.drawers.mask(args.get("wing"),
                                                                args.get("room")))]
    # A conversation's assistant turns give mentions only (their "I" is the assistant),
    # unless asked for.
    conv = palace.conversations
    not_user = {t.drawer_id for t in conv.turns.values() if t.role != "user"}
    ids = palace.drawers.ids
    user_rows = [r for r in rows if ids[r] not in not_user]
    other = [r for r in rows if ids[r] in not_user]
    counts = palace.extract_rows(user_rows)
    if other:
        more = palace.extract_rows(other, facts=bool(args.get("assistant", False)))
        counts = {k: counts[k] + more[k] for k in counts}
    return counts


@operation("enrich",
           "Search, then join the hits with the knowledge graph: the entities each hit "
           "names, the 1–2 hop neighbourhood of the entities the query names (its facts as "
           "context), drawers reached only through that neighbourhood, all re-ranked by "
           "alpha·semantic + (1−alpha)·structural.",
           obj({"query": TEXT, "limit": LIMIT, "wing": NAME, "room": NAME,
                "alpha": {"type": "number", "minimum": 0, "maximum": 1},
                "hops": {"type": "integer", "minimum": 1, "maximum": 3},
                "expand": {"type": "integer", "minimum": 0, "maximum": 100}}, ("query",)))
def _enrich(palace: Palace, args: dict[str, Any]) -> Result:
    limit = args.get("limit", 10)
    hits = search(palace, args["query"], limit=max(limit, enrichment.POOL),
                  wing=args.get("wing"), room=args.get("room"))
    return enriched(palace, args["query"], hits, limit, args.get("alpha", enrichment.ALPHA),
                    args.get("hops", enrichment.HOPS), args.get("expand", enrichment.EXPAND),
                    args.get("wing"), args.get("room"))


def enriched(palace: Palace, query: str, hits: list[Any], limit: int, alpha: float,
             hops: int = enrichment.HOPS, expand: int = enrichment.EXPAND,
             wing: str | None = None, room: str | None = None,
             within: np.ndarray | None = None) -> Result:
    """Return the search result for ``hits`` (best first) re-ranked by enrichment: the first
    ``limit`` results in the search operation's shape (each hit's own scores kept, ``score``
    the enriched one, ``scores.semantic`` / ``scores.structural`` its terms, ``entities`` the
    entity keys it names, ``source`` where it came from (:mod:`palazzo.memory.sources`),
    ``via`` the entity that brought in a drawer no list ranked) and the
    graph context (``query_entities``, ``entities``, ``facts``). Drawers outside the
    ``wing`` / ``room`` (and the ``within`` row mask) the search was limited to never join.
    The search operation (by default) and the ``enrich`` operation both answer with it.
    Cost: :func:`enrichment.enrich` plus one dict per result."""
    row_of = palace.drawers.row_of
    hit_of = {row_of[h.drawer_id]: h for h in hits}
    ranked, context = enrichment.enrich(
        palace, query, list(hit_of), [h.score for h in hits],
        alpha=alpha, hops=hops, expand=expand)
    s = palace.drawers
    if wing is not None or room is not None or within is not None:
        inside = s.mask(wing, room)
        if within is not None:
            inside = inside & within[: s.size]
        ranked = [c for c in ranked if inside[c.row]]
    results = []
    for c in ranked[:limit]:
        hit = hit_of.get(c.row)
        if hit is not None:
            out = hit.to_dict()
        else:  # reached through the graph only: no list ranked it
            out = Hit(drawer_id=s.ids[c.row], wing=s.wing[c.row], room=s.room[c.row],
                      content=s.content[c.row], score=0.0, vector=None, bm25=None,
                      vector_rank=None, bm25_rank=None).to_dict()
        out["score"] = round(c.score, 6)
        out["scores"].update(semantic=round(c.semantic, 6), structural=round(c.structural, 6))
        out["entities"] = c.entities
        out["source"] = source_of(palace, c.row)
        if c.via:
            out["via"] = c.via
        results.append(out)
    return {"query": query[:MAX_QUERY], "results": results, **context}


@operation("summarize",
           "Extractive summaries of rooms (or a closet): each a few of the room's own "
           "sentences, the most typical of it, each naming its drawer; computed when asked "
           "and cached until the room changes. A room, every room of a wing, or every room.",
           obj({"wing": NAME, "room": NAME, "closet": NAME,
                "max_chars": {"type": "integer", "minimum": 50, "maximum": 5000},
                "limit": LIMIT}), heavy=True)
def _summarize(palace: Palace, args: dict[str, Any]) -> Result:
    wing, room, closet = args.get("wing"), args.get("room"), args.get("closet")
    if (room or closet) and not wing:
        raise ValidationError("a room (or closet) needs its wing")
    if closet and not room:
        raise ValidationError("a closet needs its room")
    if room is not None:
        palace.room(wing, room)  # NotFound for a room that is not there
    cut = args.get("max_chars", summary.SUMMARY_CHARS)
    rooms = palace.summaries.rooms()
    keys = sorted(k for k in rooms if (wing is None or k[0] == wing)
                  and (room is None or k[1] == room))
    limit = args.get("limit", 100)
    out = []
    for w, r in keys[:limit]:
        sentences, count = palace.summaries.of(w, r, closet, cut, rows=rooms[(w, r)])
        entry = {"wing": w, "room": r, "drawers": count,
                 "summary": " ".join(s.text for s in sentences),
                 "sentences": [s.to_dict() for s in sentences]}
        if closet is not None:
            entry["closet"] = closet
            given = palace.closets.get((w, r, closet))
            if given is not None and given.summary:
                entry["given_summary"] = given.summary  # the user's own words stay theirs
        out.append(entry)
    return {"rooms": out, "count": len(keys), "truncated": len(keys) > limit}
