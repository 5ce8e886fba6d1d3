"""kg_entities (search-as-you-type over entities and aliases) and kg_reopen (the undo of
kg_invalidate), through the registry; and the KG's date errors naming their field."""

import time

import pytest

from palazzo import call
from palazzo.errors import ValidationError
from palazzo.ops import default_registry
from palazzo.palace import Palace

NOW = 1_700_000_000.0


@pytest.fixture
def palace():
    p = Palace(clock=lambda: NOW)
    call(p, "kg_add", {"subject": "Jonas Weber", "predicate": "lives in", "object": "Lisbon"})
    call(p, "kg_add", {"subject": "Jonas Weber", "predicate": "works at",
                       "object": "Google Cloud Platform"})
    call(p, "kg_add", {"subject": "Maria", "predicate": "knows", "object": "Jonas Weber"})
    call(p, "kg_add", {"subject": "Joana", "predicate": "lives in", "object": "Porto"})
    return p


def keys(out):
    return [e["key"] for e in out["entities"]]


def test_entities_match_by_start_then_word_start_then_anywhere_with_fact_counts(palace):
    out = call(palace, "kg_entities", {"query": "Jo"})
    assert keys(out) == ["jonas-weber", "joana"]  # both start with "jo": more facts first
    first = out["entities"][0]
    assert (first["name"], first["facts"], first["current"], first["alias"]) == \
        ("Jonas Weber", 3, 3, None)
    assert keys(call(palace, "kg_entities", {"query": "weber"})) == ["jonas-weber"]
    assert keys(call(palace, "kg_entities", {"query": "isbo"})) == ["lisbon"]
    assert keys(call(palace, "kg_entities", {"query": "lisbon"})) == ["lisbon"]
    assert call(palace, "kg_entities", {"query": "zz"}) == {
        "query": "zz", "count": 0, "truncated": False, "entities": []}


def test_an_alias_finds_its_entity_and_says_so(palace):
    out = call(palace, "kg_entities", {"query": "GCP"})
    assert keys(out) == ["google-cloud-platform"]
    assert out["entities"][0]["alias"] == "gcp"
    # An alias whose entity does not exist (aws) finds nothing.
    assert call(palace, "kg_entities", {"query": "aws"})["count"] == 0


def test_no_query_lists_every_entity_most_facts_first_and_the_limit_truncates(palace):
    out = call(palace, "kg_entities", {"limit": 2})
    assert out["count"] == 6 and out["truncated"] is True
    assert keys(out)[0] == "jonas-weber"


def test_an_ended_fact_counts_but_is_not_current(palace):
    tid = call(palace, "kg_query", {"entity": "Joana"})["facts"][0]["id"]
    call(palace, "kg_invalidate", {"triple_id": tid})
    joana = call(palace, "kg_entities", {"query": "joana"})["entities"][0]
    assert (joana["facts"], joana["current"]) == (1, 0)


def test_reopen_undoes_invalidate_exactly(palace):
    fact = call(palace, "kg_query", {"entity": "Joana"})["facts"][0]
    before = {k: v for k, v in fact.items() if k != "direction"}
    edges_before = len(list(palace.edges.live()))
    call(palace, "kg_invalidate", {"triple_id": fact["id"], "ended": "2024-01-01"})
    assert len(list(palace.edges.live())) == edges_before - 1  # its RELATES_TO edge went
    out = call(palace, "kg_reopen", {"triple_id": fact["id"]})
    assert out["reopened"] == before
    assert len(list(palace.edges.live())) == edges_before
    assert default_registry().get("kg_reopen").mutates is True


def test_reopen_refuses_a_current_fact_and_one_that_would_be_stored_twice(palace):
    fact = call(palace, "kg_query", {"entity": "Joana"})["facts"][0]
    with pytest.raises(ValidationError, match="current already"):
        call(palace, "kg_reopen", {"triple_id": fact["id"]})
    call(palace, "kg_invalidate", {"triple_id": fact["id"], "ended": "2024-01-01"})
    call(palace, "kg_add", {"subject": "Joana", "predicate": "lives in", "object": "Porto",
                            "valid_from": "2024-06-01"})
    with pytest.raises(ValidationError, match="cannot be reopened"):
        call(palace, "kg_reopen", {"triple_id": fact["id"]})
    assert palace.kg.get(fact["id"]).valid_to == "2024-01-01"  # refused: nothing changed


def test_a_bad_date_names_its_field(palace):
    with pytest.raises(ValidationError) as info:
        call(palace, "kg_query", {"entity": "Joana", "as_of": "not a date"})
    assert info.value.field == "as_of"
    assert str(info.value).startswith("As of 'not a date' is not an ISO 8601 date")
    with pytest.raises(ValidationError) as info:
        call(palace, "kg_query", {"entity": "Joana", "as_of": "2020"})
    assert info.value.field == "as_of"
    assert str(info.value) == ("As of is too short: 4 characters, it needs at least 10.")


def test_lookup_at_five_thousand_entities_takes_milliseconds():
    p = Palace(clock=lambda: NOW)
    calls = [{"name": "kg_add", "args": {"subject": f"person {i:04d}", "predicate": "knows",
                                         "object": f"place {i % 500:03d}"}}
             for i in range(4_500)]
    call(p, "batch", {"calls": calls})
    assert call(p, "kg_stats")["entities"] == 5_000
    t0 = time.perf_counter()
    for q in ("pe", "person 12", "place 4", "zz"):
        call(p, "kg_entities", {"query": q, "limit": 10})
    each = (time.perf_counter() - t0) / 4
    assert call(p, "kg_entities", {"query": "place 4", "limit": 3})["count"] == 100
    assert each < 0.25, each  # ~5 ms on the 2-core CI machine; generous for slow runners
