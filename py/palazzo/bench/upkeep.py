"""``palazzo bench upkeep``: dedup, repair and wake-up on a generated palace of real size.

The drawers are the messages of :func:`palazzo.bench.exportgen.make_export` (the scale
benchmark's generator) added as plain drawers (twelve wings, one room a conversation),
plus planted near-duplicates of known kinds: an exact copy in another room,
the same text with its case and spacing changed, and the text with one word in twenty
replaced. Then it times ``dedup``, ``summarize`` (every room, then again from the cache),
the AAAK export view, ``repair`` (a dry run over a sound palace, then over one
with broken derived parts it must find) and ``wake_up`` at two budgets, and reports which
planted pairs ``dedup`` found (recall) and how many other groups it reported (the generator
repeats some short messages verbatim: those are duplicates too, not errors, so they are
counted apart, with examples). Drawers are extracted as they are added (entities, facts),
so the wake-up's fact sections are filled as a user's would be.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from palazzo.bench.exportgen import conversation_texts
from palazzo.core.model import EdgeKind
from palazzo.ops import call
from palazzo.palace import Palace

KINDS = ("copy", "case", "word")
BATCH = 1000


def _texts(messages: int, seed: int) -> list[tuple[str, str, str, float]]:
    """Return (wing, room, text, time) for each generated message with text."""
    return [row for rows in conversation_texts(messages, seed) for row in rows]


def _variant(kind: str, text: str, rng: random.Random) -> str | None:
    if kind == "copy":
        return text
    if kind == "case":
        return "  ".join(text.upper().split())
    words = text.split()
    if len(words) < 20:
        return None
    for i in rng.sample(range(len(words)), max(1, len(words) // 20)):
        words[i] = "zyxwv"
    return " ".join(words)


def _timed(palace: Palace, name: str, args: dict[str, Any]) -> tuple[dict[str, Any], float]:
    t = time.perf_counter()
    out = call(palace, name, args)
    return out, round(time.perf_counter() - t, 4)


def run(messages: int, embedder: Any, *, seed: int = 0, planted: int = 200,
        threshold: float | None = None, progress: Any = None) -> dict[str, Any]:
    """Return the benchmark's result (see the module docstring) for a palace made of
    ``messages`` generated messages and ``planted`` planted duplicates."""
    rng = random.Random(seed)
    rows = _texts(messages, seed)
    palace = Palace(embedder=embedder)
    plants: list[tuple[str, int]] = []
    for kind, i in zip((KINDS * planted)[:planted], rng.sample(range(len(rows)), planted),
                       strict=True):
        text = _variant(kind, rows[i][2], rng)
        if text is not None:
            plants.append((kind, i))
            rows.append(("planted", f"p{len(plants):04d}", text, rows[i][3] + 1))
    t = time.perf_counter()
    ids: list[str] = []
    for lo in range(0, len(rows), BATCH):
        out = call(palace, "batch", {"calls": [
            {"name": "add_drawer", "args": {"wing": w, "room": r, "content": text,
                                            "created_at": when}}
            for w, r, text, when in rows[lo:lo + BATCH]]})
        ids += [res["drawer_id"] for res in out["results"]]
        if progress:
            progress(min(lo + BATCH, len(rows)), len(rows))
    build_s = round(time.perf_counter() - t, 2)
    kg = call(palace, "kg_stats", {})

    found, dedup_s = _timed(palace, "dedup", {"limit": 10_000, **(
        {"threshold": threshold} if threshold is not None else {})})
    group_of: dict[str, int] = {}
    for g, group in enumerate(found["groups"]):
        for m in [group["keeper"], *group["merge"]]:
            group_of[m["drawer_id"]] = g
    base = len(rows) - len(plants)
    hit = {k: 0 for k in KINDS}
    total = {k: 0 for k in KINDS}
    planted_groups = set()
    for n, (kind, i) in enumerate(plants):
        total[kind] += 1
        a, b = ids[i], ids[base + n]
        if a in group_of and group_of.get(a) == group_of.get(b):
            hit[kind] += 1
            planted_groups.add(group_of[a])

    sound, repair_s = _timed(palace, "repair", {"dry_run": True})
    # break derived parts the way a crash or a bug would, and see repair find them
    store = palace.drawers
    live = store.live_rows()
    broken = [int(r) for r in rng.sample(list(live), 10)]
    for r in broken[:5]:
        palace.text_index.remove(r)
    store.vectors[broken[5:]] = np.nan
    palace.edges.add(EdgeKind.RELATES_TO, store.ids[broken[0]], "drawer_gone")
    damaged, repair_fix_s = _timed(palace, "repair", {})
    after, _ = _timed(palace, "repair", {"dry_run": True})

    wake = {}
    for budget in (800, 4000):
        out, s = _timed(palace, "wake_up", {"budget": budget})
        wake[str(budget)] = {"seconds": s, "tokens": out["tokens"], "lines": len(out["lines"]),
                             "sections": sorted({ln["section"] for ln in out["lines"]})}
    first, summarize_s = _timed(palace, "summarize", {"limit": 1000})
    _, summarize_cached_s = _timed(palace, "summarize", {"limit": 1000})
    view, aaak_s = _timed(palace, "export", {"format": "aaak"})
    text_chars = sum(len(store.content[r]) for r in store.live_rows())
    return {
        "benchmark": "upkeep",
        "summaries": {"rooms": first["count"], "seconds": summarize_s,
                      "seconds_cached": summarize_cached_s,
                      "chars": sum(len(r["summary"]) for r in first["rooms"])},
        "aaak": {"seconds": aaak_s, "chars": len(view["text"]), "text_chars": text_chars},
        "messages": messages, "seed": seed,
        "embedder": getattr(embedder, "name", None), "drawers": len(palace.drawers),
        "build_seconds": build_s,
        "extracted": {"entities": kg["entities"], "facts": kg["triples"]},
        "dedup": {"seconds": dedup_s, "threshold": threshold, "groups": found["count"],
                  "other_examples": [
                      [found["groups"][g]["keeper"]["preview"][:80],
                       found["groups"][g]["merge"][0]["preview"][:80],
                       found["groups"][g]["merge"][0]["cosine"]]
                      for g in range(len(found["groups"])) if g not in planted_groups][:8],
                  "drawers_to_merge": found["drawers_to_merge"],
                  "planted_found": hit, "planted": total,
                  "other_groups": found["count"] - len(planted_groups)},
        "repair": {"sound_seconds": repair_s, "sound_problems": sound["problems"],
                   "damaged_seconds": repair_fix_s, "damaged_problems": damaged["problems"],
                   "fixed": damaged["fixed"], "problems_after": after["problems"]},
        "wake_up": wake,
    }
