"""Extraction on add and the extract operation, enrichment, and extraction on replay."""

import pytest

from palazzo import call
from palazzo.core.model import EdgeKind
from palazzo.errors import ValidationError
from palazzo.formats.palacefile import export_palace
from palazzo.memory.kg import ENTITY_PREFIX
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace

DAY = 1_714_521_600.0  # 2024-05-01


def _references(p: Palace, drawer_id: str) -> dict[str, float]:
    e = p.edges
    return {e.dst[i][len(ENTITY_PREFIX):]: e.props[i]["confidence"]
            for i in e.out.get(drawer_id, []) if e.kind[i] is EdgeKind.REFERENCES}


def _facts(p: Palace) -> set[tuple]:
    return {(t.subject, t.predicate, t.object, t.valid_from, t.source_drawer)
            for t in p.kg.triples.values()}


def test_a_new_drawer_gets_its_entities_and_facts_with_evidence():
    p = Palace(clock=lambda: DAY)
    did = call(p, "add_drawer", {"wing": "me", "room": "moves", "content":
                                 "I moved to Lisbon last month. My team uses k8s."})["drawer_id"]
    refs = _references(p, did)
    assert refs["lisbon"] == 0.6 and refs["kubernetes"] == 0.9  # a name; an alias of k8s
    facts = _facts(p)
    # "last month" is read from the day the drawer was written
    assert ("user", "moved_to", "lisbon", "2024-04-01", did) in facts
    assert all(t.statement_type == "observation" for t in p.kg.triples.values())
    assert p.entities[ENTITY_PREFIX + "lisbon"].name == "Lisbon"


def test_undated_facts_hold_from_the_day_they_were_written():
    p = Palace(clock=lambda: DAY)
    did = call(p, "add_drawer", {"wing": "w", "room": "r",
                                 "content": "We decided to use Postgres."})["drawer_id"]
    [fact] = [f for f in _facts(p) if f[1] == "decided"]
    assert fact[3] == "2024-05-01" and fact[4] == did
    assert call(p, "kg_query", {"entity": "user", "as_of": "2024-01-01"})["count"] == 0


def test_an_assistants_turn_gives_mentions_but_no_facts():
    p = Palace(clock=lambda: DAY)
    call(p, "import_conversation", {"conversation": "c1", "messages": [
        {"role": "user", "content": "I live in Porto."},
        {"role": "assistant", "content": "I live in the cloud and I use Python."}]})
    assert {f[:3] for f in _facts(p)} == {("user", "lives_in", "porto")}
    assert ENTITY_PREFIX + "python" in p.entities  # mentioned, linked, no fact


def test_the_extract_operation_covers_old_drawers_once():
    p = Palace(clock=lambda: DAY, extract_on_add=False)
    did = call(p, "add_drawer", {"wing": "w", "room": "r",
                                 "content": "Marta moved to Berlin on 2019-03-02."})["drawer_id"]
    assert _facts(p) == set() and _references(p, did) == {}
    first = call(p, "extract", {})
    assert first["drawers"] == 1 and first["facts"] == 1 and first["mentions"] == 2
    assert ("marta", "moved_to", "berlin", "2019-03-02", did) in _facts(p)
    again = call(p, "extract", {"wing": "w"})
    assert again["facts"] == 0 and again["mentions"] == 0 and again["entities"] == 0


def test_a_batch_extracts_its_drawers_together():
    p = Palace(clock=lambda: DAY)
    out = call(p, "batch", {"calls": [
        {"name": "add_drawer", "args": {"wing": "w", "room": "r", "content": t}}
        for t in ("I prefer tea over coffee.", "Our API runs on FastAPI.")]})
    assert len(out["results"]) == 2
    assert any(f[1] == "prefers" for f in _facts(p))
    assert "fastapi" in _references(p, out["results"][1]["drawer_id"])


def test_enrich_joins_hits_with_the_graph_and_reaches_the_second_hop():
    p = Palace(clock=lambda: DAY)
    call(p, "add_drawer", {"wing": "w", "room": "family",
                           "content": "My sister Maria moved to Porto last year."})
    tarts = call(p, "add_drawer", {"wing": "w", "room": "food", "content":
                                   "The custard tarts in Porto are the best ones."})["drawer_id"]
    call(p, "add_drawer", {"wing": "w", "room": "misc", "content": "Tea at five."})
    out = call(p, "enrich", {"query": "What should I eat when I visit Maria?"})
    assert out["query_entities"] == ["maria"]
    assert out["entities"]["porto"]["hops"] == 1
    ids = [r["drawer_id"] for r in out["results"]]
    assert tarts in ids  # no shared word with the question: found through Porto
    reached = next(r for r in out["results"] if r["drawer_id"] == tarts)
    assert reached["via"] == "porto" and reached["scores"]["structural"] == 0.5
    assert any(f["predicate"] == "moved_to" for f in out["facts"])
    with pytest.raises(ValidationError):
        call(p, "enrich", {"query": "x", "alpha": 2})


def test_replay_extracts_only_what_was_extracted_when_it_was_written():
    space = MemorySpace()
    store = PalaceStore(space, lambda **kw: Palace(clock=lambda: DAY, **kw))
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "I moved to Lisbon."})
    store.palace.extract_on_add = False  # as a palazzo from before extraction wrote it
    store.call("add_drawer", {"wing": "w", "room": "r", "content": "I moved to Madrid."})
    before = export_palace(store.palace, exported_at=0.0)
    again = PalaceStore(space, lambda **kw: Palace(clock=lambda: DAY, **kw))
    assert export_palace(again.palace, exported_at=0.0) == before
    assert {f[2] for f in _facts(again.palace)} == {"lisbon"}
    assert again.palace.extract_on_add is True  # new writes extract again


def test_search_is_enriched_by_default_and_answers_as_the_enrich_operation():
    p = Palace(clock=lambda: DAY)
    for room, text in (("home", "I lived in Lisbon when I adopted Kiwi, my parrot."),
                       ("work", "I work at Tidewater Energy as an analyst.")):
        call(p, "add_drawer", {"wing": "w", "room": room, "content": text})
    plain = call(p, "search", {"query": "which company employed me?", "enrich": 1})
    assert plain["results"] == []  # no word in common (and no vectors here)
    assert "query_entities" not in plain  # enrich 1 keeps the fused order: no graph work
    both = [call(p, "search", {"query": "which company employed me?"}),
            call(p, "search", {"query": "which company employed me?", "enrich": 0.9}),
            call(p, "enrich", {"query": "which company employed me?", "alpha": 0.9})]
    assert both[0] == both[1] == both[2]
    top = both[0]["results"][0]
    # the question names no entity and shares no word with the drawer; the fact
    # "user works_at Tidewater Energy" is evidence for "employed"
    assert "Tidewater" in top["content"] and top["scores"]["structural"] == 1.0
    assert "user" in both[0]["query_entities"]
    assert top["via"] == "user" and top["scores"]["vector_rank"] is None  # the graph found it
    # a wing or room filter holds for drawers the graph brings in as well
    assert call(p, "search", {"query": "which company employed me?",
                              "room": "home"})["results"] == []
    # a re-ranked search is not enriched unless asked
    assert "query_entities" not in call(p, "search", {"query": "Lisbon", "rerank": "mmr"})


def test_a_counting_question_takes_as_evidence_only_facts_about_what_it_counts():
    p = Palace(clock=lambda: DAY)
    groceries = call(p, "add_drawer", {"wing": "w", "room": "a", "content":
                                       "I bought groceries at Walmart yesterday."})["drawer_id"]
    kits = call(p, "add_drawer", {"wing": "w", "room": "b", "content":
                                  "I bought two model kits last week."})["drawer_id"]
    assert {f[1] for f in _facts(p)} == {"bought"}
    out = call(p, "enrich", {"query": "How many model kits have I bought?"})
    structural = {r["drawer_id"]: r["scores"]["structural"] for r in out["results"]}
    assert structural[kits] == 1.0 and structural.get(groceries, 0.0) == 0.0
    which = call(p, "enrich", {"query": "Which store did I go to when I bought groceries?"})
    assert {r["drawer_id"] for r in which["results"]
            if r["scores"]["structural"] == 1.0} == {groceries, kits}
