"""The learned pheromone term of hybrid search (the rest of search is tested through ops)."""

import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.palace import Palace
from palazzo.retrieval.search import MIN_DEPTH, RRF_K, search


@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=None)
    for i in range(70):
        p.add_drawer("w", "r", f"note {i} about gardening tomatoes and basil number {i}")
    p.add_drawer("w", "r", "the violin lesson with Marta moved to Thursday")
    p.add_drawer("w", "r", "Marta said the violin needs new strings before the lesson")
    return p


def test_the_term_is_off_by_default_and_weight_zero_changes_nothing(palace):
    call(palace, "pheromone_deposit",
         {"drawer_ids": [palace.drawers.ids[5]], "query": "violin lesson Marta"})
    plain = search(palace, "violin lesson Marta", limit=5)
    zero = search(palace, "violin lesson Marta", limit=5, pheromone=0.0)
    assert [h.drawer_id for h in plain] == [h.drawer_id for h in zero]
    assert all(h.pheromone is None for h in plain)


Q = "violin lesson Marta"


def test_a_rewarded_candidate_moves_up_by_exactly_its_term(palace):
    before = search(palace, Q, limit=5)
    second = before[1]
    call(palace, "pheromone_deposit",
         {"drawer_ids": [second.drawer_id], "reward": 0.8, "query": Q})
    after = search(palace, Q, limit=5, pheromone=2.0)
    assert after[0].drawer_id == second.drawer_id
    assert after[0].pheromone == pytest.approx(2.0 * 0.8 / (RRF_K + 1))
    assert after[0].score == pytest.approx(second.score + 2.0 * 0.8 / (RRF_K + 1))
    assert after[1].pheromone == 0.0


def test_a_trail_saturates_at_one(palace):
    top = search(palace, Q, limit=2)[1]
    for _ in range(5):
        call(palace, "pheromone_deposit", {"drawer_ids": [top.drawer_id], "query": Q})
    hit = next(h for h in search(palace, Q, limit=2, pheromone=1.0)
               if h.drawer_id == top.drawer_id)
    assert hit.pheromone == pytest.approx(1.0 / (RRF_K + 1))


def test_a_reward_without_its_query_or_for_another_query_moves_nothing(palace):
    second = search(palace, Q, limit=5)[1].drawer_id
    plain = [h.drawer_id for h in search(palace, Q, limit=5, pheromone=10.0)]
    call(palace, "pheromone_deposit", {"drawer_ids": [second]})  # no query: heat only
    call(palace, "pheromone_deposit",  # one of three words shared: overlap 1/5
         {"drawer_ids": [second], "query": "Marta's birthday cake recipe"})
    hits = search(palace, Q, limit=5, pheromone=10.0)
    assert [h.drawer_id for h in hits] == plain
    assert all(h.pheromone == 0.0 for h in hits)


def test_a_query_sharing_most_words_gets_part_of_the_trail(palace):
    second = search(palace, Q, limit=5)[1].drawer_id
    call(palace, "pheromone_deposit", {"drawer_ids": [second], "query": Q})
    # {violin, lesson, marta, thursday} against {violin, lesson, marta}: overlap 3/4, pull 1/2
    near = search(palace, "violin lesson Marta Thursday", limit=5, pheromone=1.0)
    got = next(h for h in near if h.drawer_id == second)
    assert got.pheromone == pytest.approx(0.5 / (RRF_K + 1))


def test_a_trail_finds_its_drawer_outside_both_lists_for_its_own_query_only(palace):
    vector_order = [h.drawer_id for h in search(palace, Q, limit=80, mode="vector")]
    matched = {h.drawer_id for h in search(palace, Q, limit=80, mode="bm25")}
    # Beyond the vector list's depth (50 for limit 1) and sharing no word with the query.
    outsider = next(d for d in reversed(vector_order[50:]) if d not in matched)
    assert outsider not in {h.drawer_id for h in search(palace, Q, limit=10)}
    call(palace, "pheromone_deposit", {"drawer_ids": [outsider], "query": Q})
    assert search(palace, Q, limit=1, pheromone=10.0)[0].drawer_id == outsider
    other = search(palace, "gardening tomatoes", limit=10, pheromone=10.0)
    assert outsider not in {h.drawer_id for h in other[:1]}
    assert all(h.pheromone == 0.0 for h in other)


def test_trails_decay_with_exploitation_and_a_deleted_drawers_trail_is_skipped(palace):
    second = search(palace, Q, limit=5)[1].drawer_id
    call(palace, "pheromone_deposit", {"drawer_ids": [second], "query": Q, "reward": 0.5})
    call(palace, "decay_now", {"cycles": 1})
    hit = next(h for h in search(palace, Q, limit=5, pheromone=1.0) if h.drawer_id == second)
    from palazzo.stigmergy.pheromone import RHO
    assert hit.pheromone == pytest.approx(0.5 * (1 - RHO["exploitation"]) / (RRF_K + 1))
    call(palace, "delete_drawer", {"drawer_id": second})
    assert all(h.pheromone == 0.0 for h in search(palace, Q, limit=5, pheromone=1.0))


def test_bad_weights_are_refused(palace):
    with pytest.raises(ValidationError, match="between 0 and 10"):
        search(palace, "violin", pheromone=11)
    with pytest.raises(ValidationError, match="hybrid only"):
        search(palace, "violin", pheromone=1.0, mode="bm25")
    with pytest.raises(ValidationError):
        call(palace, "search", {"query": "violin", "pheromone": -1})


def test_a_huge_query_is_read_up_to_max_query_characters():
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.palace import Palace
    from palazzo.retrieval.search import MAX_QUERY

    p = Palace(embedder=HashEmbedder(), clock=lambda: 0.0)
    p.add_drawer("w", "r", "the lighthouse keeper's log")
    huge = "lighthouse keeper " + "x" * (4 << 20)  # the schema admits up to 5,000,000
    out = call(p, "search", {"query": huge})
    assert out["query_cut_to"] == MAX_QUERY and len(out["query"]) == MAX_QUERY
    assert out["results"][0]["content"].startswith("the lighthouse")
    assert "query_cut_to" not in call(p, "search", {"query": "lighthouse"})


def test_rrf_k_and_the_vector_weight_are_the_fusions_terms(palace):
    query = "Marta violin strings"
    assert [h.drawer_id for h in search(palace, query, vector_weight=1.0)] == \
        [h.drawer_id for h in search(palace, query)]  # the default is an even fusion
    for k, weight in ((0, 1.0), (0, 3.0), (10, 0.5)):
        for hit in search(palace, query, limit=5, rrf_k=k, vector_weight=weight):
            expected = 0.0
            if hit.vector_rank is not None:
                expected += weight / (k + hit.vector_rank)
            if hit.bm25_rank is not None:
                expected += 1.0 / (k + hit.bm25_rank)
            assert hit.score == pytest.approx(expected)
    # A huge vector weight gives the vector order.
    assert [h.drawer_id for h in search(palace, query, limit=5, vector_weight=1e6)] == \
        [h.drawer_id for h in search(palace, query, limit=5, mode="vector")]


def test_standout_list_weights_scale_each_list_by_how_far_its_best_stands_out(palace):
    import numpy as np

    from palazzo.retrieval import fusion
    from palazzo.retrieval.search import vector_scores

    query = "Marta violin strings"
    n = palace.drawers.size
    vec = vector_scores(palace, query)
    bm = palace.text_index.scores(query, size=n)
    mask = palace.drawers.mask(None, None)
    depth = MIN_DEPTH  # the lists' depth for a search of 5
    lists = [(vec, fusion.rank(vec, mask, depth, positive=False)),
             (bm, fusion.rank(bm, mask, depth))]
    wv, wb = fusion.standout_weights(lists)
    assert not np.isclose(wv, wb)
    for hit in search(palace, query, limit=5, list_weights="standout", events=0):
        expected = 0.0
        if hit.vector_rank is not None:
            expected += wv / (RRF_K + hit.vector_rank)
        if hit.bm25_rank is not None:
            expected += wb / (RRF_K + hit.bm25_rank)
        assert hit.score == pytest.approx(expected)
    with pytest.raises(ValidationError, match="list_weights"):
        search(palace, query, list_weights="loud")


def test_zsum_adds_the_two_lists_z_scores_to_the_fused_score(palace):
    import numpy as np

    from palazzo.retrieval import fusion
    from palazzo.retrieval.search import vector_scores

    query = "Marta violin strings"
    n = palace.drawers.size
    mask = palace.drawers.mask(None, None)
    z = fusion.zsum(vector_scores(palace, query), palace.text_index.scores(query, size=n),
                    mask)
    plain = {h.drawer_id: h.score for h in search(palace, query, limit=n, events=0)}
    hits = search(palace, query, limit=n, events=0, zsum=0.02)
    # Every drawer in scope ranks (the z-sum can be negative), best first, and each one's
    # score is its rank fusion's (0 outside both lists) plus 0.02 times its z-sum.
    assert len(hits) == n
    for hit in hits:
        row = palace.row(hit.drawer_id)
        assert hit.score == pytest.approx(plain.get(hit.drawer_id, 0.0) + 0.02 * z[row])
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert np.isfinite(z).all() and np.ptp(z) > 0  # every drawer in scope has a z-sum
    for bad in (-0.1, 2.0):
        with pytest.raises(ValidationError, match="zsum"):
            search(palace, query, zsum=bad)
