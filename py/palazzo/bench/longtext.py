"""A long-text development set made from a LongMemEval file: sessions grouped into drawers.

LongMemEval's reduced sessions are short (≤ 500 characters), so they cannot show that MiniLM
reads only the first 256 tokens of a drawer. Here each question's haystack sessions (their
user turns, as :func:`palazzo.bench.longmemeval.session_text` makes them) are concatenated in
haystack order, ``group`` sessions a drawer, so gold text often sits past the first 256
tokens. The output keeps LongMemEval's shape: each "session" is one long drawer (a single
user turn) and ``answer_session_ids`` names the drawers that contain a gold session.
"""

from __future__ import annotations

from typing import Any

from palazzo.bench.longmemeval import session_text

SEPARATOR = "\n\n"  # sessions are paragraphs of the long drawer


def group_question(q: dict[str, Any], group: int) -> dict[str, Any]:
    """Return ``q`` with its haystack regrouped into drawers of ``group`` sessions.

    Sessions with no user text are skipped. A drawer's id is ``<first session id>+<n>``;
    it is relevant when any of its sessions is in ``answer_session_ids``. Cost: O(text).
    """
    gold = set(q["answer_session_ids"])
    pairs = [(sid, session_text(s)) for sid, s in
             zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)]
    pairs = [(sid, text) for sid, text in pairs if text.strip()]
    ids, sessions, answers = [], [], []
    for start in range(0, len(pairs), group):
        part = pairs[start : start + group]
        did = f"{part[0][0]}+{len(part)}"
        ids.append(did)
        sessions.append([{"role": "user", "content": SEPARATOR.join(t for _, t in part)}])
        if any(sid in gold for sid, _ in part):
            answers.append(did)
    out = {k: v for k, v in q.items() if not k.startswith("haystack_")}
    out.update(haystack_session_ids=ids, haystack_sessions=sessions, answer_session_ids=answers)
    return out


def make(questions: list[dict[str, Any]], group: int = 6) -> list[dict[str, Any]]:
    """Return every question regrouped (see :func:`group_question`); questions without a
    relevant drawer are dropped. Cost: O(total text)."""
    if group < 1:
        raise ValueError("group must be at least 1")
    out = [group_question(q, group) for q in questions]
    return [q for q in out if q["answer_session_ids"]]
