"""Query trails: rewards kept with their query's words, read back only near it."""

import json

import pytest

from palazzo import call
from palazzo.errors import ImportRejected, ValidationError
from palazzo.palace import Palace
from palazzo.retrieval.bm25 import Tokenizer
from palazzo.stigmergy import trails
from palazzo.stigmergy.trails import FLOOR, QueryTrails, overlap, pull


def test_overlap_and_pull_start_at_half_the_words_shared():
    a, b = frozenset({"violin", "lesson"}), frozenset({"violin", "lesson", "marta"})
    assert overlap(a, b) == pytest.approx(2 / 3)
    assert overlap(a, frozenset()) == 0.0
    assert pull(1.0) == 1.0
    assert pull(0.5) == 0.0
    assert pull(0.75) == pytest.approx(0.5)


def test_region_is_the_distinct_terms_and_stopwords_leave_none():
    tok = Tokenizer()
    terms = QueryTrails.region(tok, "When is the violin lesson? The violin lesson!")
    assert terms == frozenset(tok("violin lesson"))
    assert QueryTrails.region(tok, "what is the") == frozenset()
    t = QueryTrails()
    assert t.deposit(frozenset(), ["a"], [1.0]) == 0  # no words, no trail


def test_deposits_add_up_and_strengths_weigh_by_nearness():
    t = QueryTrails()
    q = frozenset({"violin", "lesson", "marta"})
    t.deposit(q, ["a", "b"], [1.0, 0.5])
    t.deposit(q, ["a"], [0.25])
    assert len(t) == 2
    assert t.strengths(q) == {"a": 1.25, "b": 0.5}
    near = frozenset({"violin", "lesson", "marta", "thursday"})  # overlap 3/4: pull 1/2
    assert t.strengths(near) == pytest.approx({"a": 0.625, "b": 0.25})
    assert t.strengths(frozenset({"marta", "cake"})) == {}  # overlap 1/4


def test_decay_forgets_trails_under_the_floor_and_their_terms():
    t = QueryTrails()
    t.deposit(frozenset({"x", "y"}), ["a", "b"], [1.0, 1.5 * FLOOR])
    t.deposit(frozenset({"y", "z"}), ["c"], [0.8])
    assert t.by_term == {"x": {frozenset("xy")}, "y": {frozenset("xy"), frozenset("yz")},
                         "z": {frozenset("yz")}}
    assert t.decay(0.5) == 1
    assert t.strengths(frozenset({"x", "y"})) == {"a": 0.5}
    assert t.decay(2 * FLOOR) == 1  # a: 0.5 → 0.001 stays; c: 0.4 → 0.0008 goes
    assert t.by_term == {"x": {frozenset("xy")}, "y": {frozenset("xy")}}
    assert t.decay(0.5) == 1
    assert len(t) == 0 and not t.by_terms and not t.by_term


def test_the_weakest_go_first_past_the_cap(monkeypatch):
    monkeypatch.setattr(trails, "MAX_TRAILS", 3)
    t = QueryTrails()
    t.deposit(frozenset({"x"}), ["a", "b"], [0.2, 0.9])
    t.deposit(frozenset({"y"}), ["c", "d"], [0.1, 0.5])
    assert len(t) == 3
    assert t.strengths(frozenset({"x"})) == {"b": 0.9, "a": 0.2}
    assert t.strengths(frozenset({"y"})) == {"d": 0.5}


def test_json_round_trip_and_bad_records_are_refused_by_place():
    t = QueryTrails()
    t.deposit(frozenset({"violin", "lesson"}), ["a", "b"], [1.0, 0.5])
    t.deposit(frozenset({"cake"}), ["c"], [0.3])
    t.decay(0.9)
    t.decay(0.9)  # 0.3 → 0.24300000000000002: strengths come back exactly through JSON
    back = QueryTrails.from_json(json.loads(json.dumps(t.to_json())), "x.trails")
    assert back.by_terms == t.by_terms and back.by_term == t.by_term
    bad = [
        ([{"terms": [], "drawers": {"a": 1}}], r"x.trails\[0\].terms"),
        ([{"terms": ["a", "a"], "drawers": {"a": 1}}], r"x.trails\[0\].terms"),
        ([{"terms": ["a"], "drawers": {}}], r"x.trails\[0\].drawers"),
        ([{"terms": ["a"], "drawers": {"d": -1}}], r"x.trails\[0\].drawers\['d'\]"),
        ([{"terms": ["a"], "drawers": {"d": True}}], r"positive number"),
        ([{"terms": ["a"], "drawers": {"d": 1}}, {"terms": ["a"], "drawers": {"e": 1}}],
         r"x.trails\[1\].terms appear twice"),
        ("nope", "x.trails must be a list"),
    ]
    for value, message in bad:
        with pytest.raises(ImportRejected, match=message):
            QueryTrails.from_json(value, "x.trails")


def test_pheromone_use_with_a_query_leaves_a_trail_and_a_search_does_not():
    p = Palace(clock=lambda: 1.0)
    did, _ = p.add_drawer("w", "r", "the violin lesson moved to Thursday")
    out = call(p, "pheromone_use", {"action": "helpful", "drawer_ids": [did],
                                    "query": "violin lesson"})
    assert out["trails"] == 1
    assert p.trails.strengths(QueryTrails.region(p.text_index.tokenizer,
                                                 "violin lesson")) == {did: 1.0}
    out = call(p, "pheromone_use", {"action": "search", "drawer_ids": [did],
                                    "query": "cello"})
    assert "trails" not in out and len(p.trails) == 1
    out = call(p, "pheromone_use", {"action": "open", "drawer_ids": [did]})
    assert "trails" not in out and len(p.trails) == 1
    with pytest.raises(ValidationError, match="'query' goes with 'drawer_ids'"):
        call(p, "pheromone_deposit", {"path": [["a", "b", "HALL"]], "query": "violin"})
    assert len(p.trails) == 1
