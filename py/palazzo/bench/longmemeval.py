"""LongMemEval retrieval benchmark: one fresh palace per question, one drawer per session.

Reads LongMemEval's own field names (question_id, question, haystack_session_ids,
haystack_sessions, answer_session_ids). A session's drawer is its user turns joined by
newlines (MemPalace's "raw" protocol); the question is the query; the ranked drawers map back
to session ids.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palazzo.bench.metrics import summarise
from palazzo.core.model import CHUNK_SIZE
from palazzo.embed import Embedder
from palazzo.errors import PalazzoError
from palazzo.palace import Palace
from palazzo.retrieval.search import search

RANKED = 10


def session_text(session: list[dict[str, Any]]) -> str:
    """Return the user turns of a session joined by newlines."""
    return "\n".join(t.get("content", "") for t in session if t.get("role") == "user")


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
                  chunk_size: int | None = CHUNK_SIZE) -> list[str]:
    """Return the session ids of ``q``'s haystack, best first (at least ``RANKED``)."""
    palace = Palace(embedder=embedder, clock=lambda: 0.0, similar_threshold=None,
                    chunk_size=chunk_size)
    sessions_of: dict[str, list[str]] = {}
    texts = [session_text(s) for s in q["haystack_sessions"]]
    prepare = getattr(getattr(embedder, "inner", embedder), "fit", None)
    if prepare is not None:
        prepare([t for t in texts if t.strip()])
        palace.set_embedder(embedder)
    for sid, text in zip(q["haystack_session_ids"], texts, strict=True):
        if not text.strip():
            continue
        did, _ = palace.add_drawer("haystack", "sessions", text)
        sessions_of.setdefault(did, []).append(sid)
    hits = search(palace, q["question"], limit=max(RANKED, len(sessions_of)), mode=mode)
    ranked = [sid for h in hits for sid in sessions_of[h.drawer_id]]
    seen = set(ranked)
    # Sessions no list ranked (no shared words, no vector) go last, in haystack order.
    ranked += [sid for sid in q["haystack_session_ids"] if sid not in seen]
    return ranked


def run(path: Path, embedder: Embedder | None, mode: str,
        progress: Callable[[int, int], None] | None = None,
        chunk_size: int | None = CHUNK_SIZE) -> dict[str, Any]:
    """Rank every question of ``path`` and return per-question rankings plus metrics
    (``chunk_size`` None embeds drawers whole)."""
    questions = load(path)
    out = []
    rows = []
    t0 = time.perf_counter()
    for i, q in enumerate(questions):
        ranked = rank_question(q, embedder, mode, chunk_size)
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
        "embedder": None if embedder is None else embedder.name,
        "questions": out,
        "metrics": summarise(rows),
        "seconds": round(time.perf_counter() - t0, 2),
    }
