"""A palace rebuilt around the damaged pages of its snapshot.

When a snapshot's pages fail their checksums (:func:`palazzo.formats.snapshot.open_snapshot`
names them) and no older generation holds what it held, the pages that still verify are
worth more than nothing: a flipped byte among a 20,000-drawer palace's vectors should not cost
a single drawer. :func:`salvage` keeps every part whose own bytes verify and rebuilds or drops
the rest, by what the part is:

- derived data is rebuilt or left to be made again: the word index (from the texts), the
  vectors and chunk vectors of the rows hit (those drawers are embedded again), the node
  pheromones (reset, as they come from use);
- a drawer whose own bytes are hit — its id, text, key, wing, room, closet or creation time —
  is lost, and named when its id is readable; a hit in its source or source file clears
  that field, one in its importance or use counters resets them;
- an edge whose row or either end is hit, or that touches a lost drawer, is dropped (the
  ``repair`` operation remakes the hierarchy and similarity links that follow from the
  drawers);
- a JSON section (knowledge graph, conversations, provenance, diaries) with a damaged page
  is lost whole and left empty.

Nothing is invented: a field that cannot be read is emptied or reset to what a new drawer
gets, never guessed. The header itself (names, wings, rooms, the value tables) has one
checksum; when it fails there is nothing to rebuild around. Cost: O(drawers + edges + chunks)
plus tokenising every drawer when the word index is rebuilt.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from palazzo.core.columns import EDGE_FLOATS, join_texts
from palazzo.errors import PalazzoError
from palazzo.formats import snapshot
from palazzo.memory.conversation import Conversations
from palazzo.memory.diary import Diaries
from palazzo.memory.kg import KnowledgeGraph
from palazzo.provenance.kernel import Provenance
from palazzo.retrieval.bm25 import BM25Index

# Drawer columns whose damage loses the drawer (what it is), and those that only reset.
IDENTITY = ("ids", "content", "key")
PLACE = ("wing", "room", "closet")
CLEARED = ("source", "source_file")
RESET = {"importance": 0.5, "exploitation": 0.0, "exploration": 0.0}
EMPTY = {"kg": KnowledgeGraph, "conversations": Conversations, "provenance": Provenance,
         "diaries": Diaries}  # what a lost section becomes


def _rows(ranges: list[tuple[int, int]], row_bytes: int, n: int) -> set[int]:
    """Return the rows of an array of ``n`` rows of ``row_bytes`` that byte ranges hit."""
    out: set[int] = set()
    for lo, hi in ranges:
        out.update(range(lo // row_bytes, min(n, (hi - 1) // row_bytes + 1)))
    return out


def _text_rows(a: dict[str, np.ndarray], bad: dict[str, list[tuple[int, int]]], name: str,
               n: int) -> set[int]:
    """Return the rows of text column ``name`` (``.offsets`` and ``.block``) whose offsets or
    bytes lie in damaged pages."""
    off = a[f"{name}.offsets"]
    hit: set[int] = set()
    for i in _rows(bad.get(f"{name}.offsets", []), off.itemsize, len(off)):
        hit.update(r for r in (i - 1, i) if 0 <= r < n)
    ranges = bad.get(f"{name}.block", [])
    if ranges:
        starts, ends = off[:-1].astype(np.int64), off[1:].astype(np.int64)
        for lo, hi in ranges:
            hit.update(np.flatnonzero((starts < hi) & (ends > lo)).tolist())
    return hit


def _rewrite(a: dict[str, np.ndarray], name: str, keep: list[bool]) -> None:
    """Replace text column ``name`` by one whose rows not kept are empty (their bytes, which
    may not even be UTF-8, are never decoded)."""
    off, block = a[f"{name}.offsets"], a[f"{name}.block"].tobytes()
    pieces = [block[int(off[r]):int(off[r + 1])] if k else b"" for r, k in enumerate(keep)]
    a[f"{name}.offsets"], a[f"{name}.block"] = join_texts(pieces)


def salvage(opened: snapshot.Opened, make_palace: Callable[..., Any]
            ) -> tuple[Any, dict[str, Any]]:
    """Return (the palace of damaged snapshot ``opened``'s parts that verify, what was lost
    or reset: {"drawers_lost": ids (or "row N"), "drawers_lost_count", "vectors_dropped",
    "edges_dropped", "sections_lost", "fields_reset", "rebuilt"}). ``opened`` is a
    SnapshotDamaged's ``partial``; see the module docstring for what happens to each part."""
    bad = opened.bad
    a = {k: np.array(v) for k, v in opened.arrays.items()}  # ours to change
    meta = {**opened.meta, "drawers": {**opened.meta["drawers"], "tables": dict(
        opened.meta["drawers"]["tables"])}}
    n = len(a["d.alive"])
    report: dict[str, Any] = {"drawers_lost": [], "drawers_lost_count": 0,
                              "vectors_dropped": 0, "edges_dropped": 0, "sections_lost": [],
                              "fields_reset": [], "rebuilt": []}
    lost: set[int] = set()
    for col in IDENTITY:
        lost |= _text_rows(a, bad, f"d.{col}", n)
    for col in (*PLACE, "created_at"):
        lost |= _rows(bad.get(f"d.{col}", []), a[f"d.{col}"].itemsize, n)
    ids_ok = not _text_rows(a, bad, "d.ids", n)
    alive = a["d.alive"].astype(bool)
    hit_alive = _rows(bad.get("d.alive", []), 1, n)
    if hit_alive:  # whether a row is alive follows from its id (empty for a dead row)
        off = a["d.ids.offsets"]
        for r in hit_alive:
            if r in lost:
                continue
            alive[r] = int(off[r + 1]) > int(off[r])
    lost &= set(np.flatnonzero(alive).tolist()) | hit_alive
    names = _ids(a, n) if ids_ok else None
    for r in sorted(lost):
        if alive[r]:
            report["drawers_lost"].append(names[r] if names and names[r] else f"row {r}")
    report["drawers_lost_count"] = len(report["drawers_lost"])
    alive[list(lost)] = False
    keep = alive.tolist()
    for col in IDENTITY:
        if lost or bad.get(f"d.{col}.offsets") or bad.get(f"d.{col}.block"):
            _rewrite(a, f"d.{col}", keep)
    for col in (*PLACE, *CLEARED):
        codes = a[f"d.{col}"]
        hit = _rows(bad.get(f"d.{col}", []), codes.itemsize, n)
        table = list(meta["drawers"]["tables"][col])
        if col in CLEARED and hit - lost:
            if None not in table:
                table.append(None)
            report["fields_reset"].append(f"{col} of {len(hit - lost)} drawer(s)")
        free_code = table.index(None) if None in table else 0
        for r in hit | lost:
            codes[r] = free_code
        codes[(codes < 0) | (codes >= max(1, len(table)))] = free_code
        meta["drawers"]["tables"][col] = table
    for col, value in RESET.items():
        hit = _rows(bad.get(f"d.{col}", []), 8, n) - lost
        a[f"d.{col}"][list(hit)] = value
        if hit:
            report["fields_reset"].append(f"{col} of {len(hit)} drawer(s)")
    hit = _rows(bad.get("d.accessed_at", []), 8, n)
    a["d.accessed_at"][list(hit)] = a["d.created_at"][list(hit)]
    a["d.alive"] = alive
    a["d.free"] = np.asarray(sorted(set(np.flatnonzero(~alive).tolist())), dtype=np.int64)
    _vectors(a, bad, lost, report)
    _edges(a, bad, set(report["drawers_lost"]), report)
    if any(k.startswith("n.") for k in bad):
        for k in [k for k in a if k.startswith("n.")]:
            del a[k]
        report["fields_reset"].append("node pheromones")
    for name in snapshot.SECTIONS:
        if bad.get(f"s.{name}"):
            del a[f"s.{name}"]
            report["sections_lost"].append(name)
    rebuild = bool(lost) or any(k.startswith("t.") for k in bad) or \
        bool(hit_alive) or any(bad.get(f"d.{c}.offsets") for c in IDENTITY)
    if rebuild:
        _empty_index(a, meta)
    palace = snapshot.palace_of(snapshot.Opened(meta, a, opened.store), make_palace)
    if rebuild:
        palace.text_index = snapshot._retokenised(palace, palace.text_index)
        palace.text_index.retokenised = False
        report["rebuilt"].append("word index")
    _sections(palace, a, report)
    return palace, report


def _sections(palace: Any, a: dict[str, np.ndarray], report: dict[str, Any]) -> None:
    """Read the JSON sections now, fitting them to what was kept: the facts' links made
    again (some edges may be gone), diary entries of lost drawers dropped; a section that
    still does not fit is lost (and left empty) rather than failing when first used."""
    for name in snapshot.SECTIONS:
        raw = a.get(f"s.{name}")
        if raw is None:
            continue
        where = f"snapshot.{name}"
        try:
            value = json.loads(raw.tobytes())
            if name == "kg":
                made = KnowledgeGraph.from_json(palace, value, where, relink=True)
            elif name == "diaries":
                kept = [e for e in value if isinstance(e, dict) and
                        e.get("drawer_id") in palace.drawers.row_of]
                if len(kept) < len(value):
                    report["fields_reset"].append(f"{len(value) - len(kept)} diary "
                                                  "entr(y/ies) of lost drawers")
                made = Diaries.from_json(palace, kept, where)
            else:
                made = snapshot._make_section(palace, name, value)
        except (PalazzoError, ValueError, TypeError, KeyError) as err:
            report["sections_lost"].append(name)
            report["fields_reset"].append(f"{name}: {err}")
            made = EMPTY[name](palace)
        setattr(palace, name, made)


def _ids(a: dict[str, np.ndarray], n: int) -> list[str]:
    off, block = a["d.ids.offsets"], a["d.ids.block"].tobytes()
    return [block[int(off[r]):int(off[r + 1])].decode("utf-8", "replace") for r in range(n)]


def _vectors(a: dict[str, np.ndarray], bad: dict[str, list[tuple[int, int]]], lost: set[int],
             report: dict[str, Any]) -> None:
    """Drop the vectors (and chunks) of rows whose vector bytes are hit or that are lost; a
    damaged chunk index drops every chunk and the vectors of the rows that had any."""
    n = len(a["d.alive"])
    vec = a["d.vectors"]
    rows = set(lost)
    if vec.ndim == 2 and vec.shape[1]:
        rows |= _rows(bad.get("d.vectors", []), vec.shape[1] * vec.itemsize, n)
    rows |= _rows(bad.get("d.has_vector", []), 1, n)
    m = len(a["c.alive"])
    structure = ("c.drawer_row", "c.alive", "c.kind", "c.free", "c.of_row.rows",
                 "c.of_row.counts", "c.of_row.slots")
    if any(bad.get(k) for k in structure):
        owner = set() if bad.get("c.drawer_row") else set(a["c.drawer_row"].tolist())
        rows |= set(range(n)) if bad.get("c.drawer_row") else owner
        for k in ("c.vectors", "c.drawer_row", "c.alive", "c.kind"):
            a[k] = a[k][:0]
        for k in ("c.free", "c.of_row.rows", "c.of_row.counts", "c.of_row.slots"):
            a[k] = np.zeros(0, dtype=np.int64)
    else:
        cvec = a["c.vectors"]
        if cvec.ndim == 2 and cvec.shape[1] and m:
            slots = _rows(bad.get("c.vectors", []), cvec.shape[1] * cvec.itemsize, m)
            rows |= {int(a["c.drawer_row"][s]) for s in slots}
        _drop_chunks(a, rows)
    rows &= set(range(n))
    had = a["d.has_vector"].astype(bool)
    report["vectors_dropped"] = int(sum(bool(had[r]) for r in rows))
    had[list(rows)] = False
    a["d.has_vector"] = had
    if vec.ndim == 2:
        vec[list(rows)] = 0.0


def _drop_chunks(a: dict[str, np.ndarray], rows: set[int]) -> None:
    """Free every chunk slot of ``rows``: dead, zeroed, on the free list, out of ``of_row``."""
    if not rows:
        return
    counts, slots = a["c.of_row.counts"].tolist(), a["c.of_row.slots"].tolist()
    keep_rows, keep_counts, keep_slots, freed = [], [], [], []
    at = 0
    for row, count in zip(a["c.of_row.rows"].tolist(), counts, strict=True):
        mine = slots[at:at + count]
        at += count
        if row in rows:
            freed += mine
        else:
            keep_rows.append(row)
            keep_counts.append(count)
            keep_slots += mine
    a["c.alive"][freed] = False
    a["c.vectors"][freed] = 0.0
    a["c.free"] = np.asarray(sorted({*a["c.free"].tolist(), *freed}), dtype=np.int64)
    a["c.of_row.rows"] = np.asarray(keep_rows, dtype=np.int64)
    a["c.of_row.counts"] = np.asarray(keep_counts, dtype=np.int64)
    a["c.of_row.slots"] = np.asarray(keep_slots, dtype=np.int64)


def _edges(a: dict[str, np.ndarray], bad: dict[str, list[tuple[int, int]]], lost: set[str],
           report: dict[str, Any]) -> None:
    """Drop the edges whose row or an end is hit, or that touch a lost drawer."""
    e = len(a["e.alive"])
    dead: set[int] = set()
    for col in ("e.alive", "e.kind", "e.src", "e.dst", *(f"e.{c}" for c in EDGE_FLOATS)):
        dead |= _rows(bad.get(col, []), a[col].itemsize, e)
    nodes_n = len(a["e.nodes.offsets"]) - 1
    hit_nodes = _text_rows(a, bad, "e.nodes", nodes_n)
    names = _nodes(a, nodes_n)
    gone = hit_nodes | {i for i, name in enumerate(names) if name in lost}
    src, dst = a["e.src"], a["e.dst"]
    for i in range(e):
        s, d = int(src[i]), int(dst[i])
        if not (0 <= s < nodes_n and 0 <= d < nodes_n) or s in gone or d in gone:
            dead.add(i)
    kind = a["e.kind"]
    for i in dead:
        if a["e.alive"][i]:
            report["edges_dropped"] += 1
        a["e.alive"][i] = False
        src[i] = dst[i] = 0
        kind[i] = 0
    if hit_nodes:
        _rewrite(a, "e.nodes", [i not in hit_nodes for i in range(nodes_n)])


def _nodes(a: dict[str, np.ndarray], n: int) -> list[str]:
    off, block = a["e.nodes.offsets"], a["e.nodes.block"].tobytes()
    return [block[int(off[r]):int(off[r + 1])].decode("utf-8", "replace") for r in range(n)]


def _empty_index(a: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Put an empty word index with the snapshot's settings in place of the stored one (to
    be rebuilt from the texts once the palace is read)."""
    scalars = meta["bm25"]
    empty = BM25Index(scalars.get("k1", 1.5), scalars.get("b", 0.75)).state()
    for k in [k for k in a if k.startswith("t.")]:
        del a[k]
    new_scalars = {}
    for name, value in empty.items():
        if isinstance(value, np.ndarray):
            a[f"t.{name}"] = value
        elif name == "vocab":
            a["t.vocab.offsets"], a["t.vocab.block"] = join_texts(
                [v.encode("utf-8") for v in value])
        else:
            new_scalars[name] = scalars.get(name, value) if name in (
                "k1", "b", "stopwords", "stemmer", "hangul") else value
    meta["bm25"] = new_scalars
