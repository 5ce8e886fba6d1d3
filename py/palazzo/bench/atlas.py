"""What the atlas costs on a realistic conversation history: ``palazzo bench atlas``.

The history is :func:`palazzo.bench.exportgen.make_export`'s generated ChatGPT export (the
input of ``palazzo bench scale``: conversations from a few messages to a few hundred, edited
questions and regenerated answers as branches), read into messages with parents, with a
seeded phase and salience a turn and, now and then, a question that answers both a
regenerated answer and the answer before it (a merge), and added through the
``import_conversation`` operation. For each anchor count it measures, on anchors evenly
spaced over the palace's turns (as the ``atlas`` operation chooses them) and over the turns of
the longest conversation, where slices overlap:

- slicing the anchors one by one (``slice`` each) and in one batch (``slice_many``), and
  that the two give the same bundles;
- the overlap matrix, frequencies and bridge scores (one sparse product) and betweenness
  centrality (exact or sampled, as :func:`palazzo.provenance.atlas.betweenness` decides);
- the whole ``atlas`` operation (summary) and the atlas bundle's canonical bytes, and that a
  second run gives the same content hash;
- a budgeted batch (``--budget`` tokens a slice, which must hold every anchor turn: a
  budget below an anchor's own size is an error): time, turns and tokens a slice;
- the atlas under a narrow policy (:data:`NARROW`: two hops, no siblings) on the longest
  conversation, where slices touch at single turns and bridge turns appear (under the
  default policy's eight hops, slices that overlap share many turns, so no one turn holds
  two of them together and every bridge score is 0).

Wall times are the best of ``repeat`` runs (perf_counter). The same arguments give the same
palace and the same atlases.
"""

from __future__ import annotations

import os
import platform
import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from palazzo.bench.exportgen import make_export
from palazzo.memory.conversation import PHASES
from palazzo.ops import call
from palazzo.palace import Palace
from palazzo.provenance import atlas as atlas_mod
from palazzo.provenance.policy import SlicePolicyV1

USER_PHASES = ("planning", "debugging", "exploration")
ANSWER_PHASES = ("synthesis", "consolidation", "exploration", "debugging")
MERGE_CHANCE = 0.5  # of a question after a regenerated answer: it answers both
NARROW = SlicePolicyV1("narrow", max_radius=2, include_siblings=False)


def _messages(conv: dict[str, Any], rng: random.Random) -> list[dict[str, Any]]:
    """Return one exported conversation as import_conversation messages with parents (list
    indices). Hidden, tool and code nodes are left out, their children hung on the nearest
    message above them, as the chat importer does."""
    mapping = conv["mapping"]
    index: dict[str, int] = {}  # node id -> message index
    out: list[dict[str, Any]] = []
    root = next(n for n in mapping.values() if n["parent"] is None)
    stack: list[tuple[str, int | None]] = [(c, None) for c in reversed(root["children"])]
    while stack:
        nid, above = stack.pop()
        node = mapping[nid]
        msg = node["message"]
        parts = (msg or {}).get("content", {}).get("parts") or []
        role = (msg or {}).get("author", {}).get("role")
        text = next((p for p in parts if isinstance(p, str) and p.strip()), None)
        here = above
        if role in ("user", "assistant") and text:
            m: dict[str, Any] = {
                "role": role, "content": text, "timestamp": msg["create_time"],
                "phase": rng.choice(USER_PHASES if role == "user" else ANSWER_PHASES),
                "salience": round(rng.random(), 3)}
            m["parents"] = [] if above is None else [above]
            here = index[nid] = len(out)
            out.append(m)
        stack.extend((c, here) for c in reversed(node["children"]))
    # A question under a regenerated answer sometimes answers both versions (a merge).
    children: dict[int, list[int]] = {}
    for i, m in enumerate(out):
        for p in m["parents"]:
            children.setdefault(p, []).append(i)
    for i, m in enumerate(out):
        if m["role"] != "user" or len(m["parents"]) != 1:
            continue
        answer = m["parents"][0]
        up = out[answer]["parents"]
        others = [s for s in children.get(up[0], []) if s != answer and s < i] if up else []
        if others and rng.random() < MERGE_CHANCE:
            m["parents"] = sorted([answer, others[0]])
    for m in out:
        if not m["parents"]:
            del m["parents"]  # a root (import_conversation's default would chain it)
    return out


def build(messages: int, seed: int = 0) -> tuple[Palace, dict[str, Any]]:
    """Return (a palace holding the generated history of about ``messages`` messages, what it
    holds). Cost: the generation plus one ``import_conversation`` a conversation."""
    conversations, stats = make_export(messages, seed)
    rng = random.Random(seed)
    palace = Palace(clock=lambda: 0.0, extract_on_add=False)
    t = time.perf_counter()
    for i, conv in enumerate(conversations):
        msgs = _messages(conv, rng)
        if msgs:
            call(palace, "import_conversation", {"conversation": f"c{i:04d}",
                                                 "messages": msgs})
    seconds = time.perf_counter() - t
    conv = palace.conversations
    sizes = sorted((len(v) for v in conv.by_conversation.values()), reverse=True)
    return palace, {"messages": stats.messages, "turns": len(conv),
                    "conversations": len(sizes), "longest_conversation": sizes[0],
                    "merges": sum(1 for t in conv.turns.values() if len(t.parents) > 1),
                    "branch_points": sum(1 for c in conv.children.values() if len(c) > 1),
                    "characters": stats.characters, "import_seconds": round(seconds, 3)}


def _best(fn: Callable[[], Any], repeat: int) -> tuple[Any, float]:
    """Return (the last result, the best wall time of ``repeat`` runs in seconds)."""
    best = float("inf")
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, round(best, 4)


def _spaced(pool: list[str], n: int) -> list[str]:
    return pool if len(pool) <= n else [pool[i * len(pool) // n] for i in range(n)]


def measure(palace: Palace, anchors: list[str], budget: int, repeat: int) -> dict[str, Any]:
    """Return the figures of one anchor set (see the module docstring)."""
    prov = palace.provenance
    one, one_s = _best(lambda: [prov.slice(a, with_content=False) for a in anchors], repeat)
    batch, batch_s = _best(lambda: prov.slice_many(anchors, with_content=False), repeat)
    same = [b.to_dict() for b in one] == [b.to_dict() for b in batch]
    sets = [tuple(sorted(t.id for t in b.turns)) for b in batch]
    _, overlap_s = _best(lambda: (atlas_mod.overlap_matrix(sets),
                                  atlas_mod.turn_frequency(sets),
                                  atlas_mod.bridge_scores(sets)), repeat)
    union = sorted(set().union(*sets))
    (_, how), between_s = _best(lambda: atlas_mod.betweenness(palace.conversations, union),
                                repeat)
    summary, atlas_s = _best(lambda: call(palace, "atlas", {"anchors": anchors}), repeat)
    whole = atlas_mod.build_atlas(prov, anchors)
    again = atlas_mod.build_atlas(prov, anchors)
    cut, budget_s = _best(lambda: prov.slice_many(anchors, with_content=False, budget=budget),
                          repeat)
    free_turns = [len(b.turns) for b in batch]
    cut_turns = [len(b.turns) for b in cut]
    return {
        "anchors": len(anchors),
        "slice_one_by_one_s": one_s, "slice_batch_s": batch_s,
        "batch_speedup": round(one_s / batch_s, 2) if batch_s else None,
        "batch_equals_one_by_one": same,
        "overlap_frequency_bridges_s": overlap_s, "betweenness_s": between_s,
        "atlas_operation_s": atlas_s,
        "turns_per_slice_mean": round(float(np.mean(free_turns)), 1),
        "union_turns": len(union), "atlas_links": how["links"],
        "betweenness_exact": how["exact"], "betweenness_samples": how["samples"],
        "overlap_mean": summary["overlap"]["mean"],
        "overlapping_pairs": summary["overlap"]["overlapping_pairs"],
        "bridge_turns": summary["bridges"],
        "bundle_bytes": len(whole.canonical()), "deterministic": whole.content_hash ==
        again.content_hash,
        "budget": budget, "budget_batch_s": budget_s,
        "budget_turns_per_slice_mean": round(float(np.mean(cut_turns)), 1),
        "budget_tokens_per_slice_max": max(b.budget.used for b in cut),
    }


def run(messages: int = 3000, anchors: tuple[int, ...] = (50, 200), seed: int = 0,
        budget: int = 2000, repeat: int = 3) -> dict[str, Any]:
    """Return the benchmark's result: the palace built and, for each anchor count, the
    figures on anchors spread over the palace and over its longest conversation."""
    palace, built = build(messages, seed)
    conv = palace.conversations
    every = list(conv.turns)
    longest = max(conv.by_conversation, key=lambda c: (len(conv.by_conversation[c]), c))
    pools = {"palace": every, "longest_conversation": list(conv.by_conversation[longest])}
    runs = [{"pool": name, **measure(palace, _spaced(pool, n), budget, repeat)}
            for n in anchors for name, pool in pools.items()]
    palace.provenance.register_policy(NARROW)
    narrow = []
    for n in anchors:
        chosen = _spaced(pools["longest_conversation"], n)
        out, seconds = _best(lambda c=chosen: call(palace, "atlas", {
            "anchors": c, "policy": NARROW.name, "top": 3}), repeat)
        narrow.append({"pool": "longest_conversation", "policy": NARROW.name,
                       "anchors": len(chosen), "atlas_operation_s": seconds,
                       "union_turns": out["turns"], "overlap_mean": out["overlap"]["mean"],
                       "overlapping_pairs": out["overlap"]["overlapping_pairs"],
                       "bridge_turns": out["bridges"],
                       "top_bridge": out["bridging"][0] if out["bridging"] else None})
    import networkx

    return {"benchmark": "atlas", "seed": seed, "repeat": repeat, "palace": built,
            "policy": "default", "phases": list(PHASES), "runs": runs, "narrow": narrow,
            "machine": {"cpu_count": os.cpu_count(), "python": platform.python_version(),
                        "numpy": np.__version__, "networkx": networkx.__version__,
                        "platform": platform.platform()}}
