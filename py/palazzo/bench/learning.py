"""Does retrieval learn from use? A repeated workload with feedback, and held-apart queries.

The seed claims pheromones make retrieval improve with use. This simulation measures it on a
LongMemEval file, honestly:

- one palace holds every distinct haystack session of the file (one drawer a session), so each
  question searches among all of them, not only its own haystack;
- the questions are split by a seeded shuffle into a *workload* (asked again every round) and
  a *held-apart* set (never asked, so never given feedback);
- each round asks every workload question through the ``search`` operation and scores the
  answers; then a simulated user, who saw the first ``shown`` results of each, marks the gold
  sessions among them useful (``pheromone_deposit`` with those drawer ids, reward 1, and the
  question as ``query``: the reward is remembered with it, :mod:`palazzo.stigmergy.trails`); gold
  sessions the user never saw get nothing. Then the palace decays one cycle (``decay_now``);
- so round 1 is the score before any feedback and the last entry the score after the last
  round; the held-apart set is scored before any feedback and after the last round, so any
  harm the learned term does to other queries shows up there.

Every weight runs on the same palace from zero pheromone; weight 0 is the control (no term).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from palazzo.bench.longmemeval import load, session_text
from palazzo.bench.metrics import summarise
from palazzo.embed import Embedder
from palazzo.ops import call
from palazzo.palace import Palace
from palazzo.stigmergy.trails import QueryTrails

SHOWN = 10
HEADLINE = ("recall_any@1", "recall_any@5", "ndcg_any@10")


def build_palace(questions: list[dict[str, Any]], embedder: Embedder | None
                 ) -> tuple[Palace, dict[str, list[str]]]:
    """Return a palace of every distinct haystack session and {drawer id: session ids}.

    Sessions with the same text share a drawer (ids are deterministic), so a drawer may stand
    for several session ids. Cost: one embedding per distinct session.
    """
    palace = Palace(embedder=embedder, clock=lambda: 0.0, similar_threshold=None)
    texts: dict[str, str] = {}
    for q in questions:
        for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True):
            texts.setdefault(sid, session_text(session))
    sessions_of: dict[str, list[str]] = {}
    for sid, text in texts.items():
        if text.strip():
            did, _ = palace.add_drawer("haystack", "sessions", text)
            sessions_of.setdefault(did, []).append(sid)
    return palace, sessions_of


def split(questions: list[dict[str, Any]], seed: int, workload_share: float = 0.5
          ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Return (workload, held-apart): a seeded shuffle cut at ``workload_share``."""
    order = list(range(len(questions)))
    random.Random(seed).shuffle(order)
    cut = round(len(order) * workload_share)
    return [questions[i] for i in order[:cut]], [questions[i] for i in order[cut:]]


def _ask(palace: Palace, q: dict[str, Any], weight: float, sessions_of: dict[str, list[str]]
         ) -> tuple[list[str], list[str]]:
    """Return (ranked session ids, ranked drawer ids) of the first SHOWN results for ``q``."""
    hits = call(palace, "search", {"query": q["question"], "limit": SHOWN,
                                  "pheromone": weight})["results"]
    drawers = [h["drawer_id"] for h in hits]
    return [sid for d in drawers for sid in sessions_of[d]], drawers


def _score(palace: Palace, questions: Sequence[dict[str, Any]], weight: float,
           sessions_of: dict[str, list[str]]) -> dict[str, float]:
    rows = [(_ask(palace, q, weight, sessions_of)[0], set(q["answer_session_ids"]))
            for q in questions]
    return summarise(rows)


def _reset(palace: Palace) -> None:
    s = palace.drawers.columns
    for kind in ("exploitation", "exploration"):
        s[kind][:] = 0.0
    palace.trails = QueryTrails()


def simulate(palace: Palace, sessions_of: dict[str, list[str]],
             workload: Sequence[dict[str, Any]], held: Sequence[dict[str, Any]],
             weight: float, rounds: int) -> dict[str, Any]:
    """Run ``rounds`` rounds of the workload with feedback at ``weight``; return the curves.

    Returns {"weight", "workload": [metrics per round, then after the last], "held_apart":
    {"before", "after"}, "deposits": feedback calls made}.
    """
    _reset(palace)
    held_before = _score(palace, held, weight, sessions_of)
    curve = []
    deposits = 0
    for _ in range(rounds):
        asked = [(_ask(palace, q, weight, sessions_of), set(q["answer_session_ids"]))
                 for q in workload]
        curve.append(summarise([(ranked, gold) for (ranked, _), gold in asked]))
        for q, ((_, drawers), gold) in zip(workload, asked, strict=True):
            useful = [d for d in drawers if gold & set(sessions_of[d])]
            if useful:
                call(palace, "pheromone_deposit", {"drawer_ids": useful, "reward": 1.0,
                                                   "query": q["question"]})
                deposits += 1
        call(palace, "decay_now", {"cycles": 1})
    curve.append(_score(palace, workload, weight, sessions_of))
    return {"weight": weight, "workload": curve,
            "held_apart": {"before": held_before,
                           "after": _score(palace, held, weight, sessions_of)},
            "deposits": deposits}


def run(path: Path, embedder: Embedder | None, weights: Sequence[float], rounds: int = 10,
        seed: int = 0, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Build the palace of ``path`` once and simulate every weight; return all curves."""
    questions = load(path)
    t0 = time.perf_counter()
    palace, sessions_of = build_palace(questions, embedder)
    built = time.perf_counter() - t0
    workload, held = split(questions, seed)
    runs = []
    for i, w in enumerate(weights):
        runs.append(simulate(palace, sessions_of, workload, held, float(w), rounds))
        if progress is not None:
            progress(i + 1, len(weights))
    return {
        "benchmark": "learning",
        "data": str(path),
        "embedder": None if embedder is None else embedder.name,
        "drawers": len(sessions_of),
        "questions": {"workload": len(workload), "held_apart": len(held)},
        "split_seed": seed,
        "rounds": rounds,
        "shown": SHOWN,
        "build_seconds": round(built, 2),
        "seconds": round(time.perf_counter() - t0, 2),
        "runs": runs,
        "table": [{"weight": r["weight"],
                   **{f"workload_first_{m}": r["workload"][0][m] for m in HEADLINE},
                   **{f"workload_last_{m}": r["workload"][-1][m] for m in HEADLINE},
                   **{f"held_before_{m}": r["held_apart"]["before"][m] for m in HEADLINE},
                   **{f"held_after_{m}": r["held_apart"]["after"][m] for m in HEADLINE}}
                  for r in runs],
    }
