"""LongMemEval retrieval benchmark: one fresh palace per question, one drawer per session.

Reads LongMemEval's own field names (question_id, question, haystack_session_ids,
haystack_sessions, answer_session_ids). A session's drawer is its user turns joined by
newlines (MemPalace's "raw" protocol); the question is the query; the ranked drawers map back
to session ids. A session's date (``haystack_dates``, when the file has them) becomes its
drawer's ``created_at``, so search's time prior sees what a user's imported chats give it.
Search's opt-in re-rankers (recency, MMR, composite: :mod:`palazzo.retrieval.rerank`) are
measured by passing their options in ``fusion`` (:func:`rerank_plans` makes them).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from palazzo.bench.metrics import by_category, summarise
from palazzo.core.model import CHUNK_SIZE
from palazzo.embed import Embedder
from palazzo.errors import PalazzoError
from palazzo.memory.enrichment import POOL, enrich
from palazzo.palace import Palace
from palazzo.retrieval import events as event_list
from palazzo.retrieval.search import search

RANKED = 10


TURNS = ("user", "all")


def session_turns(session: list[dict[str, Any]], turns: str = "user") -> list[str]:
    """Return the texts of a session's turns: the user's (``turns="user"``, MemPalace's raw
    protocol and palazzo's figures so far) or every turn (``"all"``, so questions about
    what the assistant said can find their session)."""
    return [t.get("content", "") for t in session if turns == "all" or t.get("role") == "user"]


def session_text(session: list[dict[str, Any]], turns: str = "user") -> str:
    """Return a session's turns (:func:`session_turns`) joined by newlines."""
    return "\n".join(session_turns(session, turns))


def session_time(stamp: Any) -> float | None:
    """Return the epoch seconds (UTC) of a LongMemEval date such as ``2023/05/20 (Sat) 07:46``,
    or None when it is missing or not in that form (the drawer then keeps the palace clock's
    time)."""
    if not isinstance(stamp, str):
        return None
    day, _, clock = stamp.partition(")")
    try:
        when = datetime.strptime(f"{day[:10]} {clock.strip() or '00:00'}", "%Y/%m/%d %H:%M")
    except ValueError:
        return None
    return when.replace(tzinfo=UTC).timestamp()


def load(path: Path) -> list[dict[str, Any]]:
    """Return the questions in ``path``; a file without LongMemEval's fields is refused."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    need = {"question_id", "question", "haystack_session_ids", "haystack_sessions",
            "answer_session_ids"}
    if not isinstance(data, list) or not all(isinstance(q, dict) and need <= q.keys()
                                             for q in data):
        raise PalazzoError(f"{path} is not a LongMemEval file (needs {', '.join(sorted(need))})")
    return data


def rank_question(q: dict[str, Any], embedder: Embedder | None, mode: str,
                  chunk_size: int | None = CHUNK_SIZE, turns: str = "user",
                  fusion: dict[str, Any] | None = None,
                  drawers: str = "session") -> list[str]:
    """Return the session ids of ``q``'s haystack, best first (at least ``RANKED``).

    ``drawers`` "session" makes a drawer of each session (its turns joined); "turn" makes a
    drawer of each turn, as palazzo's chat importers store a conversation, and ranks a
    session where its best turn ranks (the search then returns every drawer)."""
    palace, sessions_of = build([q], embedder, chunk_size, turns, drawers)
    return rank(palace, sessions_of, q, mode, fusion, drawers)


def build(questions: list[dict[str, Any]], embedder: Embedder | None,
          chunk_size: int | None = CHUNK_SIZE, turns: str = "user",
          drawers: str = "session") -> tuple[Palace, dict[str, list[str]]]:
    """Return a palace holding the sessions of ``questions``' haystacks (each session id
    once, in order of first appearance) and the session ids of each drawer. Cost: one
    drawer insertion (and its embedding) per session, or per turn with ``drawers="turn"``."""
    palace = Palace(embedder=embedder, clock=lambda: 0.0, similar_threshold=None,
                    chunk_size=chunk_size)
    sessions_of: dict[str, list[str]] = {}
    todo: dict[str, tuple[Any, Any]] = {}
    for q in questions:
        dates = q.get("haystack_dates") or [None] * len(q["haystack_sessions"])
        for sid, session, stamp in zip(q["haystack_session_ids"], q["haystack_sessions"],
                                       dates, strict=True):
            todo.setdefault(sid, (session, stamp))
    texts = {sid: session_text(session, turns) for sid, (session, _) in todo.items()}
    prepare = getattr(getattr(embedder, "inner", embedder), "fit", None)
    if prepare is not None:
        prepare([t for t in texts.values() if t.strip()])
        palace.set_embedder(embedder)
    for sid, (session, stamp) in todo.items():
        pieces = [texts[sid]] if drawers == "session" else session_turns(session, turns)
        for piece in pieces:
            if not piece.strip():
                continue
            did, _ = palace.add_drawer("haystack", "sessions", piece,
                                       created_at=session_time(stamp))
            sessions_of.setdefault(did, []).append(sid)
    return palace, sessions_of


def rank(palace: Palace, sessions_of: dict[str, list[str]], q: dict[str, Any], mode: str,
         fusion: dict[str, Any] | None = None, drawers: str = "session") -> list[str]:
    """Return the session ids ``palace`` ranks for ``q``, best first: those its search
    returns (a session where its best drawer ranks), then the rest of ``q``'s haystack in
    its order. Cost: one search (and enrichment of its pool)."""
    # A re-ranker orders max(3·limit, 30) candidates: ask for the RANKED a user's query
    # would, not the whole haystack, so it sees what it would see there (the metrics stop
    # at 10; the rest of the ranking is filled in below).
    options = dict(fusion or {})
    alpha = options.pop("enrich_alpha", None)
    tuning = options.pop("event_tuning", {})
    limit = RANKED if options.get("rerank") else max(RANKED, len(sessions_of))
    if alpha is not None:  # enrichment re-ranks the pool a user's enriched search would
        limit = POOL if drawers == "session" else max(POOL, len(sessions_of))
    with event_list.tuned(**tuning):
        hits = search(palace, q["question"], limit=limit, mode=mode, **options)
    ids = [h.drawer_id for h in hits]
    if alpha is not None:
        row_of = palace.drawers.row_of
        ranked_rows, _ = enrich(palace, q["question"], [row_of[d] for d in ids],
                                [h.score for h in hits], alpha=alpha)
        ids = [palace.drawers.ids[c.row] for c in ranked_rows]
    ranked = list(dict.fromkeys(sid for d in ids for sid in sessions_of[d]))
    seen = set(ranked)
    # Sessions no list ranked (no shared words, no vector) go last, in haystack order.
    ranked += [sid for sid in q["haystack_session_ids"] if sid not in seen]
    return ranked


def run(path: Path, embedder: Embedder | None, mode: str,
        progress: Callable[[int, int], None] | None = None,
        chunk_size: int | None = CHUNK_SIZE, turns: str = "user",
        fusion: dict[str, Any] | None = None, drawers: str = "session",
        pooled: bool = False, palaces: dict[Any, Any] | None = None) -> dict[str, Any]:
    """Rank every question of ``path`` and return per-question rankings plus metrics, over
    all questions and by ``question_type`` (``chunk_size`` None embeds drawers whole).

    ``pooled`` asks every question of one palace holding every session of the file (each
    once) instead of a palace per question holding its haystack: the same questions among
    thousands of drawers, as a real palace holds them, where another question's sessions
    are distractors too.

    Questions with the same haystack (a LoCoMo conversation's) are asked of one palace,
    built once: the palace a question would get alone, as searching changes nothing in it.
    ``palaces`` (a dict the caller keeps) shares those palaces between runs that differ only
    in ``mode`` and ``fusion``, so a grid of settings embeds each haystack once. An embedder
    fitted to its haystack (tfidf) gets a palace per question, as before."""
    questions = load(path)
    out = []
    rows = []
    t0 = time.perf_counter()
    palaces = {} if palaces is None else palaces
    fitted = getattr(getattr(embedder, "inner", embedder), "fit", None) is not None
    shared = None
    if pooled:
        key = ("pooled", str(path), id(embedder), chunk_size, turns, drawers)
        if key not in palaces:
            palaces[key] = build(questions, embedder, chunk_size, turns, drawers)
        shared = palaces[key]
    for i, q in enumerate(questions):
        if shared is not None:
            ranked = rank(*shared, q, mode, fusion, drawers)
        elif fitted:
            ranked = rank_question(q, embedder, mode, chunk_size, turns, fusion, drawers)
        else:
            key = (tuple(q["haystack_session_ids"]), id(embedder), chunk_size, turns, drawers)
            if key not in palaces:
                palaces[key] = build([q], embedder, chunk_size, turns, drawers)
            ranked = rank(*palaces[key], q, mode, fusion, drawers)
        out.append({"question_id": q["question_id"], "question_type": q.get("question_type"),
                    "ranked_session_ids": ranked[: max(RANKED, 10)]})
        rows.append((ranked, set(q["answer_session_ids"])))
        if progress is not None:
            progress(i + 1, len(questions))
    return {
        "benchmark": "longmemeval",
        "data": str(path),
        "mode": mode,
        "chunk_size": chunk_size,
        "turns": turns,
        "drawers": drawers,
        "pooled": pooled,
        "fusion": fusion or {},
        "embedder": None if embedder is None else embedder.name,
        "questions": out,
        "metrics": summarise(rows),
        "by_type": by_category(rows, [q["question_type"] for q in out]),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def rerank_plans(kinds: list[str], half_lives: list[float],
                 lambdas: list[float]) -> list[dict[str, Any]]:
    """Return the search options of one run per re-ranker setting: ``{}`` for ``"none"``
    (search as it is), a run per half-life for ``recency`` and ``composite``, a run per λ for
    ``mmr``; each holds only the options its re-ranker reads, so the table labels say what
    ran. An unknown kind is refused. Cost: nothing worth counting."""
    plans: list[dict[str, Any]] = []
    for kind in kinds:
        if kind == "none":
            plans.append({})
        elif kind in ("recency", "composite"):
            plans += [{"rerank": kind, "half_life_days": h} for h in half_lives]
        elif kind == "mmr":
            plans += [{"rerank": kind, "mmr_lambda": lam} for lam in lambdas]
        else:
            raise PalazzoError(f"unknown re-ranker {kind!r}: use none, recency, mmr or "
                               "composite")
    return plans


TABLE_METRICS = ("recall_any@5", "recall_all@5", "recall_any@10", "ndcg_any@10")


def table(runs: list[dict[str, Any]]) -> str:
    """Return a Markdown table of ``runs`` (results of :func:`run`): a row per mode and
    question type (and all), R@5 any/all, R@10 any and NDCG@10 — the figures the docs
    quote. Cost: nothing worth counting."""
    head = "| mode | questions | " + " | ".join(TABLE_METRICS) + " |"
    lines = [head, "|" + " --- |" * (len(TABLE_METRICS) + 2)]
    for r in runs:
        groups = [("all", {"questions": len(r["questions"]), **r["metrics"]}),
                  *r["by_type"].items()]
        for name, m in groups:
            cells = " | ".join(f"{m[k]:.3f}" for k in TABLE_METRICS)
            label = r["mode"] + "".join(f" {k}={v}" for k, v in r.get("fusion", {}).items()
                                        if (k, v) not in (("rrf_k", 60), ("vector_weight", 1.0),
                                                               ("recency", 1.0), ("events", 2.0)))
            lines.append(f"| {label} {name} | {m['questions']} | {cells} |")
    return "\n".join(lines)
