"""Whether the event list's nearest event sentence is the right session's, on a LongMemEval file.

    zcat ../shared/bench/locomo_dev3.json.gz > /tmp/locomo_dev3.json
    PALAZZO_MINILM=dist/vendor/models/minilm/minilm.npz .venv/bin/python \\
        tests/bench/event_clauses.py /tmp/locomo_dev3.json --out bench-results/event-clauses.json

For every question with an event clause (:func:`palazzo.retrieval.events.clauses`), the
question's haystack is built as ``bench longmemeval`` builds it (a drawer a session, its user
turns, MiniLM), the clause is embedded, and each session's best event sentence's cosine to it
is read (:meth:`ChunkTable.best_event`, as the event list reads it). Printed: how many clauses,
where the right session's best sentence ranks among the sessions, for how many it has no event
sentence at all, the mean lead of the nearest wrong session where it wins, and how often the
right and the best wrong session reach a cosine of 0.3-0.6. Cost: the haystacks' embedding
(about 1-2 min for LoCoMo dev3 on 2 cores).

``--words B1,B2,...`` also scores each session by its event sentences directly (from
:func:`palazzo.memory.events.event_sentences`, embedded here): a sentence's cosine to the
clause plus B times the share of the clause's word weight (BM25's IDF over the haystack's
sessions) that the sentence holds, the session by its best sentence; printed per B: for how
many clauses the right session comes first and in the top 5. B 0 is the list as it is (the
same counts as above). A probe of matching an event by meaning and words, for issue 32.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))


def main(argv: list[str] | None = None) -> int:
    from palazzo.bench.longmemeval import load, session_text, session_time
    from palazzo.embed.registry import choose
    from palazzo.palace import Palace
    from palazzo.retrieval import events

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--words", default="", help="comma-separated word weights B to probe")
    ap.add_argument("--turns", default="user", choices=("user", "all"))
    args = ap.parse_args(argv)
    embedder = choose("minilm").embedder
    built: dict[tuple[str, ...], tuple[Palace, dict[int, str]]] = {}
    rows = []
    for q in load(args.data):
        found = events.clauses(q["question"])
        if not found:
            continue
        key = tuple(q["haystack_session_ids"])
        if key not in built:
            palace = Palace(embedder=embedder, clock=lambda: 0.0, similar_threshold=None)
            sid_of: dict[int, str] = {}
            for sid, session, stamp in zip(q["haystack_session_ids"], q["haystack_sessions"],
                                           q["haystack_dates"], strict=True):
                text = session_text(session, args.turns)
                if text.strip():
                    did, _ = palace.add_drawer("h", "s", text, created_at=session_time(stamp))
                    sid_of[palace.row(did)] = sid
            built[key] = (palace, sid_of)
        palace, sid_of = built[key]
        gold = set(q["answer_session_ids"])
        n = palace.drawers.size
        for clause in found:
            best = palace.drawers.chunks.best_event(embedder.embed([clause])[0], n, 0.0)
            order = [int(r) for r in np.argsort(-best)]
            right = [best[r] for r in range(n) if sid_of.get(r) in gold]
            wrong = [best[r] for r in range(n) if sid_of.get(r) not in gold]
            rank = next((k + 1 for k, r in enumerate(order) if sid_of.get(r) in gold), None)
            rows.append({"question": q["question"], "type": q["question_type"],
                         "clause": clause, "right_rank": rank,
                         "right_cosine": float(max(right)) if right else None,
                         "wrong_cosine": float(max(wrong)) if wrong else None})
    has = [r for r in rows if r["right_cosine"] is not None and math.isfinite(r["right_cosine"])]
    lost = [r for r in has if r["right_rank"] != 1]
    summary = {
        "clauses": len(rows), "by_type": dict(Counter(r["type"] for r in rows)),
        "right_has_event_sentences": len(has),
        "right_rank": dict(sorted(Counter(min(r["right_rank"] or 99, 6) for r in rows).items())),
        "mean_lead_of_wrong_where_it_wins": round(float(np.mean(
            [r["wrong_cosine"] - r["right_cosine"] for r in lost])), 3) if lost else None,
        "reach": {str(c): {"right": sum(r["right_cosine"] >= c for r in has),
                           "wrong": sum((r["wrong_cosine"] or -1) >= c for r in rows)}
                  for c in (0.3, 0.4, 0.5, 0.6)}}
    if args.words:
        summary["words"] = words_probe(args.data, embedder, args.turns,
                                       [float(b) for b in args.words.split(",")])
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"summary": summary, "clauses": rows}, indent=1))
    return 0


def words_probe(path: Path, embedder, turns: str, weights: list[float]) -> dict[str, Any]:
    """Return, per word weight B, how many clauses' right session comes first and in the
    top 5 when a sentence scores its cosine plus B times its share of the clause's IDF."""
    from palazzo.bench.longmemeval import load, session_text
    from palazzo.memory.events import event_sentences
    from palazzo.retrieval import events
    from palazzo.retrieval.bm25 import tokenize

    hits: Counter[tuple[float, str]] = Counter()
    haystacks: dict[tuple[str, ...], Any] = {}
    clauses = 0
    for q in load(path):
        found = events.clauses(q["question"])
        if not found:
            continue
        key = tuple(q["haystack_session_ids"])
        if key not in haystacks:
            texts = [session_text(s, turns) for s in q["haystack_sessions"]]
            sentences = [[x for x, _ in event_sentences(t)] if t.strip() else [] for t in texts]
            flat = [x for ss in sentences for x in ss]
            vectors = embedder.embed(flat) if flat else np.zeros((0, 384), np.float32)
            df: Counter[str] = Counter()
            for t in texts:
                df.update(set(tokenize(t)))
            words = [[set(tokenize(x)) for x in ss] for ss in sentences]
            haystacks[key] = (sentences, words, vectors, df, len(texts))
        sentences, words, vectors, df, n = haystacks[key]
        gold = set(q["answer_session_ids"])
        for clause in found:
            clauses += 1
            cv = embedder.embed([clause])[0]
            terms = set(tokenize(clause))
            idf = {w: max(math.log((n + 1) / (df.get(w, 0) + 0.5)), 0.0) for w in terms}
            total = sum(idf.values()) or 1.0
            for b in weights:
                scores, k = [], 0
                for sid, ws in zip(q["haystack_session_ids"], words, strict=True):
                    best = -math.inf
                    for w in ws:
                        share = sum(idf[t] for t in terms & w) / total
                        best = max(best, float(vectors[k] @ cv) + b * share)
                        k += 1
                    scores.append((best, sid))
                scores.sort(key=lambda s: -s[0])
                rank = next((i + 1 for i, (_, s) in enumerate(scores) if s in gold), None)
                hits[(b, "first")] += rank == 1
                hits[(b, "top5")] += rank is not None and rank <= 5
    return {"clauses": clauses, "by_weight": {str(b): {"first": hits[(b, "first")],
                                                       "top5": hits[(b, "top5")]}
                                              for b in weights}}


if __name__ == "__main__":
    raise SystemExit(main())
