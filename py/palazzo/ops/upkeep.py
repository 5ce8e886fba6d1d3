"""Upkeep operations: find near-duplicate drawers, merge them with their ids kept, and repair
the derived structures.

- ``dedup`` only reports: groups of drawers whose vectors are nearly parallel (cosine at
  least ``threshold``) *and* whose words nearly agree (Jaccard of their sets of word pairs at
  least ``text_threshold``: one word in twenty changed keeps about 0.82, one in ten about
  0.67), plus drawers whose text is the same up to case and spacing. It never
  changes the palace, so a dry run is the default by construction.
- ``merge_drawers`` merges named drawers into a keeper: the keeper takes the highest
  importance and pheromone of the group, every merged id becomes an alias of the keeper (so
  ``get_drawer``, facts' ``source_drawer`` and old links still find it), and the merged drawers
  leave every index. ``palazzo dedup --yes`` runs ``dedup`` and then one ``merge_drawers`` a
  group, as one batch. Why two operations: the journal replays ``merge_drawers`` with its ids,
  which does the same on every replay; a replayed "merge what looks duplicate now" would depend
  on which vectors existed at that moment.
- ``repair`` checks every drawer, edge and alias against the drawers' text and fixes what is
  derived: the BM25 index (rebuilt from the text when any row disagrees), vectors that are not
  finite unit vectors (embedded again, or marked missing without an embedder), edges whose
  ends are gone, drawers without their HAS_DRAWER edge, aliases that point nowhere. What it
  cannot fix from the palace itself (a drawer whose id is not its text's, a fact whose evidence
  drawer is gone) it reports. ``dry_run`` reports without fixing.

Conversation turns and diary entries are left out of ``dedup``: each is a record of what was
said or written at a time, so two equal ones are two events, not a duplicate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, EdgeKind, closet_id, drawer_id, room_id
from palazzo.errors import ValidationError
from palazzo.ops.registry import NAME, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.retrieval.bm25 import BM25Index

operation = Operations()

THRESHOLD = 0.9  # cosine of whole-drawer vectors (chosen by bench upkeep: docs/benchmarks.md)
TEXT_THRESHOLD = 0.7  # Jaccard of word pairs
NEIGHBOURS = 10  # candidate pairs a drawer keeps (its nearest), so a cluster cannot explode
BLOCK = 1024  # rows of the similarity matrix computed at once
MAX_GROUPS = 10_000
EXAMPLES = 5
WORD = re.compile(r"\w+")


@dataclass(slots=True)
class Group:
    """Near-duplicate drawers (store rows): the keeper and the rows that would merge into it,
    with each merged row's cosine and word-pair overlap with the keeper."""

    keeper: int
    merged: list[tuple[int, float | None, float]]


def _words(text: str) -> frozenset[str]:
    """Return the text's word pairs (2-shingles; its words when it has fewer than three):
    two long texts drawn from one small vocabulary share most words but few pairs."""
    words = WORD.findall(text.casefold())
    if len(words) < 3:
        return frozenset(words)
    return frozenset(zip(words, words[1:], strict=False))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def _candidates(palace: Palace, wing: str | None, room: str | None) -> np.ndarray:
    """Return the rows dedup may merge: live, in the wing/room, not a turn or diary entry."""
    store = palace.drawers
    mask = store.mask(wing, room)
    diary = palace.diaries.entries
    rows = [int(r) for r in np.flatnonzero(mask)
            if store.source[r] != "conversation" and store.ids[r] not in diary]
    return np.asarray(rows, dtype=np.intp)


def near_duplicates(palace: Palace, threshold: float = THRESHOLD,
                    text_threshold: float = TEXT_THRESHOLD, wing: str | None = None,
                    room: str | None = None) -> list[Group]:
    """Return the groups of near-duplicate drawers, largest first, then by keeper id.

    Pairs come from two sources: equal text up to case and spacing (a dict of normalised
    text), and for drawers with vectors, each drawer's :data:`NEIGHBOURS` nearest others with
    cosine ≥ ``threshold`` whose word pairs overlap ≥ ``text_threshold`` (both must hold: two
    short notes can share a vector direction and say different things). Pairs are joined
    into groups (union-find); a group's keeper is its oldest drawer (then the most important,
    then the smallest id), the first to have said it. Cost: one blocked matrix product over
    the candidates' whole-drawer vectors, O(n²·dim) flops in :data:`BLOCK`-row slices
    (``palazzo bench upkeep``, docs/benchmarks.md), plus a word-pair set per compared drawer.
    """
    store = palace.drawers
    rows = _candidates(palace, wing, room)
    parent = {int(r): int(r) for r in rows}

    def find(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    def union(a: int, b: int) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)

    seen: dict[str, int] = {}
    for r in rows:
        key = " ".join(store.content[r].casefold().split())
        if key in seen:
            union(seen[key], int(r))
        else:
            seen[key] = int(r)
    words: dict[int, frozenset[str]] = {}

    def words_of(r: int) -> frozenset[str]:
        if r not in words:
            words[r] = _words(store.content[r])
        return words[r]

    vec_rows = rows[store.has_vector[rows]] if len(rows) else rows
    if len(vec_rows) > 1:
        v = store.vectors[vec_rows]
        k = min(NEIGHBOURS, len(vec_rows) - 1)
        for lo in range(0, len(vec_rows), BLOCK):
            sims = v[lo:lo + BLOCK] @ v.T
            idx = np.arange(lo, min(lo + BLOCK, len(vec_rows)))
            sims[idx - lo, idx] = -np.inf  # not itself
            near = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k else np.empty((0, 0))
            for i, js in zip(idx, near, strict=True):
                for j in js:
                    if j <= i or sims[i - lo, j] < threshold:
                        continue  # each pair once (from its lower index), above threshold
                    a, b = int(vec_rows[i]), int(vec_rows[j])
                    if _jaccard(words_of(a), words_of(b)) >= text_threshold:
                        union(a, b)
    members: dict[int, list[int]] = {}
    for r in parent:
        members.setdefault(find(r), []).append(r)
    created = store.columns["created_at"]
    importance = store.columns["importance"]
    groups = []
    for rs in members.values():
        if len(rs) < 2:
            continue
        rs.sort(key=lambda r: (float(created[r]), -float(importance[r]), store.ids[r]))
        keeper = rs[0]
        merged = []
        for r in rs[1:]:
            cos = (float(store.vectors[keeper] @ store.vectors[r])
                   if store.has_vector[keeper] and store.has_vector[r] else None)
            merged.append((r, None if cos is None else round(cos, 6),
                           round(_jaccard(words_of(keeper), words_of(r)), 6)))
        groups.append(Group(keeper, merged))
    groups.sort(key=lambda g: (-len(g.merged), store.ids[g.keeper]))
    return groups


def _row_dict(palace: Palace, r: int) -> dict[str, Any]:
    s = palace.drawers
    text = " ".join(s.content[r].split())
    return {"drawer_id": s.ids[r], "wing": s.wing[r], "room": s.room[r],
            "preview": text[:120] + ("…" if len(text) > 120 else "")}


@operation("dedup",
           "Near-duplicate drawers (cosine ≥ threshold and word-pair overlap ≥ text_threshold, or "
           "the same text up to case and spacing), grouped, each group with the drawer it "
           "would keep (the oldest). Changes nothing: merge a group with merge_drawers. "
           "Conversation turns and diary entries are left out.",
           obj({"threshold": {"type": "number", "minimum": 0.5, "maximum": 1},
                "text_threshold": {"type": "number", "minimum": 0, "maximum": 1},
                "wing": NAME, "room": NAME,
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_GROUPS}}))
def _dedup(palace: Palace, args: dict[str, Any]) -> Result:
    groups = near_duplicates(palace, args.get("threshold", THRESHOLD),
                             args.get("text_threshold", TEXT_THRESHOLD),
                             args.get("wing"), args.get("room"))
    limit = args.get("limit", 100)
    out = []
    for g in groups[:limit]:
        out.append({"keeper": _row_dict(palace, g.keeper),
                    "merge": [{**_row_dict(palace, r), "cosine": cos, "words": jac}
                              for r, cos, jac in g.merged]})
    return {"groups": out, "count": len(groups), "truncated": len(groups) > limit,
            "drawers_to_merge": sum(len(g.merged) for g in groups)}


@operation("merge_drawers",
           "Merge drawers into a keeper: the keeper takes the group's highest importance and "
           "pheromones, each merged id becomes an alias of the keeper (old ids and facts' "
           "evidence still find it) and the merged drawers leave every index.",
           obj({"keeper": NAME, "drawers": {"type": "array", "items": NAME, "minItems": 1,
                                            "maxItems": 10_000}}, ("keeper", "drawers")),
           mutates=True, atomic=True)
def _merge_drawers(palace: Palace, args: dict[str, Any]) -> Result:
    store = palace.drawers
    keeper_row = palace.row(args["keeper"])
    keeper = store.ids[keeper_row]
    rows = []
    for did in args["drawers"]:
        r = palace.row(did)  # NotFound before anything changes
        if r == keeper_row:
            raise ValidationError(f"{did} is the keeper itself")
        if r not in rows:
            rows.append(r)
    cols = store.columns
    for name in ("importance", "exploitation", "exploration"):
        cols[name][keeper_row] = max(float(cols[name][keeper_row]),
                                     *(float(cols[name][r]) for r in rows))
    merged = []
    for r in rows:
        did = store.ids[r]
        assert did is not None
        old_aliases = [a for a, t in store.aliases.items() if t == did]
        palace.delete_drawer(did)
        for alias in [*old_aliases, did]:
            store.aliases[alias] = keeper
        merged.append(did)
    return {"keeper": keeper, "merged": merged}


# -- repair ----------------------------------------------------------------------------------

def _known_nodes(palace: Palace) -> set[str]:
    nodes = {PALACE_ID}
    nodes.update(w.id for w in palace.wings.values())
    nodes.update(room_id(w, r) for (w, r) in palace.rooms)
    nodes.update(closet_id(w, r, c) for (w, r, c) in palace.closets)
    nodes.update(i for i in palace.drawers.ids if i is not None)
    nodes.update(palace.entities)
    nodes.update(a.id for a in palace.agents.values())
    return nodes


def repair(palace: Palace, fix: bool = True) -> dict[str, Any]:
    """Return what :func:`repair` found (``problems``: kind -> count, ``examples``: kind -> up
    to five ids) and, with ``fix``, what it fixed (``fixed``: kind -> count).

    Checks, in order: each drawer's id against its text (reported, not fixed: renaming would
    break whoever holds the id); the BM25 index against one rebuilt from the text (replaced
    when any row differs); vectors (finite, unit length; embedded again, or marked missing);
    edges whose ends are gone (removed); drawers without a HAS_DRAWER edge (added); drawer
    aliases to no drawer (dropped); facts whose evidence drawer is gone (reported). Cost:
    one sha256 and one tokenisation a drawer (the rebuild), a pass over the edges, and the
    embedding of any bad vector; ``palazzo bench upkeep`` times it at 20k drawers.
    """
    store = palace.drawers
    n = store.size
    live = store.live_rows()
    problems: dict[str, list[str]] = {}
    fixed: dict[str, int] = {}

    def found(kind: str, what: str) -> None:
        problems.setdefault(kind, []).append(what)

    for r in live:
        did = store.ids[r]
        if did != drawer_id(store.content[r], store.wing[r], store.room[r], store.key[r]):
            found("id_not_from_text", did)

    rebuilt = BM25Index(palace.text_index.k1, palace.text_index.b,
                        tokenizer=palace.text_index.tokenizer)
    for r in live:
        rebuilt.add(int(r), store.content[r])
    differ = np.flatnonzero(rebuilt.lengths(n) != palace.text_index.lengths(n))
    for r in differ:
        found("text_index_rows", store.ids[r] or f"row {int(r)}")
    if fix and len(differ):
        palace.text_index = rebuilt
        fixed["text_index_rows"] = len(differ)

    has = store.has_vector[:n] & store.alive[:n]
    vec = store.vectors[:n]
    norms = np.linalg.norm(vec, axis=1)
    bad = np.flatnonzero(has & ~(np.isfinite(norms) & (np.abs(norms - 1.0) < 1e-3)))
    for r in bad:
        found("bad_vectors", store.ids[r])
    if fix and len(bad):
        if palace.embedder is not None:
            palace.embed_rows(bad)
        else:
            store.has_vector[bad] = False
        fixed["bad_vectors"] = len(bad)

    nodes = _known_nodes(palace)
    edges = palace.edges
    dangling = [i for i in edges.live() if edges.src[i] not in nodes or edges.dst[i] not in nodes]
    for i in dangling:
        found("dangling_edges", f"{edges.kind[i].value} {edges.src[i]} -> {edges.dst[i]}")
    if fix and dangling:
        for i in dangling:
            edges.remove(i)
        fixed["dangling_edges"] = len(dangling)

    orphans = []
    for r in live:
        did = store.ids[r]
        if not any(edges.kind[i] == EdgeKind.HAS_DRAWER for i in edges.inc.get(did, [])):
            orphans.append(int(r))
            found("drawers_without_parent_edge", did)
    if fix and orphans:
        for r in orphans:
            closet = store.closet[r]
            parent = (closet_id(store.wing[r], store.room[r], closet) if closet
                      else room_id(store.wing[r], store.room[r]))
            edges.add(EdgeKind.HAS_DRAWER, parent, store.ids[r])
        fixed["drawers_without_parent_edge"] = len(orphans)

    stale = [a for a, t in store.aliases.items() if t not in store.row_of or a in store.row_of]
    for a in stale:
        found("stale_aliases", a)
    if fix and stale:
        for a in stale:
            del store.aliases[a]
        fixed["stale_aliases"] = len(stale)

    for t in palace.kg.triples.values():
        if t.source_drawer and t.source_drawer not in store.row_of \
                and t.source_drawer not in store.aliases:
            found("facts_whose_evidence_is_gone", t.id)

    edges_checked = len(edges.live())
    return {"checked": {"drawers": len(live), "edges": edges_checked,
                        "facts": len(palace.kg.triples), "aliases": len(store.aliases)},
            "problems": {k: len(v) for k, v in sorted(problems.items())},
            "examples": {k: v[:EXAMPLES] for k, v in sorted(problems.items())},
            "fixed": fixed, "dry_run": not fix}


@operation("repair",
           "Check every drawer, edge, alias and fact against the drawers' text and rebuild "
           "what is derived: the BM25 index, bad vectors, edges to nothing, missing drawer "
           "edges, stale aliases. Reports what it found and fixed; dry_run only reports.",
           obj({"dry_run": {"type": "boolean"}}), mutates=True)
def _repair(palace: Palace, args: dict[str, Any]) -> Result:
    return repair(palace, fix=not args.get("dry_run", False))
