"""Time in search: a recency prior for questions about the present.

"Where do I live now?" has several matching drawers once a fact has changed: the one that
says where the person lived and the later one that says they moved. Word and vector scores
cannot tell them apart; the drawers' times can. When a query asks about the present (words
such as *now*, *currently*, *these days*, *at the moment*, *latest*: :data:`PRESENT`), the
top :data:`TOP` fused candidates are ranked again by time, newest first, and each gains
``weight / (k + place + 1)`` — what that place is worth in one RRF list — so at the default
weight 1 the newest candidate gains as much as first place in the vector or BM25 list.
Candidates with the same time share a place (so drawers without distinct times gain equally
and their order is unchanged), and a query that does not ask about the present is left alone.

Measured in ``palazzo bench longmemeval`` and ``bench ablate`` (docs/benchmarks.md, "Time"):
before stemming it lifted dev50's knowledge-update NDCG@10 and the generated sets' temporal
recall; with stemmed BM25 and 500-character chunks it moves no recall and lifts NDCG@10 on
the generated sets (dev50 unchanged). The time of a drawer is its ``created_at``: for
imported chats the message's own time, for LongMemEval files the session date.
"""

from __future__ import annotations

import re

import numpy as np

from palazzo.retrieval import fusion

# Words that ask for the current state of something (matched case-insensitively, whole words).
PRESENT = re.compile(
    r"\b(?:now|right now|currently|current|these days|at the moment|nowadays|lately|latest|"
    r"most recent|recently|recent|still|anymore|any more|today|so far)\b",
    re.IGNORECASE,
)
TOP = 10  # candidates re-ranked by time
WEIGHT = 1.0  # the default weight: the newest candidate gains one first place in one list
MAX_WEIGHT = 10.0


def asks_for_present(query: str) -> bool:
    """Return whether ``query`` asks about the present state of something (see
    :data:`PRESENT`). Cost: one regex scan of the query."""
    return PRESENT.search(query) is not None


def term(times: np.ndarray, fused: np.ndarray, weight: float, mask: np.ndarray | None = None,
         top: int = TOP, k: int = 60, linear: bool = False) -> np.ndarray:
    """Return the recency term per row: ``weight / (k + place + 1)`` for the best ``top``
    rows of ``fused`` (positive scores only, within ``mask``), where ``place`` is the row's
    0-based place by time among them, newest first, equal times sharing the better place
    (NaN times count as the oldest); 0 for every other row.

    Why only the top rows: the term re-orders what the query found; an old drawer that does
    not match gains nothing, nor does a new one. ``linear`` (for a fusion of z-scores, where
    ``fused`` may be negative): the best ``top`` rows of any score, each gaining
    ``weight · (top − place) / top``, so the newest gains ``weight`` standard deviations.
    Cost: one top-k selection over the rows plus sorting ``top`` values.
    """
    out = np.zeros(len(fused), dtype=np.float64)
    if weight <= 0:
        return out
    cand = fusion.rank(fused, mask, top, positive=not linear)
    if len(cand) < 2:
        return out
    t = np.nan_to_num(np.asarray(times, dtype=np.float64)[cand], nan=-np.inf)
    # place = how many candidates are strictly newer (ties share the better place)
    place = (t[None, :] > t[:, None]).sum(axis=1)
    if not place.any():  # all the same time: no information, no change
        return out
    out[cand] = weight * (top - place) / top if linear else weight / (k + place + 1.0)
    return out
