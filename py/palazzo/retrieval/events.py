"""The event list: a question's event clause matched against the drawers' event sentences.

"Which company employed me when the road exam happened?" asks about two things: an employer,
which the question's words and vector find, and an event ("the road exam"), which it names in
other words than the session that holds it ("Today I passed my driving test"). Inside a
drawer's 500-character window that sentence is one of several and the window's vector is
about the rest, so neither list finds it. The palace also embeds each drawer's dated sentences
on their own (:mod:`palazzo.memory.events`); this module reads the event clauses of a question
(after *when*, *before*, *after*, *since*, *during*, *at the time of*; and the question itself
for "When did I …?") and ranks drawers by their best event sentence's cosine to each clause.
Each clause's best :data:`DEPTH` drawers whose sentence reaches :data:`MIN_COSINE` join the
hybrid RRF as one more list, at weight :data:`WEIGHT`; a first-person question's clause counts
someone else's event (:data:`palazzo.core.columns.EVENT_OTHER`) :data:`OTHER_PENALTY` lower.

The constants were chosen on the long-conversation development set and dev50
(docs/benchmarks.md, "Event sentences"). Cost: a question without an event clause costs one
regular-expression match; one with a clause costs an embedding of each clause (a few words)
and a matvec over the event sentences (0.27–1.37 a session on the benchmark sets).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from palazzo.core.columns import EVENT_OTHER
from palazzo.errors import VectorsPending
from palazzo.retrieval import fusion

WEIGHT = 2.0  # the event list's RRF weight (BM25's and the vector list's are 1)
DEPTH = 5  # drawers a clause's list ranks
MIN_COSINE = 0.3  # an event sentence this far from the clause is not that event
OTHER_PENALTY = 0.2  # taken off someone else's event for a first-person question
MAX_WEIGHT = 5.0
# A sentence's score adds WORDS times the share of the clause's IDF weight its words hold
# (issue 32): in a conversation of two people every "adopted a dog" sentence is near the
# clause "Maria adopt Shadow" in meaning, and the rare word "Shadow" tells which one it is.
WORDS = 0.0
CANDIDATES = 50  # drawers (best event cosine first) whose sentences' words are read

_CONNECTIVE = (r"(?:when|while|before\s+or\s+after|before|after|since|during|by\s+the\s+time|"
               r"at\s+the\s+time(?:\s+(?:of|when|that))?|around\s+the\s+time(?:\s+(?:of|when))?)")
# "… when the road exam happened?" → "the road exam"
_AFTER = re.compile(rf"\b{_CONNECTIVE}\s+(?P<c>.+?)\s*(?:happened|took\s+place|occurred)?"
                    r"\s*[?.!]*\s*$", re.IGNORECASE | re.DOTALL)
# "When did I throw the party for my parents?" → "I throw the party for my parents";
# "Did I adopt Pickles before or after …?" → "I adopt Pickles"
_MAIN = re.compile(rf"^\s*(?:when\s+)?(?:did|do|does|was|were|have|has|had)\s+(?P<c>.+?)"
                   rf"(?:\s+{_CONNECTIVE}\b.*)?\s*[?.!]*\s*$", re.IGNORECASE | re.DOTALL)
_WHEN = re.compile(r"^\s*when\b", re.IGNORECASE)
_YES_NO = re.compile(r"^\s*(?:did|was|were|have|had)\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|me|my|mine|we|us|our)\b", re.IGNORECASE)
MAX_CLAUSE = 200  # characters: a clause is a few words; a long one is not an event's name


def clauses(query: str) -> list[str]:
    """Return the event clauses of ``query``: what follows a temporal connective ("when",
    "before", "at the time of", …, without a trailing "happened"), and for a question that
    starts "When did/was …" (or a yes/no question with a connective) the main clause too.
    Empty for a query that names no event. Cost: two regular-expression matches."""
    out = []
    when = _WHEN.match(query)  # "When did …": the connective is the question word
    after = _AFTER.search(query, when.end() if when else 0)
    if after is not None:
        out.append(after.group("c"))
    if when or (after is not None and _YES_NO.match(query)):
        main = _MAIN.match(query)
        if main is not None:
            out.append(main.group("c"))
    return [c.strip() for c in out if 0 < len(c.strip()) <= MAX_CLAUSE]


def term(palace, query: str, mask: np.ndarray, weight: float = WEIGHT,
         k: int = 60) -> np.ndarray | None:
    """Return the event lists' RRF contribution per drawer row (None when the query names no
    event, the palace has no event sentences, or a clause's vector is not at hand).

    For each clause, drawers in ``mask`` rank by their best event sentence's cosine to it
    (:meth:`palazzo.core.columns.ChunkTable.best_event`); the best :data:`DEPTH` that reach
    :data:`MIN_COSINE` get ``weight / (k + rank)``. Cost: see the module docstring.
    """
    found = clause_scores(palace, query, mask, weight)
    if found is None:
        return None
    out = np.zeros(palace.drawers.size, dtype=np.float64)
    for best in found:
        for rank, row in enumerate(fusion.top_k(best, DEPTH, mask & (best >= MIN_COSINE)),
                                   start=1):
            out[row] += weight / (k + rank)
    return out if out.any() else None


def z_term(palace, query: str, mask: np.ndarray, weight: float) -> np.ndarray | None:
    """Return the event lists' contribution in standard deviations (None as :func:`term`):
    for each clause, the best :data:`DEPTH` drawers in ``mask`` whose event sentence reaches
    :data:`MIN_COSINE` gain ``weight`` times how far their best sentence's score stands
    above the mean of the scope's drawers that hold event sentences (never less than 0).

    Why: the same list as :func:`term` in the currency of :func:`palazzo.retrieval.fusion.
    zsum`, so that a fusion of z-scores weighs it as it weighs the others (issue 32). Cost:
    as :func:`term`."""
    found = clause_scores(palace, query, mask, weight)
    if found is None:
        return None
    out = np.zeros(palace.drawers.size, dtype=np.float64)
    for best in found:
        z = fusion.zscore(best, mask)
        rows = fusion.top_k(best, DEPTH, mask & (best >= MIN_COSINE))
        out[rows] += weight * np.maximum(np.nan_to_num(z[rows]), 0.0)
    return out if out.any() else None


def clause_scores(palace, query: str, mask: np.ndarray, weight: float = WEIGHT
                  ) -> list[np.ndarray] | None:
    """Return, for each event clause of ``query`` whose vector is not all zeros, every
    drawer row's best event-sentence score to it (cosine, the other-person penalty for a
    first-person question, and the clause's words when :data:`WORDS` > 0; -inf for rows
    without event sentences); None when ``weight`` is 0, the query names no event, the
    palace has no event sentences or a clause's vector is not at hand. Cost: one embedding
    of the clauses and a matvec over the event sentences per clause."""
    store = palace.drawers
    # The regular expressions first: every hybrid query comes here, few name an event.
    found = clauses(query) if weight > 0 and palace.embedder is not None else []
    if not found or not store.chunks.has_events():
        return None
    try:
        vectors = palace.embedder.embed(found)
    except VectorsPending:
        return None
    penalty = OTHER_PENALTY if _FIRST_PERSON.search(query) else 0.0
    out = []
    for clause, q in zip(found, vectors, strict=True):
        if not q.any():
            continue
        best = store.chunks.best_event(q, store.size, penalty)
        if WORDS > 0:
            best = _with_words(palace, clause, q, best, mask, penalty)
        out.append(best)
    return out


def _with_words(palace, clause: str, q: np.ndarray, best: np.ndarray, mask: np.ndarray,
                penalty: float) -> np.ndarray:
    """Return ``best`` (each drawer's best event cosine to the clause vector ``q``) with the
    :data:`CANDIDATES` best drawers in ``mask`` scored again sentence by sentence: cosine
    plus :data:`WORDS` times the share of the clause's IDF weight (the palace's BM25
    statistics) that the sentence's words hold; the other drawers keep their cosine.

    Why: matching an event by meaning alone cannot tell "adopted Coco" from "adopted
    Shadow" (docs/benchmarks.md, "Real conversations, stage by stage"). Cost: for each
    candidate, finding its event sentences again (``palace.event_texts``: two
    regular-expression scans and a sentence split of its text) and tokenising them; the
    vectors are the stored ones."""
    index = palace.text_index
    terms = set(index.tokenizer(clause))
    idf = index.idf(terms)
    total = sum(idf.values())
    if total <= 0:
        return best
    store = palace.drawers
    chunks = store.chunks
    out = best.copy()
    for row in fusion.top_k(best, CANDIDATES, mask & np.isfinite(best)).tolist():
        slots = chunks.event_slots(row)
        sentences = palace.event_texts(row)
        if len(sentences) != len(slots):  # stored before the sentences changed: meaning only
            continue
        sims = chunks.vectors[slots] @ q - penalty * (chunks.kind[slots] == EVENT_OTHER)
        shares = np.array([sum(idf[t] for t in terms.intersection(index.tokenizer(x)))
                           for x in sentences]) / total
        out[row] = float(np.max(sims + WORDS * shares))
    return out


@contextmanager
def tuned(depth: int | None = None, min_cosine: float | None = None,
          other_penalty: float | None = None, words: float | None = None) -> Iterator[None]:
    """Run the block with other values of :data:`DEPTH`, :data:`MIN_COSINE`,
    :data:`OTHER_PENALTY` and :data:`WORDS` (None keeps one): what ``bench longmemeval
    --event-depth …`` measures them with. Not for hosts: the defaults are what the numbers
    chose."""
    global DEPTH, MIN_COSINE, OTHER_PENALTY, WORDS
    saved = DEPTH, MIN_COSINE, OTHER_PENALTY, WORDS
    DEPTH = saved[0] if depth is None else int(depth)
    MIN_COSINE = saved[1] if min_cosine is None else float(min_cosine)
    OTHER_PENALTY = saved[2] if other_penalty is None else float(other_penalty)
    WORDS = saved[3] if words is None else float(words)
    try:
        yield
    finally:
        DEPTH, MIN_COSINE, OTHER_PENALTY, WORDS = saved
