"""Ranking and rank fusion over per-row score arrays.

Scores are dense NumPy arrays indexed by row slot; rankings are arrays of row numbers, best
first. Every function here is vectorised; ties are always broken by the smaller row number, so
results are reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def _valid(scores: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
    """Return the boolean mask of rows scoring above -inf (not NaN) that ``mask`` keeps."""
    ok = scores > -np.inf  # False for NaN too
    if mask is not None:
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != scores.shape:
            raise ValueError(
                f"mask has {mask.shape[0] if mask.ndim else 0} entries for "
                f"{scores.shape[0]} scores"
            )
        ok &= mask
    return ok


def top_k(scores: np.ndarray, k: int, mask: np.ndarray | None = None) -> np.ndarray:
    """Return the rows of the ``k`` highest scores, best first (ties: smaller row first).

    Rows outside ``mask``, and rows scoring -inf or NaN, are never returned; fewer than ``k``
    rows come back when fewer are eligible. Cost: O(n) selection (argpartition) plus
    O(k log k) to sort the winners.
    """
    scores = np.asarray(scores)
    if scores.ndim != 1:
        raise ValueError("scores must be one-dimensional")
    cand = np.flatnonzero(_valid(scores, mask))
    if k <= 0 or len(cand) == 0:
        return np.empty(0, dtype=np.intp)
    s = scores[cand]
    if len(cand) > k:
        # argpartition splits ties at the k-th value arbitrarily: keep everything strictly
        # better than the k-th best, then the smallest rows among those equal to it.
        kth = s[np.argpartition(-s, k - 1)[k - 1]]
        better = s > kth
        tied = np.flatnonzero(s == kth)[: k - int(better.sum())]
        chosen = np.concatenate([np.flatnonzero(better), tied])
        cand, s = cand[chosen], s[chosen]
    order = np.lexsort((cand, -s))
    return cand[order].astype(np.intp, copy=False)


def rank(
    scores: np.ndarray,
    mask: np.ndarray | None = None,
    depth: int | None = None,
    *,
    positive: bool = True,
) -> np.ndarray:
    """Return the rows worth ranking, best first, at most ``depth`` of them (all if None).

    With ``positive`` (the default, right for BM25 and fused scores where 0 means "no
    match") only rows scoring > 0 rank; otherwise every score above -inf does (pass
    ``positive=False`` for cosine, where a negative value is still a similarity). Rows outside
    ``mask``, NaN and -inf never rank.
    Cost: as :func:`top_k`.
    """
    scores = np.asarray(scores)
    keep = _valid(scores, mask)
    if positive:
        keep &= scores > 0
    return top_k(scores, len(scores) if depth is None else depth, keep)


def rrf(
    rankings: Sequence[np.ndarray],
    k: int = 60,
    weights: Sequence[float] | None = None,
    size: int | None = None,
) -> np.ndarray:
    """Fuse rankings by Reciprocal Rank Fusion and return a float64 score per row.

    ``score(row) = Σ_i weights[i] / (k + rank_i(row) + 1)`` with 0-based ranks, summed over
    the rankings that contain the row (a row repeated within one ranking counts at its best
    place). Rows in no ranking score 0. The result has ``size`` entries (default: one past the
    largest row ranked). Cost: O(total ranked rows · log) for deduplication.
    """
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if weights is not None and len(weights) != len(rankings):
        raise ValueError(f"{len(weights)} weights for {len(rankings)} rankings")
    arrays = [np.asarray(r, dtype=np.intp).ravel() for r in rankings]
    if any(len(a) and a.min() < 0 for a in arrays):
        raise ValueError("rankings must hold non-negative row numbers")
    highest = max((int(a.max()) for a in arrays if len(a)), default=-1)
    n = highest + 1 if size is None else int(size)
    if highest >= n:
        raise ValueError(f"a ranking holds row {highest}, beyond size {n}")
    fused = np.zeros(n, dtype=np.float64)
    for i, a in enumerate(arrays):
        if not len(a):
            continue
        rows, first = np.unique(a, return_index=True)
        w = 1.0 if weights is None else float(weights[i])
        fused += np.bincount(rows, weights=w / (k + first + 1.0), minlength=n)
    return fused


def minmax(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Return ``scores`` rescaled to [0, 1] over the finite rows ``mask`` keeps (float64).

    Those rows map min -> 0 and max -> 1 (all 0 when they are all equal); other rows are -inf.
    Cost: O(n).
    """
    scores = np.asarray(scores, dtype=np.float64)
    ok = _valid(scores, mask) & np.isfinite(scores)
    out = np.full(scores.shape, -np.inf)
    if not ok.any():
        return out
    lo, hi = scores[ok].min(), scores[ok].max()
    out[ok] = (scores[ok] - lo) / (hi - lo) if hi > lo else 0.0
    return out


def blend(
    cosine: np.ndarray,
    bm25: np.ndarray,
    alpha: float = 0.6,
    mask: np.ndarray | None = None,
) -> np.ndarray:
    """Return MemPalace's weighted blend ``alpha·cos + (1 − alpha)·minmax(bm25)`` per row.

    BM25 is min-max normalised over the rows this query may return (``mask`` and a finite
    cosine); cosine is used as is. Rows outside them are -inf, so :func:`top_k` skips them.
    Cost: O(n).
    """
    cosine = np.asarray(cosine, dtype=np.float64)
    bm25 = np.asarray(bm25, dtype=np.float64)
    if cosine.shape != bm25.shape:
        raise ValueError(f"{cosine.shape[0]} cosine scores but {bm25.shape[0]} BM25 scores")
    ok = _valid(cosine, mask) & np.isfinite(cosine) & np.isfinite(bm25)
    out = np.full(cosine.shape, -np.inf)
    out[ok] = alpha * cosine[ok] + (1.0 - alpha) * minmax(bm25, ok)[ok]
    return out


def zscore(scores: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Return each row's score as standard deviations above the mean of the rows ``mask``
    keeps with a finite score (float64); NaN for every other row, and 0 for all of them
    when their scores are all equal. Cost: O(n)."""
    scores = np.asarray(scores, dtype=np.float64)
    ok = _valid(scores, mask) & np.isfinite(scores)
    out = np.full(scores.shape, np.nan)
    if ok.any():
        kept = scores[ok]
        sd = float(kept.std())
        out[ok] = (kept - kept.mean()) / sd if sd > 0 else 0.0
    return out


def zsum(vector: np.ndarray, bm25: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    """Return half the vector list's z-score plus half BM25's (:func:`zscore`, each over the
    rows of ``mask``), -inf outside ``mask``; a row without a vector (cosine -inf) counts
    its BM25 z-score twice, so words alone place it until its vector comes.

    Why: rank fusion gives a list's first place the same worth whether it stands far above
    the rest (a rare name only one drawer holds) or barely (a conversation whose every
    window means about the same); a z-score keeps how far it stands out, judged over the
    whole scope searched. Cost: O(n)."""
    zb = zscore(bm25, mask)
    zv = zscore(vector, mask)
    zv = np.where(np.isnan(zv), zb, zv)
    out = 0.5 * zv + 0.5 * zb
    return np.where(np.isnan(out), -np.inf, out)


def standout(values: np.ndarray) -> float:
    """Return how far the best of ``values`` stands out from them: (best − mean) / standard
    deviation over the finite ones; 0 when fewer than 3 are finite or all are equal.
    Cost: O(len(values))."""
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    sd = float(v.std()) if len(v) >= 3 else 0.0
    return (float(v.max()) - float(v.mean())) / sd if sd > 0 else 0.0


def standout_weights(lists: Sequence[tuple[np.ndarray, np.ndarray]]) -> list[float]:
    """Return a weight per ranked list (summing to the number of lists): how far each list's
    best score stands out (:func:`standout`), taken over the union of the lists' ranked
    rows, so that each list is judged on the same drawers and on about the same number of
    them whatever the palace's size. ``lists`` holds (scores over every row, ranked rows)
    pairs. Equal weights when no list stands out. Cost: O(union)."""
    ranked = [np.asarray(r, dtype=np.intp) for _, r in lists]
    union = np.unique(np.concatenate(ranked)) if ranked else np.empty(0, np.intp)
    out = [standout(scores[union]) for scores, _ in lists]
    total = sum(out)
    if total <= 0:
        return [1.0] * len(lists)
    return [len(lists) * w / total for w in out]
