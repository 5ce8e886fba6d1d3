"""AAAK: a compact, pipe-separated form of a diary entry that a language model reads cheaply.

MemPalace's diaries are "AAAK journals": entity codes, topic words, a key quote, importance
and flags on one line. palazzo's form (ours, documented here) is one line::

    DATE|AGENT|ENTITIES|topics|"quote"|STARS|FLAGS

- DATE is the entry's UTC date (YYYY-MM-DD);
- AGENT and ENTITIES are short upper-case codes: from the user's code table when it names the
  entity, else the first three letters of the name, upper-cased (a second name with the same
  three letters gets a digit: ``MAR``, ``MAR2``); entities are the palace's knowledge-graph
  entity names found in the text plus capitalised words that do not start a sentence,
  comma-joined, at most six;
- topics: the three most frequent words of four letters or more that are not stop words;
- quote: the first sentence, cut to 60 characters (``|`` and ``"`` removed);
- STARS: 1 to 5 ``*`` from importance 0..1;
- FLAGS: DECISION, ORIGIN, PIVOT, TECHNICAL when their signal words occur, ``+``-joined.

It is an optional *extra* stored next to the verbatim entry, never instead of it: encoding
loses information by design. Pure standard library, deterministic.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping

MAX_ENTITIES = 6
MAX_TOPICS = 3
QUOTE_CHARS = 60

STOP_WORDS = frozenset({
    "about", "above", "after", "again", "also", "always", "because", "been", "before", "being",
    "below", "between", "both", "could", "does", "doing", "down", "during", "each", "from",
    "further", "have", "having", "here", "into", "just", "more", "most", "much", "must", "only",
    "other", "over", "really", "same", "should", "since", "some", "such", "than", "that",
    "their", "them", "then", "there", "these", "they", "this", "those", "through", "under",
    "until", "very", "were", "what", "when", "where", "which", "while", "with", "would", "your",
    "yours", "today", "still",
})

FLAG_SIGNALS: dict[str, tuple[str, ...]] = {
    "DECISION": ("decided", "decision", "chose", "switched", "instead of", "we will"),
    "ORIGIN": ("founded", "started", "launched", "first time", "created"),
    "PIVOT": ("realized", "realised", "turning point", "breakthrough", "changed everything"),
    "TECHNICAL": ("api", "database", "deploy", "server", "algorithm", "bug", "config"),
}

_WORD = re.compile(r"[^\W\d_][\w'-]*", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def stars(importance: float) -> str:
    """Return 1–5 asterisks for an importance in [0, 1] (0 → 1 star, 1 → 5 stars)."""
    importance = min(max(float(importance), 0.0), 1.0)
    return "*" * (1 + round(importance * 4))


def code_for(name: str, table: Mapping[str, str], taken: dict[str, str]) -> str:
    """Return the short code of entity ``name``: the table's (case-insensitive) or its first
    three letters upper-cased, with a digit when another name already took those letters.
    ``taken`` (code -> name) is updated so one entry never gives two names one code."""
    for key, code in table.items():
        if key.casefold() == name.casefold():
            taken.setdefault(code, name)
            return code
    letters = "".join(c for c in name if c.isalnum())[:3].upper() or "X"
    code, n = letters, 1
    while taken.get(code, name) != name:
        n += 1
        code = f"{letters}{n}"
    taken[code] = name
    return code


def entities_in(text: str, known: Iterable[str] = ()) -> list[str]:
    """Return entity names found in ``text``: ``known`` names that occur (case-insensitive),
    then capitalised words that do not start a sentence, in order of first appearance."""
    found: list[str] = []
    low = text.casefold()
    for name in known:
        if name and name.casefold() in low and name not in found:
            found.append(name)
    for sentence in _SENTENCE.split(text):
        words = _WORD.findall(sentence)
        for w in words[1:]:
            if w[0].isupper() and w.casefold() not in STOP_WORDS and \
                    not any(w.casefold() == f.casefold() for f in found):
                found.append(w)
    return found


def topics(text: str) -> list[str]:
    """Return the most frequent content words (>= 4 letters, not stop words), ties in order of
    first appearance."""
    words = [w.casefold() for w in _WORD.findall(text)]
    counts = Counter(w for w in words if len(w) >= 4 and w not in STOP_WORDS)
    first = {w: i for i, w in reversed(list(enumerate(words)))}
    return sorted(counts, key=lambda w: (-counts[w], first[w]))[:MAX_TOPICS]


def flags(text: str) -> list[str]:
    """Return the flags whose signal words occur in ``text``, in FLAG_SIGNALS order."""
    low = text.casefold()
    return [flag for flag, signals in FLAG_SIGNALS.items()
            if any(re.search(rf"\b{re.escape(s)}\b", low) for s in signals)]


def _clean(field: str) -> str:
    return field.replace("|", "/").replace('"', "'").replace("\n", " ").strip()


def encode(text: str, written_at: float, agent: str, importance: float = 0.5,
           codes: Mapping[str, str] | None = None, known: Iterable[str] = ()) -> str:
    """Return the one-line AAAK form of a diary entry (see the module docstring).

    ``codes`` maps entity names to the user's codes; ``known`` are names to look for (the
    palace's knowledge-graph entities). Cost: O(len(text) · len(known)).
    """
    table = dict(codes or {})
    taken: dict[str, str] = {}
    agent_code = code_for(agent, table, taken)
    names = entities_in(text, known)[:MAX_ENTITIES]
    entity_codes = ",".join(code_for(n, table, taken) for n in names)
    first = next((s.strip() for s in _SENTENCE.split(text) if s.strip()), "")
    quote = _clean(first)[:QUOTE_CHARS]
    day = time.strftime("%Y-%m-%d", time.gmtime(written_at))
    return "|".join([day, agent_code, entity_codes, ",".join(topics(text)), f'"{quote}"',
                     stars(importance), "+".join(flags(text))])
