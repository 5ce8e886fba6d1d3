"""Re-ranking the candidates a search found: recency, diversity (MMR) and a composite.

A re-ranker takes the best candidates of a query (rows, best first, with their relevance:
the hybrid search's fused score) and orders them again with a signal the text cannot give:

- ``recency``: relevance × 0.5^(age / half-life), age = ``now`` − the drawer's time, in days
  (:func:`recency_scores`). The half-life is the strength: a drawer one half-life older than
  another needs twice its relevance to stay ahead of it.
- ``mmr``: Maximal Marginal Relevance (Carbonell & Goldstein 1998) over the drawers' unit
  vectors: each place goes to the candidate with the best λ·relevance − (1 − λ)·(its highest
  cosine to a drawer already placed), so a near-duplicate of a higher hit drops (:func:`mmr`).
- ``composite``: the Graph Kernel paper's re-ranker (seeds/002, "Activate RAG++ Hybrid
  Search": original 0.5, outcome 0.3, recency 0.2): a weighted sum of the min-max normalised
  relevance, outcome (the drawer's exploitation pheromone, the success signal of earlier use)
  and recency (:func:`composite`).

Everything here is NumPy over the candidate rows only; nothing reads the palace, so the
functions are pure and deterministic (ties keep the input order, which is best first).
Search (:func:`palazzo.retrieval.search.search`) calls :func:`rerank`; it is opt-in per query.
"""

from __future__ import annotations

import numpy as np

KINDS = ("recency", "mmr", "composite")
DAY = 86_400.0
# Defaults: chosen on the development sets (docs/benchmarks.md, "Re-ranking"). Neither set
# asks for recent drawers, so each re-ranker costs least where it is mildest; fused RRF
# scores are close at the top (1/61 against 1/62 for first and second place), so even a
# 1,000-day half-life lets a drawer a month newer pass its neighbour. λ = 0.95 loses no
# recall on dev50 and gains R@5 on the long conversations.
HALF_LIFE_DAYS = 1000.0
MMR_LAMBDA = 0.95
# Graph Kernel's composite: (relevance, outcome, recency).
COMPOSITE_WEIGHTS = (0.5, 0.3, 0.2)


def recency_scores(times: np.ndarray, now: float, half_life_days: float) -> np.ndarray:
    """Return 0.5 ** (age / half_life) per row, age = max(now − time, 0) in days (so in (0, 1];
    1 for a drawer as new as ``now`` or newer).

    A NaN time scores 0, as the oldest possible drawer: a re-ranker asked to prefer recent
    drawers has no evidence that an undated one is recent, and a neutral value (1, or 0.5)
    would let undated drawers jump over every dated one — or sit at an arbitrary age. (The
    present-tense prior in :mod:`palazzo.retrieval.recency` also counts NaN as oldest.)
    Times after ``now`` count as age 0 rather than scoring above 1. Cost: O(rows), vectorised.
    """
    if not half_life_days > 0:
        raise ValueError("half_life_days must be positive")
    t = np.asarray(times, dtype=np.float64)
    age = np.maximum(float(now) - t, 0.0) / DAY
    out = np.power(0.5, age / float(half_life_days))
    return np.where(np.isnan(t), 0.0, out)


def normalise(x: np.ndarray) -> np.ndarray:
    """Return ``x`` min-max scaled to [0, 1]; all zeros when ``x`` is constant (a signal that
    does not vary among the candidates carries no information and must not move them), and
    NaN as 0. Cost: O(rows)."""
    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    if len(x) == 0:
        return x
    lo, hi = x.min(), x.max()
    if hi <= lo:
        return np.zeros_like(x)
    return (x - lo) / (hi - lo)


def _order(score: np.ndarray) -> np.ndarray:
    """Return positions sorting ``score`` best first, ties keeping input order. O(n log n)."""
    return np.argsort(-score, kind="stable")


def mmr(candidates: np.ndarray, relevance: np.ndarray, vectors: np.ndarray, lam: float,
        limit: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(rows, scores)``: up to ``limit`` of ``candidates`` in Maximal Marginal
    Relevance order and the MMR score each had when it was placed (non-increasing).

    ``relevance`` (one per candidate) is min-max normalised first so it shares cosine's
    scale; ``vectors`` (one unit row per candidate) give the redundancy, the highest cosine
    to a candidate already placed (0 for the first; a zero vector, a drawer without one, is
    never redundant). ``lam`` = 1 is the relevance order; 0 is diversity alone. Greedy: each
    place updates every remaining candidate's redundancy with one matrix-vector product, so
    the cost is O(limit · candidates · dim).
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError("mmr lambda must be between 0 and 1")
    candidates = np.asarray(candidates)
    n = len(candidates)
    limit = min(int(limit), n)
    rel = normalise(relevance)
    vecs = np.asarray(vectors, dtype=np.float32)
    redundancy = np.full(n, -np.inf)  # no candidate placed yet: the first has none
    left = np.ones(n, dtype=bool)
    picked = np.empty(limit, dtype=np.intp)
    scores = np.empty(limit, dtype=np.float64)
    for i in range(limit):
        value = lam * rel - (1.0 - lam) * np.maximum(redundancy, 0.0)
        value = np.where(left, value, -np.inf)
        j = int(np.argmax(value))  # the first of equals: input order breaks ties
        picked[i], scores[i] = j, value[j]
        left[j] = False
        redundancy = np.maximum(redundancy, vecs @ vecs[j])
    return candidates[picked], scores


def composite(relevance: np.ndarray, *, outcome: np.ndarray, recency: np.ndarray,
              weights: tuple[float, float, float] = COMPOSITE_WEIGHTS) -> np.ndarray:
    """Return w_rel·norm(relevance) + w_out·norm(outcome) + w_rec·norm(recency) per candidate,
    ``weights`` = (w_rel, w_out, w_rec), each signal min-max normalised over the candidates
    (:func:`normalise`) so that the weights, not the signals' units, decide.

    The default (0.5, 0.3, 0.2) is the Graph Kernel paper's (original 0.5, outcome 0.3,
    recency 0.2). Outcome and recency are keyword-only so the order of the weights cannot be
    mistaken. Cost: O(candidates).
    """
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (3,) or not np.all(np.isfinite(w)) or (w < 0).any():
        raise ValueError("composite weights must be three non-negative numbers")
    return w[0] * normalise(relevance) + w[1] * normalise(outcome) + w[2] * normalise(recency)


def rerank(kind: str, candidates: np.ndarray, relevance: np.ndarray, *, limit: int,
           times: np.ndarray | None = None, now: float | None = None,
           half_life_days: float = HALF_LIFE_DAYS, vectors: np.ndarray | None = None,
           mmr_lambda: float = MMR_LAMBDA, outcome: np.ndarray | None = None,
           weights: tuple[float, float, float] = COMPOSITE_WEIGHTS,
           ) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(rows, scores)``: ``candidates`` (rows, best first) ordered again by ``kind``
    and cut to ``limit``, with the score that ordered each (recency: relevance × decay;
    mmr: the MMR value when placed; composite: the weighted sum).

    Per-candidate arrays (``relevance``, ``times``, ``vectors``, ``outcome``) are aligned with
    ``candidates``; ``recency`` and ``composite`` need ``times`` and ``now``, ``mmr`` needs
    ``vectors``, ``composite`` needs ``outcome``. ``relevance`` must be positive for
    ``recency`` (the fused RRF score is). Ties keep the input order, so the result is
    deterministic. Cost: O(candidates log candidates); MMR O(limit · candidates · dim).
    """
    if kind not in KINDS:
        raise ValueError(f"rerank must be one of {', '.join(KINDS)}")
    candidates = np.asarray(candidates)
    relevance = np.asarray(relevance, dtype=np.float64)
    if len(candidates) == 0:
        return candidates[:0], np.empty(0)
    if kind == "mmr":
        return mmr(candidates, relevance, vectors, mmr_lambda, limit)
    decay = recency_scores(times, now, half_life_days)
    if kind == "recency":
        score = relevance * decay
    else:
        score = composite(relevance, outcome=outcome, recency=decay, weights=weights)
    order = _order(score)[:limit]
    return candidates[order], score[order]
