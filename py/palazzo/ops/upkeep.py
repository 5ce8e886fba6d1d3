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

Conversation turns and diary entries are left out of ``dedup`` and refused by
``merge_drawers``: each is a record of what was said or written at a time, so two equal ones
are two events, not a duplicate (and merging one would take it from its conversation or
diary). A turn is known by its conversation (``palace.conversations``), an entry by its diary
(``palace.diaries``), not by the drawer's editable ``source``.

Chunks of one source file (the same ``source_file`` in one wing, the ``#chunk-k`` of an
indexed file set aside) are never each other's duplicates: a file that repeats a block is
rebuilt from all of its chunks, and merging one away would lose that piece of the file (which
the next ``palazzo index`` would add again, for ``dedup`` to propose again).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.core.model import PALACE_ID, EdgeKind, closet_id, drawer_id, room_id
from palazzo.errors import ValidationError
from palazzo.memory.conversation import WING as TURN_WING
from palazzo.ops.registry import NAME, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.retrieval.bm25 import BM25Index

operation = Operations()

THRESHOLD = 0.9  # cosine of whole-drawer vectors (chosen by bench upkeep: docs/benchmarks.md)
TEXT_THRESHOLD = 0.7  # Jaccard of word pairs
NEIGHBOURS = 10  # candidate pairs a drawer keeps (its nearest), so a cluster cannot explode
BLOCK = 1024  # rows of the similarity matrix computed at once
# float32 products of unit vectors miss their exact value by a few units in the last place
# (NumPy 2.4.6's matrix product gives 0.9999999, 1 - 1.2e-7, for two equal vectors): a
# threshold of 1 means "the same vector", so the comparison allows that much.
ROUNDING = 1e-6
MAX_GROUPS = 10_000
EXAMPLES = 5
WORD = re.compile(r"\w+")
# How the folder importer names chunk k of a file in ``source_file`` (``path#chunk-k``; see
# importers.folder.split_source_file, a layer above this one).
CHUNK_MARK = "#chunk-"
TURN = "a conversation turn"
ENTRY = "a diary entry"


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


def _records(palace: Palace, rows: Iterable[int]) -> dict[int, str]:
    """Return {row: :data:`TURN` or :data:`ENTRY`}, in the order of ``rows``, for those whose
    drawer is a conversation turn's (a turn of ``palace.conversations`` names it, by the id
    it has or had before an edit) or a diary entry's (``palace.diaries``, which follows
    edits). A turn's drawer lies in the conversations wing, in the room of its conversation,
    so only those conversations are read. Cost: O(len(rows)) plus O(turns) of the
    conversations whose room a row of the conversations wing lies in."""
    store = palace.drawers
    rows = list(rows)
    turn_rows: set[int] = set()
    rooms = {store.room[r] for r in rows if store.wing[r] == TURN_WING}
    if rooms:  # the conversations section is not read for a merge of notes
        turns = palace.conversations
        for name in rooms:
            for tid in turns.by_conversation.get(name, ()):
                did = turns.turns[tid].drawer_id
                r = store.row_of.get(did)
                if r is None and did in store.aliases:
                    r = store.row_of.get(store.aliases[did])
                if r is not None:
                    turn_rows.add(r)
    entries = palace.diaries.entries
    out: dict[int, str] = {}
    for r in rows:
        if r in turn_rows:
            out[r] = TURN
        elif store.ids[r] in entries:
            out[r] = ENTRY
    return out


def _candidates(palace: Palace, wing: str | None, room: str | None) -> np.ndarray:
    """Return the rows dedup may merge: live, in the wing/room, not a turn or diary entry."""
    store = palace.drawers
    rows = [int(r) for r in np.flatnonzero(store.mask(wing, room))]
    records = _records(palace, rows)
    rows = [r for r in rows if store.source[r] != "conversation" and r not in records]
    return np.asarray(rows, dtype=np.intp)


def _source_of(palace: Palace, r: int) -> tuple[str, str] | None:
    """Return the file drawer ``r`` was cut from, as (wing, path), or None when it names no
    source file. Chunk k of an indexed file records ``path#chunk-k``; the wing is part of
    the file because an indexed path is relative to the folder of its wing."""
    store = palace.drawers
    path = store.source_file[r]
    if not path:
        return None
    base, mark, k = path.rpartition(CHUNK_MARK)
    return store.wing[r], (base if mark and k.isdigit() and base else path)


def near_duplicates(palace: Palace, threshold: float = THRESHOLD,
                    text_threshold: float = TEXT_THRESHOLD, wing: str | None = None,
                    room: str | None = None) -> list[Group]:
    """Return the groups of near-duplicate drawers, largest first, then by keeper id.

    Pairs come from two sources: equal text up to case and spacing (a dict of normalised
    text), and for drawers with vectors, each drawer's :data:`NEIGHBOURS` nearest others with
    cosine ≥ ``threshold`` whose word pairs overlap ≥ ``text_threshold`` (both must hold: two
    short notes can share a vector direction and say different things). Pairs are joined
    into groups (union-find); a group's keeper is its oldest drawer (then the most important,
    then the smallest id), the first to have said it. A group never holds two drawers of one
    source file (:func:`_source_of`): a pair that would join two groups holding drawers of
    the same file is left out, pairs taken in the order above (so of a file's repeated
    block, each copy may still group with another file's copy). Cost: one blocked matrix
    product over the candidates' whole-drawer vectors, O(n²·dim) flops in :data:`BLOCK`-row
    slices (``palazzo bench upkeep``, docs/benchmarks.md), plus a word-pair set per compared
    drawer.
    """
    store = palace.drawers
    rows = _candidates(palace, wing, room)
    parent = {int(r): int(r) for r in rows}
    files: dict[int, set[tuple[str, str]]] = {}  # group root -> the source files of its rows
    for r in parent:
        source = _source_of(palace, r)
        if source is not None:
            files[r] = {source}

    def find(r: int) -> int:
        while parent[r] != r:
            parent[r] = parent[parent[r]]
            r = parent[r]
        return r

    def union(a: int, b: int) -> bool:
        """Join the groups of ``a`` and ``b`` unless both hold a drawer of one file; return
        whether they are (now) one group."""
        ra, rb = find(a), find(b)
        if ra == rb:
            return True
        fa, fb = files.get(ra), files.get(rb)
        if fa and fb and not fa.isdisjoint(fb):
            return False
        root, child = min(ra, rb), max(ra, rb)
        parent[child] = root
        if fb is not None and (fa is None or len(fb) > len(fa)):
            fa, fb = fb, fa  # fold the smaller set into the larger
        files.pop(child, None)
        if fa is not None:
            if fb:
                fa |= fb
            files[root] = fa
        return True

    # equal texts: each row joins the first group of its text that takes it (a file's
    # repeated block starts a second group of that text, which other files' copies can join)
    seen: dict[str, list[int]] = {}
    for r in rows:
        key = " ".join(store.content[r].casefold().split())
        firsts = seen.setdefault(key, [])
        if not any(union(q, int(r)) for q in firsts):
            firsts.append(int(r))
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
                    if j <= i or sims[i - lo, j] < threshold - ROUNDING:
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
    if not args["drawers"]:  # the schema says so too; a caller that skips it is refused here
        raise ValidationError("merge_drawers needs at least one drawer to merge into the "
                              "keeper (drawers is empty)", field="drawers")
    keeper_row = palace.row(args["keeper"])
    keeper = store.ids[keeper_row]
    rows = []
    named = {keeper_row: ("keeper", args["keeper"])}
    for i, did in enumerate(args["drawers"]):
        r = palace.row(did)  # NotFound before anything changes
        if r == keeper_row:
            raise ValidationError(f"{did} is the keeper itself")
        if r not in named:
            rows.append(r)
            named[r] = (f"drawers[{i}]", did)
    refused = _records(palace, named)
    if refused:
        r, kind = next(iter(refused.items()))
        field, did = named[r]
        raise ValidationError(f"{field} {did} is {kind}, a record of what was said or written "
                              "at a time; it is never merged", field=field)
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
        for r in bad.tolist():  # no bad vector kept for a long turn's opening window
            store.set_vector(r, np.zeros(store.dim, np.float32))
        if palace.embedder is not None:
            palace.embed_rows(bad)
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
