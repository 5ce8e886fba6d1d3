"""The time prior of hybrid search: questions about the present prefer the newer drawers found."""

import numpy as np
import pytest

from palazzo import call
from palazzo.embed.hashing import HashEmbedder
from palazzo.errors import ValidationError
from palazzo.palace import Palace
from palazzo.retrieval import recency
from palazzo.retrieval.search import RRF_K, search

DAY = 86_400.0


@pytest.fixture
def palace():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 1.0, similar_threshold=None)
    for i in range(30):
        p.add_drawer("w", "r", f"note {i} about gardening tomatoes and basil", created_at=i * DAY)
    # The old fact matches the question's words better than the new one.
    p.add_drawer("w", "r", "I live in Lisbon, I live in a flat in Lisbon near the river",
                 created_at=100 * DAY)
    p.add_drawer("w", "r", "we moved: I live in Denver since the spring",
                 created_at=400 * DAY)
    return p


@pytest.mark.parametrize("query", ["Where do I live now?", "where do I currently live",
                                   "Which city do I live in these days?",
                                   "What's my LATEST address?", "do I still live there"])
def test_questions_about_the_present_are_recognised(query):
    assert recency.asks_for_present(query)


@pytest.mark.parametrize("query", ["Where did I live in 2020?", "snow in Denver",
                                   "knowledge of the currents", "the recentest"])
def test_other_questions_are_not(query):
    assert not recency.asks_for_present(query)


def test_a_present_question_lifts_the_newer_drawers_by_exactly_their_terms(palace):
    plain = search(palace, "where do I live now", limit=40, recency=0.0)
    assert "Lisbon" in plain[0].content and "Denver" in plain[1].content
    assert all(h.recency is None for h in plain)
    timed = search(palace, "where do I live now", limit=5)
    before = {h.drawer_id: h.score for h in plain}
    for hit in timed:
        assert hit.score == pytest.approx(before[hit.drawer_id] + hit.recency)
    terms = {h.content.split()[-1]: h.recency for h in timed}
    # The newest candidate gains one first place in one list, the next one a second place.
    assert terms["spring"] == pytest.approx(1.0 / (RRF_K + 1))
    assert terms["river"] == pytest.approx(1.0 / (RRF_K + 2))
    # At weight 1 that breaks near ties only; a heavier weight lets the newer fact lead.
    assert "Lisbon" in timed[0].content
    assert "Denver" in search(palace, "where do I live now", limit=5, recency=3.0)[0].content


def test_a_question_not_about_the_present_is_left_alone(palace):
    a = search(palace, "where do I live", limit=5)
    b = search(palace, "where do I live", limit=5, recency=0.0)
    assert [(h.drawer_id, h.score) for h in a] == [(h.drawer_id, h.score) for h in b]
    assert all(h.recency is None for h in a)


def test_drawers_of_one_time_keep_their_order():
    p = Palace(embedder=HashEmbedder(), clock=lambda: 5.0, similar_threshold=None)
    for text in ("I live in Lisbon, I live near the river", "now I live in Denver",
                 "tomatoes"):
        p.add_drawer("w", "r", text)
    a = search(p, "where do I live now", limit=3)
    b = search(p, "where do I live now", limit=3, recency=0.0)
    assert [h.drawer_id for h in a] == [h.drawer_id for h in b]
    assert all(h.recency == 0.0 for h in a)


def test_the_term_respects_the_room_filter_and_only_rewards_what_was_found(palace):
    palace.add_drawer("elsewhere", "r", "I live in Tokyo now", created_at=900 * DAY)
    hits = search(palace, "where do I live now", limit=5, wing="w")
    assert all(h.wing == "w" for h in hits)
    # An unrelated newer drawer does not enter the results through the time prior.
    palace.add_drawer("w", "r", "bought a kettle", created_at=1000 * DAY)
    assert all("kettle" not in h.content for h in search(palace, "where do I live now",
                                                         limit=5))


def test_term_places_ties_and_missing_times():
    fused = np.array([0.5, 0.4, 0.3, 0.0, 0.2])
    times = np.array([10.0, np.nan, 10.0, 99.0, 20.0])
    out = recency.term(times, fused, 1.0, k=0)
    # Row 4 is newest (place 0); rows 0 and 2 share place 1; row 1 (no time) is last; row 3
    # scored 0 and is not a candidate.
    assert out.tolist() == pytest.approx([1 / 2, 1 / 4, 1 / 2, 0.0, 1 / 1])
    assert not recency.term(times, fused, 0.0).any()


def test_the_linear_term_of_a_z_fusion_ranks_negative_scores_too():
    fused = np.array([-0.5, 1.0, -2.0, 0.5])
    times = np.array([40.0, 10.0, 30.0, 20.0])
    out = recency.term(times, fused, 2.0, top=3, linear=True)
    # the best three of any sign (rows 1, 3, 0); row 0 newest among them gains the whole
    # weight, row 3 two thirds, row 1 one third; row 2 is not a candidate
    assert out.tolist() == pytest.approx([2.0, 2.0 / 3, 0.0, 4.0 / 3])
    assert recency.term(times, fused, 2.0, top=3)[0] == 0.0  # ranks positive scores only


def test_bad_weights_are_refused(palace):
    for bad in (-1, 11):
        with pytest.raises(ValidationError, match="recency"):
            search(palace, "where now", recency=bad)
    with pytest.raises(ValidationError):
        call(palace, "search", {"query": "where now", "recency": 12})
    hits = call(palace, "search", {"query": "where do I live now", "limit": 2})["results"]
    assert [h["scores"]["recency"] for h in hits] == pytest.approx(
        [1 / (RRF_K + 2), 1 / (RRF_K + 1)])
