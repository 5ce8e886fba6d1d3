"""The learned pheromone term of hybrid search (the rest of search is tested through ops)."""

import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.palace import Palace
from palazzo.retrieval.search import RRF_K, search


@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=None)
    for i in range(70):
        p.add_drawer("w", "r", f"note {i} about gardening tomatoes and basil number {i}")
    p.add_drawer("w", "r", "the violin lesson with Marta moved to Thursday")
    p.add_drawer("w", "r", "Marta said the violin needs new strings before the lesson")
    return p


def test_the_term_is_off_by_default_and_weight_zero_changes_nothing(palace):
    call(palace, "pheromone_deposit", {"drawer_ids": [palace.drawers.ids[5]]})
    plain = search(palace, "violin lesson Marta", limit=5)
    zero = search(palace, "violin lesson Marta", limit=5, pheromone=0.0)
    assert [h.drawer_id for h in plain] == [h.drawer_id for h in zero]
    assert all(h.pheromone is None for h in plain)


def test_a_rewarded_candidate_moves_up_by_exactly_its_term(palace):
    before = search(palace, "violin lesson Marta", limit=5)
    second = before[1]
    call(palace, "pheromone_deposit", {"drawer_ids": [second.drawer_id], "reward": 0.8})
    after = search(palace, "violin lesson Marta", limit=5, pheromone=2.0)
    assert after[0].drawer_id == second.drawer_id
    assert after[0].pheromone == pytest.approx(2.0 * 0.8 / (RRF_K + 1))
    assert after[0].score == pytest.approx(second.score + 2.0 * 0.8 / (RRF_K + 1))
    assert after[1].pheromone == 0.0


def test_exploitation_saturates_at_one(palace):
    top = search(palace, "violin lesson Marta", limit=2)[1]
    for _ in range(5):
        call(palace, "pheromone_deposit", {"drawer_ids": [top.drawer_id]})
    hit = next(h for h in search(palace, "violin lesson Marta", limit=2, pheromone=1.0)
               if h.drawer_id == top.drawer_id)
    assert hit.pheromone == pytest.approx(1.0 / (RRF_K + 1))


def test_a_drawer_neither_list_found_gains_nothing(palace):
    query = "violin lesson Marta"
    vector_order = [h.drawer_id for h in search(palace, query, limit=80, mode="vector")]
    matched = {h.drawer_id for h in search(palace, query, limit=80, mode="bm25")}
    # Beyond the vector list's depth (50 for limit 1) and sharing no word with the query.
    outsider = next(d for d in reversed(vector_order[50:]) if d not in matched)
    for _ in range(20):
        call(palace, "pheromone_deposit", {"drawer_ids": [outsider]})
    hits = search(palace, query, limit=1, pheromone=10.0)
    assert hits[0].drawer_id != outsider
    assert outsider not in {h.drawer_id for h in hits}


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
