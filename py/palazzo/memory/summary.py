"""Extractive summaries of rooms and closets, and the palace as AAAK lines.

A room's summary is a few of its own sentences, word for word: the ones whose words are most
typical of the room. Each sentence scores the mean over its distinct content words of
``tf_room(w) · idf(w)``, where ``tf_room`` counts the word over the room's drawers and ``idf``
is ``ln(1 + N / df)`` over the room's sentences (a word in every sentence says little about
any); sentences of fewer than :data:`MIN_WORDS` words and repeats are skipped. The best
sentences are taken until :data:`SUMMARY_CHARS` characters, then put back in the room's order
(oldest drawer first), each naming its drawer. Nothing is generated, so nothing is invented.

Summaries are computed when asked for and kept in a cache keyed by the room's drawer ids, so a
room that changed (a drawer added, edited or deleted) is summarised again on the next read and
an unchanged one costs one pass over the drawer ids. Cost of a summary: O(characters of the
room) to split and count; ``palazzo bench upkeep`` times all rooms of a 20k-drawer palace.

:func:`aaak_lines` is the palace-wide AAAK view: each drawer as one line of
:mod:`palazzo.memory.aaak` (date, wing code, entity codes, topics, first sentence, stars,
flags) with its drawer id, under a header per room. It is an export view: the verbatim drawers
stay as they are.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from palazzo.memory import aaak
from palazzo.memory.diary import written_date
from palazzo.memory.enrichment import drawer_entities
from palazzo.memory.kg import ENTITY_PREFIX

SUMMARY_CHARS = 400
MIN_WORDS = 4
MAX_SENTENCE = 300  # characters: a longer "sentence" (a pasted block) is cut at a word
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(slots=True)
class Sentence:
    """A sentence of the summary and the drawer it was taken from."""

    drawer_id: str
    text: str

    def to_dict(self) -> dict[str, str]:
        return {"drawer_id": self.drawer_id, "text": self.text}


def _sentences(text: str) -> list[str]:
    out = []
    for s in SENTENCE.split(text):
        s = " ".join(s.split())
        if len(s) > MAX_SENTENCE:
            s = s[:MAX_SENTENCE].rsplit(" ", 1)[0] + "…"
        if s:
            out.append(s)
    return out


def summarise(texts: list[tuple[str, str]], limit: int = SUMMARY_CHARS) -> list[Sentence]:
    """Return the summary sentences of ``texts`` (drawer id, text) in their order, at most
    about ``limit`` characters in all (at least one sentence when there is any). See the
    module docstring for the score. Cost: O(total characters)."""
    sents: list[tuple[int, str, str, frozenset[str]]] = []
    tf: Counter[str] = Counter()
    for did, text in texts:
        for s in _sentences(text):
            words = [w.casefold() for w in WORD.findall(s)]
            content = [w for w in words if w not in aaak.STOP_WORDS]
            tf.update(content)
            if len(words) >= MIN_WORDS:
                sents.append((len(sents), did, s, frozenset(content)))
    if not sents:
        return []
    df: Counter[str] = Counter()
    for *_, words in sents:
        df.update(words)
    n = len(sents)

    def score(words: frozenset[str]) -> float:
        if not words:
            return 0.0
        return sum(tf[w] * math.log(1 + n / df[w]) for w in words) / len(words)

    ranked = sorted(sents, key=lambda x: (-score(x[3]), x[0]))
    chosen: list[tuple[int, str, str, frozenset[str]]] = []
    seen: set[str] = set()
    used = 0
    for item in ranked:
        key = item[2].casefold()
        if key in seen:
            continue
        if chosen and used + len(item[2]) > limit:
            continue
        chosen.append(item)
        seen.add(key)
        used += len(item[2]) + 1
        if used >= limit:
            break
    chosen.sort(key=lambda x: x[0])
    return [Sentence(did, s) for _, did, s, _ in chosen]


class Summaries:
    """The summaries of one palace's rooms and closets, cached by their drawers' ids."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self._cache: dict[tuple[str, ...], tuple[tuple[str, ...], list[Sentence]]] = {}

    def rooms(self) -> dict[tuple[str, str], list[int]]:
        """Return the live drawer rows of every (wing, room). Cost: O(drawers)."""
        store = self.palace.drawers
        out: dict[tuple[str, str], list[int]] = {}
        for r in store.live_rows():
            out.setdefault((store.wing[r], store.room[r]), []).append(int(r))
        return out

    def of(self, wing: str, room: str, closet: str | None = None,
           limit: int = SUMMARY_CHARS, rows: list[int] | None = None
           ) -> tuple[list[Sentence], int]:
        """Return (the summary of the room, or of its closet ``closet``; its drawer count).

        ``rows`` are the room's drawer rows when the caller has them (:meth:`rooms`). Cost:
        without ``rows`` a pass over the palace's drawers to find the room's, plus the
        summary when the room changed since the last call (O(characters of the room))."""
        store = self.palace.drawers
        if rows is None:
            rows = [int(r) for r in store.live_rows()
                    if store.wing[r] == wing and store.room[r] == room]
        if closet is not None:
            rows = [r for r in rows if store.closet[r] == closet]
        created = store.columns["created_at"]
        rows.sort(key=lambda r: (float(created[r]), store.ids[r]))
        ids = tuple(store.ids[r] for r in rows)
        key = (wing, room, closet or "", str(limit))
        hit = self._cache.get(key)
        if hit is not None and hit[0] == ids:
            return hit[1], len(ids)
        result = summarise([(store.ids[r], store.content[r]) for r in rows], limit)
        self._cache[key] = (ids, result)
        return result, len(ids)


def aaak_lines(palace: Any) -> str:
    """Return the palace as AAAK text: a legend line, then per room (sorted) a ``# wing/room``
    header and one line a drawer (oldest first): ``<AAAK>|<drawer id>``. Entity codes come
    from the entities each drawer's REFERENCES edges name (extraction), so the cost is
    O(total characters · entities a drawer) rather than times every entity of the palace."""
    store = palace.drawers
    created = store.columns["created_at"]
    importance = store.columns["importance"]
    by_room = palace.summaries.rooms()
    lines = ["# AAAK view of palace "
             f"{palace.name!r}: DATE|WING|ENTITIES|topics|\"first sentence\"|STARS|FLAGS|"
             "drawer id (a view: the drawers keep their verbatim text)"]
    for (wing, room) in sorted(by_room):
        lines.append(f"# {wing}/{room}")
        rows = sorted(by_room[(wing, room)], key=lambda r: (float(created[r]), store.ids[r]))
        for r in rows:
            did = store.ids[r]
            known = [ent.name for key in drawer_entities(palace, did)
                     if (ent := palace.entities.get(ENTITY_PREFIX + key)) is not None]
            when = float(created[r])
            when = when if written_date(when) else 0.0  # a time gmtime can write
            line = aaak.encode(store.content[r], when, wing,
                               float(importance[r]), known=known)
            lines.append(f"{line}|{did}")
    return "\n".join(lines) + "\n"
