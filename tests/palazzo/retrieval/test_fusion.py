"""Ranking, Reciprocal Rank Fusion and the weighted blend."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palazzo.retrieval.fusion import blend, minmax, rank, rrf, top_k

# Few distinct values so that ties are common.
scores_st = st.lists(
    st.sampled_from([0.0, 1.0, 2.0, -1.0, 0.5, -math.inf, math.inf, math.nan]), max_size=30
).map(lambda v: np.array(v, dtype=np.float64))


def reference_top_k(scores, k, mask=None):
    rows = [
        r
        for r, s in enumerate(scores)
        if not math.isnan(s) and s != -math.inf and (mask is None or mask[r])
    ]
    return sorted(rows, key=lambda r: (-scores[r], r))[: max(k, 0)]


@settings(max_examples=200, deadline=None)
@given(scores=scores_st, k=st.integers(-1, 35), data=st.data())
def test_top_k_equals_a_full_stable_sort(scores, k, data):
    mask = np.array(data.draw(st.lists(st.booleans(), min_size=len(scores), max_size=len(scores))))
    mask = mask.astype(bool)
    assert top_k(scores, k).tolist() == reference_top_k(scores, k)
    assert top_k(scores, k, mask).tolist() == reference_top_k(scores, k, mask)


def test_top_k_breaks_ties_by_row_at_the_cut():
    scores = np.array([1.0, 3.0, 1.0, 1.0, 3.0, 1.0])
    assert top_k(scores, 3).tolist() == [1, 4, 0]
    assert top_k(scores, 10).tolist() == [1, 4, 0, 2, 3, 5]
    assert top_k(scores, 0).tolist() == []
    assert top_k(np.array([]), 3).tolist() == []


def test_top_k_rejects_mismatched_mask():
    with pytest.raises(ValueError):
        top_k(np.zeros(3), 2, np.ones(4, dtype=bool))


def test_rank_keeps_positive_scores_by_default():
    scores = np.array([0.0, 2.0, -1.0, 0.5, np.nan, -np.inf, 2.0])
    assert rank(scores).tolist() == [1, 6, 3]
    assert rank(scores, depth=2).tolist() == [1, 6]
    assert rank(scores, positive=False).tolist() == [1, 6, 3, 0, 2]
    mask = np.array([True, False, True, True, True, True, True])
    assert rank(scores, mask).tolist() == [6, 3]


def test_rrf_by_hand():
    fused = rrf([np.array([2, 0]), np.array([0, 3])], k=60)
    assert fused.shape == (4,)
    assert fused[0] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1] == 0.0
    assert fused[2] == pytest.approx(1 / 61)
    assert fused[3] == pytest.approx(1 / 62)
    assert rank(fused).tolist() == [0, 2, 3]


def test_rrf_weights_size_duplicates_and_empty():
    fused = rrf([np.array([1]), np.array([0])], k=0, weights=[2.0, 1.0], size=5)
    assert fused.tolist() == [1.0, 2.0, 0.0, 0.0, 0.0]
    # A row repeated in one ranking counts once, at its best place.
    assert rrf([np.array([4, 1, 4])], k=0)[4] == 1.0
    assert rrf([], size=3).tolist() == [0.0, 0.0, 0.0]
    assert rrf([np.array([], dtype=int)]).shape == (0,)
    with pytest.raises(ValueError):
        rrf([np.array([5])], size=3)
    with pytest.raises(ValueError):
        rrf([np.array([1])], weights=[1.0, 2.0])
    with pytest.raises(ValueError):
        rrf([np.array([-1])])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(0, 20), max_size=15, unique=True), max_size=4))
def test_rrf_equals_reference(rankings):
    fused = rrf([np.array(r, dtype=int) for r in rankings], k=60, size=21)
    want = np.zeros(21)
    for r in rankings:
        for place, row in enumerate(r):
            want[row] += 1 / (60 + place + 1)
    np.testing.assert_allclose(fused, want)


def test_minmax_over_valid_rows():
    out = minmax(np.array([2.0, 4.0, 3.0, np.inf]), np.array([True, True, True, True]))
    assert out.tolist() == [0.0, 1.0, 0.5, -np.inf]
    assert minmax(np.array([5.0, 5.0])).tolist() == [0.0, 0.0]
    assert minmax(np.array([np.nan])).tolist() == [-np.inf]


def test_blend_is_mempalace_formula():
    cos = np.array([0.5, 0.9, 0.1, -np.inf])
    bm = np.array([10.0, 0.0, 5.0, 7.0])
    got = blend(cos, bm)
    want = [0.6 * 0.5 + 0.4 * 1.0, 0.6 * 0.9, 0.6 * 0.1 + 0.4 * 0.5, -np.inf]
    np.testing.assert_allclose(got, want)
    # The mask changes the BM25 range, and masked rows drop out.
    mask = np.array([False, True, True, True])
    np.testing.assert_allclose(blend(cos, bm, mask=mask), [-np.inf, 0.54, 0.46, -np.inf])
    assert top_k(blend(cos, bm, 0.5), 4).tolist() == [0, 1, 2]
    with pytest.raises(ValueError):
        blend(np.zeros(2), np.zeros(3))


def test_standout_weights_favour_the_list_whose_best_stands_out():
    from palazzo.retrieval.fusion import standout_weights

    flat = np.array([0.50, 0.49, 0.48, 0.47, 0.46, 0.45])  # a list that cannot choose
    peaked = np.array([9.0, 1.0, 0.5, 0.0, 0.0, 0.0])  # one drawer far ahead
    rows = np.arange(6)
    wv, wb = standout_weights([(flat, rows), (peaked, rows[:3])])
    assert wb > wv > 0 and wv + wb == pytest.approx(2.0)
    # Judged on the union of the ranked rows only: rows no list ranked do not count.
    wide = np.concatenate([peaked, np.zeros(1000)])
    assert standout_weights([(np.concatenate([flat, np.zeros(1000)]), rows),
                             (wide, rows[:3])]) == pytest.approx([wv, wb])
    # Nothing stands out (or nothing ranked): equal weights.
    assert standout_weights([(np.ones(4), np.arange(4)), (np.ones(4), np.arange(4))]) == [1, 1]
    assert standout_weights([(np.ones(4), np.empty(0, np.intp)),
                             (np.ones(4), np.empty(0, np.intp))]) == [1, 1]


def test_zscore_is_over_the_kept_finite_rows():
    from palazzo.retrieval.fusion import zscore

    s = np.array([1.0, 2.0, 3.0, -np.inf, 100.0])
    mask = np.array([True, True, True, True, False])
    z = zscore(s, mask)
    assert z[:3] == pytest.approx((s[:3] - 2.0) / np.std([1.0, 2.0, 3.0]))
    assert np.isnan(z[3]) and np.isnan(z[4])  # no score, and outside the mask
    assert zscore(np.ones(3)).tolist() == [0.0, 0.0, 0.0]


def test_zsum_counts_words_twice_for_a_row_without_a_vector():
    from palazzo.retrieval.fusion import zscore, zsum

    vec = np.array([0.9, 0.1, -np.inf, 0.3])
    bm = np.array([0.0, 5.0, 4.0, 0.0])
    mask = np.array([True, True, True, False])
    out = zsum(vec, bm, mask)
    zv, zb = zscore(vec, mask), zscore(bm, mask)
    assert out[0] == pytest.approx(0.5 * zv[0] + 0.5 * zb[0])
    assert out[2] == pytest.approx(zb[2])  # words alone, at full weight, until its vector
    assert out[3] == -np.inf
