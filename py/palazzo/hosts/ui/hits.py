"""How search hits are presented: which are worth showing, the snippet, when it was added,
where it came from.

Pure functions over the ``search`` operation's result dicts (no Panel), so the rules are
tested on their own and the views only lay out what they return.
"""

from __future__ import annotations

import re
import time
from typing import Any

from palazzo.hosts.ui.common import esc
from palazzo.retrieval.bm25 import normalise, tokenize

# The cut rule (see :func:`worth_showing`); the numbers were chosen as its docstring says.
MIN_COSINE = 0.30
COSINE_GAP = 0.15
MIN_WORD_SHARE = 0.2
SNIPPET = 220
_WORD = re.compile(r"[^\W_]+")


def worth_showing(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return the hits a person should see, in the given order: the weak ones cut off.

    A hit stays when it shares words with the query strongly enough (BM25 > 0 and at least
    ``MIN_WORD_SHARE`` of the best hit's BM25), or when it is close in meaning (MiniLM cosine
    at least ``MIN_COSINE`` and within ``COSINE_GAP`` of the best hit's cosine). Why: hybrid
    search fuses the vector list, which ranks *every* drawer, so without a cut any query lists
    the whole palace; and one shared common word ("something") is a weak reason next to a
    hit sharing the query's rare words. With no vectors yet (BM25 alone) only the word rule
    applies. A hit also stays when the event list found it (``scores.event`` > 0: one of its
    dated sentences is the event the question names), or when the knowledge graph alone
    brought it in (``via``) as evidence: it holds the fact the question asks for, or names
    the entity the question names (``scores.structural`` 1), or when a person marked it
    helpful for this search or one near it (``scores.pheromone`` > 0: a query trail,
    :mod:`palazzo.stigmergy.trails`). Such a drawer is often far from
    the question's words and from its vector as a whole, which is why those lists exist; a
    drawer the graph reached only at one or two hops stays cut. It is a rule of
    presentation, so it lives here: the ``search`` operation keeps returning ranked lists
    for agents and benchmarks, which measure ranks, not cuts.
    Cost: O(hits).

    How the numbers were chosen (hybrid search, limit 10, one drawer a session, MiniLM,
    LongMemEval dev50 -- the only question set tuned on -- with and without the answer
    sessions in the haystack; and the demo palace with 8 queries that have an answer and 6
    that have none):

    - dev50, MiniLM: cosine of the answer sessions in the top 10: min 0.106, median 0.398;
      of the other sessions: median 0.119, max 0.482. 91 of the 92 answer hits share a word.
      No cut: 92/92 answers kept, 408/408 others. This rule: 91/92 answers kept (no question
      loses all its answers), 174/408 others kept; with the answers removed 285/500 kept
      (long chat sessions share words with almost any question). ``MIN_WORD_SHARE`` 0.3
      keeps 89/92 answers and 116 others; 0.5 makes a question lose its only answer.
    - dev50, BM25 alone (no embedder yet): 89/91 answers kept, 169/263 others.
    - demo palace (23 short drawers), MiniLM: the 6 queries without an answer keep nothing
      (best cosine 0.06-0.22, no shared word: "No drawer matches"); the 8 with one keep 1-3
      hits, e.g. "bread baking" the apple cake (word) and the sourdough starter (cosine
      0.30; the recipe book at 0.29 is cut), "sourdough starter" only its drawer (the next,
      the tomato seedlings, at 0.23). The misses: "cooking something warm" also keeps the
      violin routine for the word "something"; "learning a language" keeps one of the two
      language drawers (the other at 0.19). ``MIN_COSINE`` and the gap moved by 0.05 change
      no dev50 answer (0.25 keeps 273 others instead of 270).
    """
    cosines = [h["scores"].get("vector") for h in hits]
    best = max((c for c in cosines if c is not None), default=None)
    top_words = max(((h["scores"].get("bm25") or 0.0) for h in hits), default=0.0)
    kept = []
    for h, cos in zip(hits, cosines, strict=True):
        bm25 = h["scores"].get("bm25") or 0.0
        words = bm25 > 0.0 and bm25 >= MIN_WORD_SHARE * top_words
        close = (cos is not None and best is not None and cos >= MIN_COSINE
                 and cos >= best - COSINE_GAP)
        event = (h["scores"].get("event") or 0.0) > 0.0
        evidence = bool(h.get("via")) and (h["scores"].get("structural") or 0.0) >= 1.0
        helped = (h["scores"].get("pheromone") or 0.0) > 0.0  # marked for a search like it
        if words or close or event or evidence or helped:
            kept.append(h)
    return kept


def query_terms(query: str) -> set[str]:
    """Return the normalised words of ``query`` that BM25 reads (stopwords dropped)."""
    return set(tokenize(query))


def _matches(text: str, terms: set[str]) -> list[tuple[int, int, str]]:
    """Return (start, end, term) of every word of ``text`` that is one of ``terms``."""
    return [(m.start(), m.end(), t) for m in _WORD.finditer(text)
            if (t := normalise(m.group())) in terms]


def snippet_html(text: str, query: str, width: int = SNIPPET) -> str:
    """Return about ``width`` characters of ``text`` around its best-matching part, as HTML
    with the query's words wrapped in ``<mark>``; every piece of ``text`` is escaped.

    The window is the one, starting at a matched word, that holds the most distinct query
    words (the first such); with no match it is the start of the text. "…" marks a cut.
    Matching is BM25's: case and Latin diacritics folded, whole words, no stemming. Cost:
    O(len(text)) to find the words, O(matches²) at most to pick the window.
    """
    found = _matches(text, query_terms(query))
    start = 0
    if found:
        best = -1
        for i, (s, _e, _t) in enumerate(found):
            distinct = len({t for s2, _e2, t in found[i:] if s2 < s + width - 20})
            if distinct > best:
                best, start = distinct, s
        start = max(0, start - width // 5)
        if start:
            space = text.rfind(" ", 0, start)  # begin at a word
            start = space + 1 if space >= 0 and start - space < 20 else start
    end = min(len(text), start + width)
    if end < len(text):
        space = text.rfind(" ", start, end)
        end = space if space > start + width // 2 else end
    out = ["…"] if start else []
    at = start
    for s, e, _t in found:
        if s < start or e > end:
            continue
        out += [esc(text[at:s]), "<mark>", esc(text[s:e]), "</mark>"]
        at = e
    out.append(esc(text[at:end]))
    if end < len(text):
        out.append("…")
    return "".join(out)


def matched_words(text: str, query: str) -> list[str]:
    """Return the query's words found in ``text``, in query order (for the relevance hint)."""
    present = {t for _s, _e, t in _matches(text, query_terms(query))}
    seen: list[str] = []
    for t in tokenize(query):
        if t in present and t not in seen:
            seen.append(t)
    return seen


def when(created_at: float | None, now: float | None = None) -> str:
    """Return when a drawer was added, for a person: "just now", "5 minutes ago",
    "3 hours ago", "2 days ago", then the date ("4 Mar 2025"); "" when unknown (0 or None).
    ``now`` defaults to the wall clock. Cost: O(1)."""
    if not created_at:
        return ""
    now = time.time() if now is None else now
    ago = now - created_at
    if ago < 0:
        return _date(created_at)
    for limit, unit, size in ((60, "", 1), (3600, "minute", 60), (86400, "hour", 3600),
                              (7 * 86400, "day", 86400)):
        if ago < limit:
            if not unit:
                return "just now"
            n = int(ago // size)
            return f"{n} {unit}{'' if n == 1 else 's'} ago"
    return _date(created_at)


def _date(at: float) -> str:
    t = time.localtime(at)
    return f"{t.tm_mday} {time.strftime('%b %Y', t)}"


def moment(at: float | None) -> str:
    """Return a time as a person reads it in a conversation: "4 Mar 2025, 14:05" (local
    time); "" when unknown (0 or None). Cost: O(1)."""
    if not at:
        return ""
    t = time.localtime(at)
    return f"{_date(at)}, {t.tm_hour:02d}:{t.tm_min:02d}"


def source_line(source: dict[str, Any] | None) -> str:
    """Return where a drawer came from in one line of plain text (escape it to show it),
    from the ``source`` object the search, get_drawer and list_drawers operations give
    (:mod:`palazzo.memory.sources`):

    - a file: ``From roses/pruning.md · part 2`` (the part only for a file cut in pieces);
    - a conversation turn: ``Conversation “Planning the garden” · user · 14 Nov 2023, 22:15
      · message 3 of 40``;
    - a diary entry: ``Diary entry · 4 Mar 2025, 14:05``; anything else: ``Added directly``
      or ``From demo`` (the drawer's own source), with its time.

    "" when there is no source. Cost: O(1)."""
    if not source:
        return ""
    kind = source.get("kind")
    if kind == "file":
        part = f" · part {source['part']}" if source.get("part") else ""
        return f"From {source.get('path') or source.get('name')}{part}"
    at = moment(source.get("created_at"))
    if kind == "conversation":
        place = (f"message {source['turn']} of {source['turns']}"
                 if source.get("turn") and source.get("turns") else "")
        parts = (f"Conversation “{source.get('title') or source.get('conversation')}”",
                 source.get("role") or "", at, place)
        return " · ".join(p for p in parts if p)
    if kind == "diary":
        first = "Diary entry"
    else:
        first = f"From {source['via']}" if source.get("via") else "Added directly"
    return " · ".join(p for p in (first, at) if p)


def source_short(source: dict[str, Any] | None) -> str:
    """Return the shortest words that tell a drawer apart from its room's others: a file's
    name (and part), a turn's speaker and time, else when it was added; "" without a
    source. For tables listing a room's drawers. Cost: O(1)."""
    if not source:
        return ""
    if source.get("kind") == "file":
        part = f" · part {source['part']}" if source.get("part") else ""
        return f"{source.get('path') or source.get('name')}{part}"
    who = source.get("role") if source.get("kind") == "conversation" else ""
    return " · ".join(p for p in (who or "", moment(source.get("created_at"))) if p)
