"""Enrichment: search hits joined with the knowledge graph around them (Graph Kernel §7).

Search finds drawers by their words and meaning; the knowledge graph knows what they are
about. Enrichment follows the Graph Kernel paper's pipeline: hits → the entities they mention
(REFERENCES edges, written by extraction) → canonical names (the alias table) → the 1–2 hop
neighbourhood of the entities the *query* names → a score
``α·semantic + (1 − α)·structural`` per drawer, where

- ``semantic`` is the hit's fused search score divided by the best hit's (1 for the first);
- ``structural`` is ``1 / (1 + d)`` for the nearest entity the drawer mentions, ``d`` its hop
  distance in the knowledge graph from an entity the query names (0 hops: the drawer names
  it; 1 for a neighbour, ⅓ at two hops), 0 for a drawer that mentions none of them. When the
  query names no known entity, an entity's weight is the share of hits that mention it (what
  the result set is about), and a drawer's structural score is its best entity's weight.

Facts are evidence too: a fact about an entity the query names whose predicate the query
asks about ("where did I **live**" → ``lives_in``, ``moved_to``; "which company **employed**
me" → ``works_at``; :data:`PREDICATE_WORDS`, or the predicate's own words) points at the
drawer it came from (``source_drawer``), and that drawer's structural score is 1, whether the
fact is current or ended (a question about then needs the fact of then). A first-person query
names the entity ``user`` (what extraction calls the speaker of "I").

Drawers that mention an entity of the neighbourhood but were not among the hits join the
candidates (``expand`` of them, nearest entity first) with semantic 0: that is how the second
half of a two-hop question ("the city my sister moved to") can surface although it shares
no word with the question. Each result names the entities it mentions, and the facts of the
neighbourhood are returned as context. Cost: the search, one pass over the hits' out-edges,
a breadth-first walk of at most ``hops`` levels over current facts, and the in-edges of the
neighbourhood's entities; independent of the palace's size otherwise.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from palazzo.core.model import EdgeKind
from palazzo.memory.extraction import extract
from palazzo.memory.kg import ENTITY_PREFIX

ALPHA = 0.9  # the semantic weight, chosen on dev data (docs/benchmarks.md, "Enrichment")
HOPS = 2
POOL = 30  # search hits enrichment re-ranks (at least the limit asked for)
EXPAND = 10  # drawers reached only through the graph that may join the candidates
MAX_CONTEXT = 50  # facts of the neighbourhood returned as context
LINKED_KINDS = ("name", "alias", "code")  # mentions that name an entity (not dates, amounts)
USER = "user"
COUNTING = re.compile(r"\bhow\s+(?:many|much)\b", re.IGNORECASE)
FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|myself|we|us|our|ours)\b", re.IGNORECASE)
WORDS = re.compile(r"[a-z]+")
# Words of a question that ask about a predicate extraction writes (besides the predicate's
# own words): the everyday ways to ask for a place, an employer, a job, a tool, a taste.
PREDICATE_WORDS: dict[str, frozenset[str]] = {
    "lives_in": frozenset({"live", "lived", "living", "lives", "based", "home", "city",
                           "where", "stay", "stayed", "reside", "resided"}),
    "moved_to": frozenset({"move", "moved", "moving", "relocate", "relocated", "based",
                           "live", "lived", "living", "where", "city"}),
    "works_at": frozenset({"work", "worked", "working", "works", "employ", "employed",
                           "employer", "company", "job", "firm", "workplace"}),
    "works_as": frozenset({"job", "role", "position", "profession", "title", "work",
                           "worked", "working"}),
    "uses": frozenset({"use", "used", "using", "tool", "stack", "software", "app"}),
    "switched_to": frozenset({"switch", "switched", "change", "changed", "replace",
                              "replaced", "now"}),
    "prefers": frozenset({"prefer", "preferred", "favourite", "favorite", "like", "best"}),
    "likes": frozenset({"like", "liked", "enjoy", "favourite", "favorite", "love"}),
    "loves": frozenset({"love", "loved", "favourite", "favorite", "like", "enjoy"}),
    "decided": frozenset({"decide", "decided", "decision", "choose", "chose", "chosen",
                          "pick", "picked", "plan", "planned"}),
}


@dataclass(slots=True)
class Enriched:
    """One candidate drawer (store row) with its scores and the entity keys it mentions."""

    row: int
    semantic: float
    structural: float
    score: float
    entities: list[str] = field(default_factory=list)
    via: str | None = None  # for a drawer found through the graph: the entity that led there


def drawer_entities(palace: Any, drawer_id: str) -> list[str]:
    """Return the entity keys drawer ``drawer_id`` mentions (its REFERENCES edges), in edge
    order. Cost: O(out-edges of the drawer)."""
    e = palace.edges
    return [e.dst[i][len(ENTITY_PREFIX):] for i in e.out.get(drawer_id, ())
            if e.kind[i] is EdgeKind.REFERENCES]


def query_entities(palace: Any, query: str) -> list[str]:
    """Return the keys of the knowledge-graph entities ``query`` names (through the alias
    table), in order of first mention. Cost: one extraction over the query."""
    kg = palace.kg
    keys: list[str] = []
    for m in extract(query, kg.aliases).mentions:
        if m.kind in LINKED_KINDS and ENTITY_PREFIX + m.key in palace.entities \
                and m.key not in keys:
            keys.append(m.key)
    if FIRST_PERSON.search(query) and ENTITY_PREFIX + USER in palace.entities \
            and USER not in keys:
        keys.append(USER)
    return keys


def asks_about(predicate: str, words: set[str]) -> bool:
    """Return whether a question of lower-cased ``words`` asks about ``predicate``: its own
    words or :data:`PREDICATE_WORDS` share a word with the question. Cost: O(1)."""
    own = {w for w in predicate.split("_") if len(w) > 2}
    return bool(words & (own | PREDICATE_WORDS.get(predicate, frozenset())))


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def evidence_rows(palace: Any, keys: list[str], query: str) -> dict[int, str]:
    """Return store row -> entity key for the drawers that are the evidence of a fact about
    one of ``keys`` (as subject) whose predicate ``query`` asks about (:func:`asks_about`),
    ended facts included.

    A counting question ("how many kits have I bought") names the objects it counts, so
    there a fact counts only when its object shares a word with the question (a grocery
    order is no evidence about kits); a wh-question ("which company employed me") asks for
    the object, so any object counts. Cost: O(facts of those entities)."""
    kg = palace.kg
    row_of = palace.drawers.row_of
    counting = COUNTING.search(query) is not None
    words = set(WORDS.findall(query.lower()))
    asked = {_stem(w) for w in words}
    asks: dict[str, bool] = {}
    out: dict[int, str] = {}
    for key in keys:
        for tid in kg.by_subject.get(key, ()):
            t = kg.triples[tid]
            if counting and not asked & {_stem(w) for w in WORDS.findall(t.object)}:
                continue
            if t.predicate not in asks:
                asks[t.predicate] = asks_about(t.predicate, words)
            if asks[t.predicate] and t.source_drawer:
                r = row_of.get(t.source_drawer)
                if r is not None:
                    out.setdefault(r, key)
    return out


def neighbourhood(kg: Any, start: Iterable[str], hops: int = HOPS
                  ) -> tuple[dict[str, int], list[Any]]:
    """Return (entity key -> hop distance from the nearest of ``start``, the current facts
    walked), breadth first over current facts in both directions, at most ``hops`` levels.
    Cost: O(facts within ``hops`` of the start)."""
    dist = {k: 0 for k in start}
    frontier = list(dist)
    facts: dict[str, Any] = {}
    for level in range(1, hops + 1):
        nxt = []
        for u in frontier:
            for index, end in ((kg.by_subject, "object"), (kg.by_object, "subject")):
                for tid in index.get(u, ()):
                    t = kg.triples[tid]
                    if not t.current:
                        continue
                    facts.setdefault(t.id, t)
                    v = getattr(t, end)
                    if v not in dist:
                        dist[v] = level
                        nxt.append(v)
        frontier = nxt
    return dist, sorted(facts.values(), key=lambda t: (t.subject, t.predicate, t.object, t.id))


def enrich(palace: Any, query: str, rows: list[int], scores: list[float], *,
           alpha: float = ALPHA, hops: int = HOPS, expand: int = EXPAND
           ) -> tuple[list[Enriched], dict[str, Any]]:
    """Return the candidates re-ranked by ``alpha·semantic + (1 − alpha)·structural`` (best
    first; ties by the search's order) and the context: ``query_entities``, ``entities``
    (key -> name, hop distance when known) and ``facts`` (the neighbourhood's current facts).

    ``rows`` and ``scores`` are the search's hits (store rows) and fused scores, best first.
    See the module docstring for the terms. Cost: see the module docstring.
    """
    store = palace.drawers
    top = max(scores) if scores else 0.0
    cands = [Enriched(r, (s / top) if top > 0 else 0.0, 0.0, 0.0,
                      drawer_entities(palace, store.ids[r])) for r, s in zip(rows, scores,
                                                                             strict=True)]
    q_keys = query_entities(palace, query)
    # "user" is the hub of a first-person palace: its neighbourhood is everything the user
    # did, so it counts for evidence facts only, not as a neighbourhood centre.
    centres = [k for k in q_keys if k != USER]
    dist, facts = neighbourhood(palace.kg, centres, hops) if centres else ({}, [])
    evidence = evidence_rows(palace, q_keys, query) if q_keys else {}
    if q_keys:
        weight = {k: 1.0 / (1.0 + d) for k, d in dist.items()}
        seen = {c.row for c in cands}
        extra: list[tuple[int, str, int]] = [(-1, key, r) for r, key in evidence.items()
                                             if r not in seen]
        seen |= {r for _, _, r in extra}
        e = palace.edges
        for key in sorted(dist, key=lambda k: (dist[k], k)):
            for i in e.inc.get(ENTITY_PREFIX + key, ()):
                if e.kind[i] is not EdgeKind.REFERENCES:
                    continue
                r = store.row_of.get(e.src[i])
                if r is not None and r not in seen:
                    seen.add(r)
                    extra.append((dist[key], key, r))
        extra.sort(key=lambda x: (x[0], x[1], x[2]))  # evidence first (-1), then by hops
        for _, key, r in extra[:expand]:
            cands.append(Enriched(r, 0.0, 0.0, 0.0, drawer_entities(palace, store.ids[r]),
                                  via=key))
    else:
        counts: dict[str, int] = {}
        for c in cands:
            for k in set(c.entities):
                counts[k] = counts.get(k, 0) + 1
        n = max(len(cands), 1)
        weight = {k: v / n for k, v in counts.items() if v > 1}  # shared by two hits or more
    for c in cands:
        c.structural = 1.0 if c.row in evidence else \
            max((weight.get(k, 0.0) for k in c.entities), default=0.0)
        c.score = alpha * c.semantic + (1.0 - alpha) * c.structural
    order = sorted(range(len(cands)), key=lambda i: (-cands[i].score, i))
    ranked = [cands[i] for i in order]
    names = {}
    for c in ranked:
        for k in c.entities:
            if k not in names:
                ent = palace.entities.get(ENTITY_PREFIX + k)
                names[k] = {"name": ent.name if ent else k, **(
                    {"hops": dist[k]} if k in dist else {})}
    context = {"query_entities": q_keys, "entities": names,
               "facts": [t.to_dict() for t in facts[:MAX_CONTEXT]],
               "facts_truncated": len(facts) > MAX_CONTEXT}
    return ranked, context
