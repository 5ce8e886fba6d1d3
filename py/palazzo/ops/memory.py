"""Operations of the memory layer that read the whole palace: the wake-up context,
extraction of entities and facts from drawers, and enriched search.

The engine work is in :mod:`palazzo.memory.wakeup`, :mod:`palazzo.memory.extraction` (run by
:meth:`palazzo.palace.Palace.extract_rows`) and :mod:`palazzo.memory.enrichment`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from palazzo.memory import enrichment, wakeup
from palazzo.ops.registry import LIMIT, NAME, TEXT, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.retrieval.search import MAX_QUERY, search

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
           "drawer as evidence. New drawers are extracted when added; running it again adds "
           "nothing twice.",
           obj({"wing": NAME, "room": NAME}), mutates=True)
def _extract(palace: Palace, args: dict[str, Any]) -> Result:
    rows = [int(r) for r in np.flatnonzero(palace.drawers.mask(args.get("wing"),
                                                                args.get("room")))]
    # A conversation's assistant turns give mentions only (their "I" is the assistant).
    conv = palace.conversations
    not_user = {t.drawer_id for t in conv.turns.values() if t.role != "user"}
    ids = palace.drawers.ids
    user_rows = [r for r in rows if ids[r] not in not_user]
    other = [r for r in rows if ids[r] in not_user]
    counts = palace.extract_rows(user_rows)
    if other:
        more = palace.extract_rows(other, facts=False)
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
    row_of = palace.drawers.row_of
    ranked, context = enrichment.enrich(
        palace, args["query"], [row_of[h.drawer_id] for h in hits], [h.score for h in hits],
        alpha=args.get("alpha", enrichment.ALPHA), hops=args.get("hops", enrichment.HOPS),
        expand=args.get("expand", enrichment.EXPAND))
    s = palace.drawers
    results = [{"drawer_id": s.ids[c.row], "wing": s.wing[c.row], "room": s.room[c.row],
                "content": s.content[c.row], "score": round(c.score, 6),
                "scores": {"semantic": round(c.semantic, 6),
                           "structural": round(c.structural, 6)},
                "entities": c.entities, **({"via": c.via} if c.via else {})}
               for c in ranked[:limit]]
    return {"query": args["query"][:MAX_QUERY], "results": results, **context}
