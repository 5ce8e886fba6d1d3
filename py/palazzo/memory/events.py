"""Event sentences: the short statements of a drawer that tell of something that happened.

A question often names an event in other words than the drawer that holds it ("which company
employed me when the *family celebration* happened?" for a session that says "tonight was the
big anniversary party for my mum and dad"). Inside a long drawer such a sentence is one of
many, and the vector of its 500-character window is mostly about the rest: on the long
conversation development set the window holding it ranked 7th to 12th of about 25 sessions,
while the sentence alone ranked first (docs/benchmarks.md, "Event sentences"). So the palace
embeds the event sentences of each drawer as well as its windows (kept apart in the chunk
table, see :class:`palazzo.core.columns.ChunkTable`), and search matches the event clause of a
question against them (:mod:`palazzo.retrieval.events`).

An event sentence is one that dates itself: it has a relative time ("today", "last month",
"three weeks ago", as extraction's ``TIME`` reads them) or a date that extraction reads
(``extraction.DATE``).
That is the sentence a question about *when* needs, and it keeps the extra vectors few: about
1.37 a session on the long-conversation set, 0.27 on dev50's sessions, 341 among the
20,942 drawers of the scale benchmark's generated chat export. A sentence may tell of
the speaker's own event or of someone else's ("my friend Sam adopted a parrot last month"); the
kind says which, so that a first-person question can prefer the speaker's own.
"""

from __future__ import annotations

import re

from palazzo.core.columns import EVENT_OTHER as OTHER
from palazzo.core.columns import EVENT_OWN as OWN
from palazzo.memory.extraction import DATE, RELATIVE_WORDS, extract, sentence_spans

__all__ = ["OTHER", "OWN", "about_someone_else", "event_sentences"]
MIN_CHARS = 12  # shorter "sentences" are fragments ("Last week!")
MAX_CHARS = 300  # longer ones are paragraphs without stops: their window already reads them
MAX_PER_DRAWER = 16  # bounds the extra embedding a drawer costs

# A relative time: what extraction's TIME reads, without its qualifiers ("just", "about")
# and numbers ("3 weeks ago" is found at "weeks ago"), which do not change the sentence and
# made the scan three times slower (2.1 → 0.75 s over the 22.7 MB of the 20k-message palace).
_WHEN = re.compile(r"\b(?:to(?:day|night)|yesterday|this\s(?:morning|afternoon|evening|week|"
                   r"weekend|month|year)|last\s(?:night|week|weekend|month|year|summer|winter|"
                   r"spring|fall|autumn|monday|tuesday|wednesday|thursday|friday|saturday|"
                   r"sunday)|(?:days?|weeks?|months?|years?)\sago)\b", re.IGNORECASE)
# The first person, unless it only introduces someone else ("my friend", "our old neighbour").
_SELF = re.compile(rf"\b(?:I|me|my|we|us|our)\b(?!\s+(?:[\w'’-]+\s+)?(?:{RELATIVE_WORDS})\b)",
                   re.IGNORECASE)


def event_sentences(text: str) -> list[tuple[str, int]]:
    """Return the event sentences of ``text`` in text order, each with its kind (:data:`OWN`
    or :data:`OTHER`), at most :data:`MAX_PER_DRAWER` of them.

    Deterministic (the vectors of a drawer are its windows' and these, in this order). Cost:
    two regular-expression scans of ``text``; for a text that dates something, a sentence
    split and an entity extraction of each event sentence (to tell whose event it is).
    """
    return [(s, OTHER if about_someone_else(s) else OWN) for s in event_texts(text)]


def event_texts(text: str) -> list[str]:
    """Return the sentences :func:`event_sentences` returns, without their kinds.

    Why: search reads the words of a few drawers' event sentences (the event list's rare
    words, :mod:`palazzo.retrieval.events`) and needs them in the order their vectors were
    stored, without the entity extraction that tells whose event each is. Cost: two
    regular-expression scans of ``text``, and a sentence split for a text that dates
    something."""
    # Most texts date nothing: two scans of the whole text decide that before any split.
    dated = sorted({m.start() for pattern in (_WHEN, DATE) for m in pattern.finditer(text)})
    if not dated:
        return []
    out: list[str] = []
    at = 0
    for start, end in sentence_spans(text):
        while at < len(dated) and dated[at] < start:
            at += 1
        if at == len(dated):
            break
        if dated[at] >= end:
            continue
        sentence = text[start:end].strip()
        if not MIN_CHARS <= len(sentence) <= MAX_CHARS:
            continue
        out.append(sentence)
        if len(out) == MAX_PER_DRAWER:
            break
    return out


def about_someone_else(sentence: str) -> bool:
    """Return whether ``sentence`` tells of another person: it names a person (an entity
    extraction reads as a name) and does so before any first-person word that is not just
    "my friend"/"our neighbour" (or has no such word). "Marco got a parrot today" and "My
    friend Sam adopted a cat last month" are someone else's; "Today I passed my driving
    test" and "Tonight was the big party for my mum and dad" are the speaker's.
    Cost: one extraction of the sentence."""
    names = [m.start for m in extract(sentence).mentions if m.kind == "name"]
    if not names:
        return False
    me = _SELF.search(sentence)
    return me is None or min(names) < me.start()
