"""Opt-in re-ranking of search candidates: recency (half-life), MMR diversity, composite."""

import numpy as np
import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.palace import Palace
from palazzo.retrieval import rerank as rr
from palazzo.retrieval.search import search

DAY = 86_400.0


# --- the functions -------------------------------------------------------------------------

def test_recency_halves_every_half_life():
    now = 100 * DAY
    times = np.array([now, now - 7 * DAY, now - 14 * DAY, now + 3 * DAY, np.nan])
    got = rr.recency_scores(times, now, half_life_days=7)
    # as new as now: 1; one half-life: 0.5; two: 0.25; the future counts as now; NaN: 0
    assert got == pytest.approx([1.0, 0.5, 0.25, 1.0, 0.0])
    assert rr.recency_scores(times[:3], now, 14) == pytest.approx([1.0, 2 ** -0.5, 0.5])
    with pytest.raises(ValueError, match="half_life"):
        rr.recency_scores(times, now, 0)


def test_recency_prefers_the_newer_of_equally_relevant_candidates():
    cand = np.array([10, 11, 12])
    rows, scores = rr.rerank("recency", cand, np.array([0.03, 0.03, 0.03]), limit=3,
                             times=np.array([1 * DAY, 9 * DAY, 5 * DAY]), now=9 * DAY,
                             half_life_days=4)
    assert rows.tolist() == [11, 12, 10]
    assert scores == pytest.approx([0.03, 0.015, 0.0075])
    # a long half-life leaves a clearly more relevant older candidate in front
    rows, _ = rr.rerank("recency", cand, np.array([0.05, 0.03, 0.03]), limit=3,
                        times=np.array([1 * DAY, 9 * DAY, 5 * DAY]), now=9 * DAY,
                        half_life_days=365)
    assert rows.tolist() == [10, 11, 12]


def test_mmr_drops_a_near_duplicate_from_the_top():
    cand = np.array([5, 6, 7])
    a = np.array([1.0, 0.0, 0.0])
    dup = np.array([0.999, 0.0447, 0.0])
    other = np.array([0.0, 0.0, 1.0])
    vectors = np.stack([a, dup / np.linalg.norm(dup), other])
    rel = np.array([1.0, 0.95, 0.6])
    rows, scores = rr.mmr(cand, rel, vectors, lam=0.5, limit=3)
    assert rows.tolist() == [5, 7, 6]
    assert np.all(np.diff(scores) <= 0)  # placed in non-increasing MMR value
    # lambda 1 is the relevance order; the cut keeps the best `limit`
    assert rr.mmr(cand, rel, vectors, lam=1.0, limit=3)[0].tolist() == [5, 6, 7]
    assert rr.mmr(cand, rel, vectors, lam=0.5, limit=2)[0].tolist() == [5, 7]
    # a zero vector (a drawer without one) is never redundant
    vectors[1] = 0.0
    assert rr.mmr(cand, rel, vectors, lam=0.5, limit=3)[0].tolist() == [5, 6, 7]
    with pytest.raises(ValueError, match="lambda"):
        rr.mmr(cand, rel, vectors, lam=1.5, limit=3)


def test_composite_normalises_each_signal_and_applies_the_weights():
    rel = np.array([0.04, 0.03, 0.02])
    out = np.array([0.0, 5.0, 10.0])
    rec = np.array([0.5, 1.0, 0.75])
    got = rr.composite(rel, outcome=out, recency=rec)
    # norm: rel (1, .5, 0), outcome (0, .5, 1), recency (0, 1, .5); weights 0.5 / 0.3 / 0.2
    assert got == pytest.approx([0.5, 0.25 + 0.15 + 0.2, 0.3 + 0.1])
    assert rr.composite(rel, outcome=out, recency=rec, weights=(1, 0, 0)) == pytest.approx(
        [1, 0.5, 0])
    assert rr.composite(rel, outcome=out, recency=rec, weights=(0, 1, 0)) == pytest.approx(
        [0, 0.5, 1])
    # a signal that does not vary moves nothing
    flat = rr.composite(rel, outcome=np.zeros(3), recency=np.ones(3))
    assert flat == pytest.approx(0.5 * rr.normalise(rel))
    with pytest.raises(ValueError, match="weights"):
        rr.composite(rel, outcome=out, recency=rec, weights=(1, -1, 0))


def test_rerank_is_deterministic_and_keeps_input_order_on_ties():
    rng = np.random.default_rng(0)
    cand = np.arange(40)
    rel = np.round(rng.random(40), 1)  # many ties
    vecs = rng.normal(size=(40, 8))
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    kw = dict(times=np.zeros(40), now=0.0, vectors=vecs, outcome=np.zeros(40))
    for kind in rr.KINDS:
        a = rr.rerank(kind, cand, rel, limit=20, **kw)
        b = rr.rerank(kind, cand, rel, limit=20, **kw)
        assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    # equal times and no outcome: recency and composite keep the relevance order, ties by input
    expect = np.argsort(-rel, kind="stable")[:20].tolist()
    assert rr.rerank("recency", cand, rel, limit=20, **kw)[0].tolist() == expect
    assert rr.rerank("composite", cand, rel, limit=20, **kw)[0].tolist() == expect
    with pytest.raises(ValueError, match="rerank must be one of"):
        rr.rerank("newest", cand, rel, limit=5, **kw)
    assert len(rr.rerank("mmr", cand[:0], rel[:0], limit=5, **kw)[0]) == 0


# --- in search -----------------------------------------------------------------------------

@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=None)
    for i in range(20):
        p.add_drawer("w", "r", f"note {i} about gardening tomatoes and basil", created_at=i * DAY)
    p.add_drawer("w", "r", "I live in Lisbon, I live in a flat in Lisbon near the river",
                 created_at=100 * DAY)
    p.add_drawer("w", "r", "we moved: I live in Denver since the spring", created_at=400 * DAY)
    return p


def test_search_recency_lets_the_newer_drawer_lead_with_a_short_half_life(palace):
    plain = search(palace, "where do I live", limit=5)
    assert "Lisbon" in plain[0].content and all(h.rerank is None for h in plain)
    hits = search(palace, "where do I live", limit=5, rerank="recency", half_life_days=30)
    assert "Denver" in hits[0].content
    # now = the newest drawer (Denver, day 400): its factor is 1, Lisbon's 0.5^(300/30)
    by = {h.content.split()[-1]: h for h in hits}
    assert by["spring"].rerank == pytest.approx(by["spring"].score)
    assert by["river"].rerank == pytest.approx(by["river"].score * 0.5 ** 10)
    assert [h.rerank for h in hits] == sorted((h.rerank for h in hits), reverse=True)
    # RRF's first and second places differ by 1/61 vs 1/62 (1.6 %): only a very long
    # half-life keeps the better match first. An explicit now is honoured.
    assert "Denver" in search(palace, "where do I live", limit=5, rerank="recency",
                              half_life_days=3650)[0].content
    assert "Lisbon" in search(palace, "where do I live", limit=5, rerank="recency",
                              half_life_days=36500)[0].content
    later = search(palace, "where do I live", limit=5, rerank="recency", half_life_days=30,
                   now=430 * DAY)
    assert later[0].rerank == pytest.approx(later[0].score * 0.5)


def test_search_mmr_drops_a_near_duplicate(palace):
    text = "the team decided to ship the release on friday after the review"
    palace.add_drawer("w", "r", text, created_at=401 * DAY)
    palace.add_drawer("w", "r", text + " meeting", created_at=402 * DAY)
    palace.add_drawer("w", "r", "the release notes were decided to go in the wiki",
                      created_at=403 * DAY)
    query = "what did the team decide about the release"
    plain = search(palace, query, limit=3)
    assert plain[0].content.startswith(text) and plain[1].content.startswith(text)
    hits = search(palace, query, limit=3, rerank="mmr", mmr_lambda=0.5)
    assert hits[0].content.startswith(text) and "wiki" in hits[1].content
    assert hits[0].drawer_id == plain[0].drawer_id
    assert search(palace, query, limit=3, rerank="mmr", mmr_lambda=1.0)[1].drawer_id == \
        plain[1].drawer_id


def test_search_composite_lifts_a_drawer_that_proved_useful(palace):
    plain = search(palace, "where do I live", limit=5, recency=0.0)
    second = palace.drawers.row_of[plain[1].drawer_id]
    palace.drawers.columns["exploitation"][second] = 1.0
    hits = search(palace, "where do I live", limit=5, recency=0.0, rerank="composite",
                  half_life_days=3650)
    assert hits[0].drawer_id == plain[1].drawer_id
    assert all(0.0 <= h.rerank <= 1.0 for h in hits)


def test_search_options_are_validated_with_a_clear_error(palace):
    with pytest.raises(ValidationError, match="rerank must be one of recency, mmr, composite"):
        search(palace, "where", rerank="newest")
    with pytest.raises(ValidationError, match="mode hybrid"):
        search(palace, "where", rerank="recency", mode="bm25")
    with pytest.raises(ValidationError, match="half_life_days"):
        search(palace, "where", rerank="recency", half_life_days=0)
    with pytest.raises(ValidationError, match="mmr_lambda"):
        search(palace, "where", rerank="mmr", mmr_lambda=1.5)
    for bad in ({"rerank": "newest"}, {"rerank": "recency", "half_life_days": 0},
                {"rerank": "mmr", "mmr_lambda": -0.1}):
        with pytest.raises(ValidationError):
            call(palace, "search", {"query": "where do I live", **bad})


def test_the_search_operation_reports_the_rerank_score(palace):
    hits = call(palace, "search", {"query": "where do I live", "limit": 3, "rerank": "recency",
                                   "half_life_days": 30})["results"]
    assert "Denver" in hits[0]["content"]
    assert all(isinstance(h["scores"]["rerank"], float) for h in hits)
    plain = call(palace, "search", {"query": "where do I live", "limit": 3})["results"]
    assert all(h["scores"]["rerank"] is None for h in plain)


def test_the_benchmark_runs_one_plan_per_setting():
    from palazzo.bench.longmemeval import rerank_plans
    from palazzo.errors import PalazzoError

    assert rerank_plans(["none", "recency", "mmr", "composite"], [7, 30], [0.9]) == [
        {}, {"rerank": "recency", "half_life_days": 7}, {"rerank": "recency",
                                                         "half_life_days": 30},
        {"rerank": "mmr", "mmr_lambda": 0.9}, {"rerank": "composite", "half_life_days": 7},
        {"rerank": "composite", "half_life_days": 30}]
    with pytest.raises(PalazzoError, match="unknown re-ranker"):
        rerank_plans(["newest"], [7], [0.9])
