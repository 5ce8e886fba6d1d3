"""The knowledge-graph operations through the registry, and the KG section of the palace file."""

import copy
import json
from datetime import date

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palazzo import bind, call
from palazzo.errors import ImportRejected, NotFound, ValidationError
from palazzo.formats.palacefile import export_palace
from palazzo.memory.kg import DEFAULT_ALIASES, triple_id
from palazzo.ops import default_registry
from palazzo.ops.kg import operation
from palazzo.palace import Palace

NOW = 1_700_000_000.0
KG_OPS = {"kg_add", "kg_query", "kg_invalidate", "kg_supersede", "kg_timeline",
          "kg_traverse", "kg_contradictions", "kg_stats", "kg_alias", "kg_aliases",
          "kg_entity"}
MUTATING = {"kg_add", "kg_invalidate", "kg_supersede", "kg_alias", "kg_entity"}


@pytest.fixture
def palace():
    # These tests hold the graph's own rules; extraction on add (tested in
    # tests/palazzo/test_palace.py and memory/test_extraction.py) would add facts of its own.
    p = Palace(extract_on_add=False, clock=lambda: NOW)
    p.add_drawer("people", "alice", "Alice joined Acme in 2020 and moved to Beta in 2023.")
    return p


def relates(palace):
    e = palace.edges
    return {(e.src[i], e.dst[i]): e.props[i] for i in e.live() if e.kind[i].value ==
            "RELATES_TO"}


def snapshot(palace):
    return export_palace(palace, vectors=None, exported_at=0.0)


def test_registered_with_schemas_and_mutation_flags():
    reg = default_registry()
    assert set(reg.names()) >= KG_OPS
    for name in KG_OPS:
        op = reg.get(name)
        assert op.mutates == (name in MUTATING), name
        assert op.schema["type"] == "object" and op.schema["additionalProperties"] is False
        for prop in op.schema["properties"].values():
            assert prop.get("type") or prop.get("enum"), (name, prop)
    hops = reg.get("kg_traverse").schema["properties"]
    assert hops["max_hops"]["maximum"] == 6 and hops["max_results"]["maximum"] == 1000
    with pytest.raises(ValueError):
        reg.add(operation.ops[0])  # a second registration is a bug


def test_kg_add_reports_created_and_updated(palace):
    drawer = palace.drawers.ids[0]
    out = call(palace, "kg_add", {"subject": "Alice", "predicate": "works at", "object": "Acme",
                                 "valid_from": "2020-01-01", "confidence": 0.5,
                                 "source_drawer": drawer, "statement_type": "observation",
                                 "subject_type": "person"})
    assert out["created"] and not out["updated"]
    t = out["triple"]
    assert (t["subject"], t["predicate"], t["object"]) == ("alice", "works_at", "acme")
    assert t["source_drawer"] == drawer and t["current"] and t["id"] == out["triple_id"]
    assert t["observed_at"] == "2023-11-14T22:13:20Z"
    again = call(palace, "kg_add", {"subject": "ALICE", "predicate": "Works-At",
                                   "object": "acme", "confidence": 0.75})
    assert again["triple_id"] == out["triple_id"] and not again["created"] and again["updated"]
    assert again["triple"]["confidence"] == 0.75
    assert palace.entities["entity:alice"].type == "person"


@pytest.mark.parametrize("args", [
    {"subject": "a", "predicate": "p"},  # no object
    {"subject": "a", "predicate": "p", "object": "b", "confidence": 2},
    {"subject": "a", "predicate": "p", "object": "b", "confidence": "high"},
    {"subject": "a", "predicate": "p", "object": "b", "statement_type": "rumour"},
    {"subject": "a", "predicate": "p", "object": "b", "valid_from": "2020-02-30"},
    {"subject": "a", "predicate": "p", "object": "b", "valid_from": "tomorrow, probably"},
    {"subject": "a", "predicate": "p", "object": "b", "colour": "red"},
    {"subject": "", "predicate": "p", "object": "b"},
    {"subject": "a" * 201, "predicate": "p", "object": "b"},
    {"subject": "a", "predicate": "p", "object": "b", "source_drawer": "drawer_nope"},
])
def test_kg_add_refuses_bad_arguments_and_changes_nothing(palace, args):
    before = snapshot(palace)
    with pytest.raises((ValidationError, NotFound)):
        call(palace, "kg_add", args)
    assert snapshot(palace) == before


def test_kg_query_direction_predicate_and_as_of(palace):
    call = bind(palace)
    call("kg_add", {"subject": "Alice", "predicate": "works_at", "object": "Acme",
                    "valid_from": "2020-01-01", "valid_to": "2023-06-01"})
    call("kg_add", {"subject": "Alice", "predicate": "lives_in", "object": "Paris"})
    call("kg_add", {"subject": "Bob", "predicate": "knows", "object": "Alice"})
    out = call("kg_query", {"entity": "alice"})
    assert out["entity"]["key"] == "alice" and out["count"] == 3
    assert [(f["direction"], f["predicate"]) for f in out["facts"]] == [
        ("out", "lives_in"), ("out", "works_at"), ("in", "knows")]
    assert [f["current"] for f in out["facts"]] == [True, False, True]
    assert call("kg_query", {"entity": "ALICE", "direction": "in"})["count"] == 1
    assert call("kg_query", {"entity": "alice", "direction": "out"})["count"] == 2
    only = call("kg_query", {"entity": "alice", "predicate": "Works At"})
    assert [f["object"] for f in only["facts"]] == ["acme"]
    then = call("kg_query", {"entity": "alice", "as_of": "2023-06-01T00:00:00+02:00"})
    assert then["as_of"] == "2023-05-31T22:00:00Z"
    assert [(f["subject"], f["object"]) for f in then["facts"]] == [
        ("alice", "paris"), ("alice", "acme"), ("bob", "alice")]
    later = call("kg_query", {"entity": "alice", "as_of": "2023-06-01", "direction": "out"})
    assert [f["object"] for f in later["facts"]] == ["paris"]
    limited = call("kg_query", {"entity": "alice", "limit": 1})
    assert limited["truncated"] and len(limited["facts"]) == 1 and limited["count"] == 3
    with pytest.raises(NotFound):
        call("kg_query", {"entity": "Carol"})
    with pytest.raises(ValidationError):
        call("kg_query", {"entity": "alice", "direction": "sideways"})


def test_kg_invalidate_by_id_or_statement(palace):
    call = bind(palace)
    a = call("kg_add", {"subject": "Alice", "predicate": "uses", "object": "Vim"})["triple_id"]
    call("kg_add", {"subject": "Alice", "predicate": "uses", "object": "Emacs"})
    out = call("kg_invalidate", {"triple_id": a, "ended": "2023-01-01"})
    assert out["count"] == 1 and out["ended"][0]["valid_to"] == "2023-01-01"
    assert out["ended"][0]["invalidated_at"] == "2023-11-14T22:13:20Z"
    assert list(relates(palace)) == [("entity:alice", "entity:emacs")]
    out = call("kg_invalidate", {"subject": "alice", "predicate": "USES", "object": "emacs"})
    assert out["ended"][0]["valid_to"] == "2023-11-14T22:13:20Z"  # default: now
    assert relates(palace) == {}
    with pytest.raises(NotFound):
        call("kg_invalidate", {"subject": "alice", "predicate": "uses", "object": "emacs"})
    with pytest.raises(NotFound):
        call("kg_invalidate", {"triple_id": "triple_nope"})
    with pytest.raises(ValidationError):
        call("kg_invalidate", {"subject": "alice", "predicate": "uses"})
    with pytest.raises(ValidationError):
        call("kg_invalidate", {"triple_id": a, "subject": "alice"})
    with pytest.raises(ValidationError):
        call("kg_invalidate", {})


def test_kg_supersede_is_atomic(palace):
    call = bind(palace)
    old = call("kg_add", {"subject": "Alice", "predicate": "works_at", "object": "Acme",
                          "valid_from": "2020-01-01"})["triple_id"]
    before = snapshot(palace)
    bad = [
        {"triple_id": old, "object": "???"},
        {"triple_id": old, "object": "Beta", "source_drawer": "drawer_gone"},
        {"triple_id": old, "object": "Beta", "at": "2019-01-01"},
        {"triple_id": old, "object": "Beta", "at": "2023-01-01", "valid_to": "2022-01-01"},
        {"triple_id": old, "object": "Beta", "confidence": -0.1},
        {"triple_id": old, "object": "Beta", "valid_from": "2023-01-01"},
        {"triple_id": "triple_missing", "object": "Beta"},
    ]
    for args in bad:
        with pytest.raises((ValidationError, NotFound)):
            call("kg_supersede", args)
        assert snapshot(palace) == before, args
    assert call("kg_query", {"entity": "alice"})["facts"][0]["current"]
    out = call("kg_supersede", {"triple_id": old, "object": "Beta", "at": "2023-06-01",
                                "confidence": 0.8})
    assert out["ended"]["id"] == old and out["ended"]["valid_to"] == "2023-06-01"
    assert out["created"] and out["triple"]["valid_from"] == "2023-06-01"
    assert out["triple"]["predicate"] == "works_at" and out["triple"]["confidence"] == 0.8
    assert list(relates(palace)) == [("entity:alice", "entity:beta")]
    with pytest.raises(ValidationError, match="already ended"):
        call("kg_supersede", {"triple_id": old, "object": "Gamma"})


def test_kg_timeline_traverse_contradictions_and_stats(palace):
    call = bind(palace)
    call("kg_add", {"subject": "Alice", "predicate": "works_at", "object": "Acme",
                    "valid_from": "2020-01-01"})
    call("kg_add", {"subject": "Alice", "predicate": "works_at", "object": "Beta",
                    "valid_from": "2022-01-01", "confidence": 0.4})
    call("kg_add", {"subject": "Beta", "predicate": "runs_on", "object": "GCP"})
    tl = call("kg_timeline", {"entity": "alice"})
    assert tl["entity"] == "alice" and [f["object"] for f in tl["facts"]] == ["acme", "beta"]
    assert call("kg_timeline", {})["count"] == 3
    tr = call("kg_traverse", {"start": "Alice"})
    assert [(p["end"], p["hops"], p["min_confidence"]) for p in tr["paths"]] == [
        ("acme", 1, 1.0), ("beta", 1, 0.4), ("google-cloud-platform", 2, 0.4)]
    assert tr["paths"][2]["entities"] == ["alice", "beta", "google-cloud-platform"]
    assert tr["paths"][2]["steps"][1]["predicate"] == "runs_on"
    assert call("kg_traverse", {"start": "alice", "min_confidence": 0.5})["count"] == 1
    assert call("kg_traverse", {"start": "gcp", "direction": "in",
                                "max_hops": 1})["paths"][0]["end"] == "beta"
    for bad in ({"start": "alice", "max_hops": 7}, {"start": "alice", "max_results": 5000},
                {"start": "alice", "predicates": []}, {"start": "alice", "min_confidence": 2}):
        with pytest.raises(ValidationError):
            call("kg_traverse", bad)
    con = call("kg_contradictions", {})
    assert con["count"] == 1
    c = con["contradictions"][0]
    assert (c["subject"], c["predicate"], c["objects"]) == ("alice", "works_at",
                                                            ["acme", "beta"])
    assert (c["overlap_from"], c["overlap_to"]) == ("2022-01-01", None)
    assert call("kg_contradictions", {"entity": "beta"})["count"] == 0
    stats = call("kg_stats")
    assert (stats["entities"], stats["triples"], stats["current"]) == (4, 3, 3)
    assert stats["relates_to_edges"] == 3


def test_semantic_a_star_walks_the_knowledge_graph(palace):
    call(palace, "kg_add", {"subject": "Alice", "predicate": "works_at", "object": "Beta"})
    call(palace, "kg_add", {"subject": "Beta", "predicate": "runs_on", "object": "GCP"})
    path = call(palace, "navigate", {"start": "entity:alice",
                                    "goal": "entity:google-cloud-platform"})
    assert path["found"] and path["nodes"] == ["entity:alice", "entity:beta",
                                               "entity:google-cloud-platform"]
    assert {s["kind"] for s in path["steps"]} == {"RELATES_TO"}


def test_kg_alias_and_aliases(palace):
    call = bind(palace)
    assert call("kg_aliases")["aliases"] == DEFAULT_ALIASES
    call("kg_add", {"subject": "Dream Weaver Engine", "predicate": "written_in",
                    "object": "Rust"})
    out = call("kg_alias", {"alias": "DreamWeaver", "entity": "dream weaver engine"})
    assert out == {"removed": False, "alias": "dreamweaver", "entity": "dream-weaver-engine",
                   "previous": None, "repointed": []}
    assert call("kg_query", {"entity": "Dreamweaver"})["facts"][0]["object"] == "rust"
    added = call("kg_add", {"subject": "dreamweaver", "predicate": "written in",
                            "object": "rust"})
    assert not added["created"]  # the alias met the stored entity
    # GCP example: three spellings, one entity.
    for name in ("GCP", "Google Cloud Platform", "google-cloud-platform"):
        call("kg_add", {"subject": "Palazzo", "predicate": "deployed_on", "object": name})
    assert call("kg_query", {"entity": "palazzo"})["count"] == 1
    with pytest.raises(ValidationError, match="already an entity"):
        call("kg_alias", {"alias": "Rust", "entity": "palazzo"})
    with pytest.raises(ValidationError):
        call("kg_alias", {"alias": "x"})  # add needs an entity
    with pytest.raises(ValidationError):
        call("kg_alias", {"alias": "x", "entity": "y", "remove": True})
    assert call("kg_alias", {"alias": "dreamweaver", "remove": True})["entity"] == \
        "dream-weaver-engine"
    with pytest.raises(NotFound):
        call("kg_query", {"entity": "Dreamweaver"})
    assert "dreamweaver" not in call("kg_aliases")["aliases"]


def test_kg_entity_creates_and_updates(palace):
    call = bind(palace)
    out = call("kg_entity", {"name": "Alice Smith", "type": "person",
                             "properties": {"born": 1990}})
    assert out["created"] and out["entity"] == {
        "id": "entity:alice-smith", "key": "alice-smith", "name": "Alice Smith",
        "type": "person", "properties": {"born": 1990}}
    call("kg_add", {"subject": "alice smith", "predicate": "knows", "object": "Bob"})
    out = call("kg_entity", {"name": "ALICE-SMITH", "properties": {"city": "Rome"}})
    assert not out["created"] and out["facts"] == 1 and out["current"] == 1
    assert out["entity"]["properties"] == {"born": 1990, "city": "Rome"}
    assert out["entity"]["type"] == "person"
    with pytest.raises(ValidationError):
        call("kg_entity", {"name": "x", "properties": []})


# -- the palace file -------------------------------------------------------------------------

def built(clock=NOW):
    """A palace with current, ended and superseded facts, evidence, entities and aliases."""
    p = Palace(extract_on_add=False, clock=lambda: clock)
    drawer, _ = p.add_drawer("people", "alice", "Alice works at Acme.")
    call = bind(p)
    old = call("kg_add", {"subject": "Alice", "predicate": "works_at", "object": "Acme",
                          "valid_from": "2020-01-01", "source_drawer": drawer,
                          "confidence": 0.7, "subject_type": "person"})["triple_id"]
    call("kg_supersede", {"triple_id": old, "object": "Beta", "at": "2023-06-01T09:30+02:00",
                          "source_file": "notes/2023.md", "statement_type": "observation"})
    call("kg_add", {"subject": "Beta", "predicate": "runs on", "object": "GCP",
                    "confidence": 0.9})
    call("kg_add", {"subject": "Beta", "predicate": "uses", "object": "GCP",
                    "statement_type": "inference", "confidence": 0.5})
    call("kg_add", {"subject": "Alice", "predicate": "lived_in", "object": "Oslo",
                    "valid_from": "2010-01-01", "valid_to": "2015-01-01"})
    call("kg_alias", {"alias": "Beta Incorporated", "entity": "beta"})
    call("kg_alias", {"alias": "aws", "remove": True})
    call("kg_entity", {"name": "Oslo", "type": "place", "properties": {"country": "NO"}})
    return p


def test_palace_file_round_trip_with_triples_and_aliases():
    p = built()
    doc = export_palace(p, exported_at=0.0)
    section = doc["palace"]["kg"]
    assert len(section["triples"]) == 5
    assert section["aliases"]["beta-incorporated"] == "beta" and "aws" not in section["aliases"]
    q = Palace(extract_on_add=False, clock=lambda: 99.0)
    call(q, "kg_add", {"subject": "something", "predicate": "else", "object": "entirely"})
    call(q, "import", {"document": copy.deepcopy(doc)})
    assert export_palace(q, exported_at=0.0) == doc
    # The imported graph is live, not just stored: indices, aliases and edges work.
    assert call(q, "kg_query", {"entity": "Beta Incorporated",
                               "direction": "out"})["count"] == 2
    assert not call(q, "kg_add", {"subject": "beta", "predicate": "runs_on",
                                 "object": "Google Cloud Platform"})["created"]
    assert call(q, "kg_timeline", {"entity": "alice"})["count"] == 3
    call(q, "kg_invalidate", {"subject": "beta", "predicate": "runs_on", "object": "gcp"})
    assert relates(q)[("entity:beta", "entity:google-cloud-platform")]["predicates"] == ["uses"]
    with pytest.raises(NotFound):
        call(q, "kg_query", {"entity": "something"})  # the old palace is gone


def test_text_import_round_trip():
    p = built()
    doc = export_palace(p, exported_at=0.0)
    q = Palace(extract_on_add=False, clock=lambda: 1.0)
    call(q, "import", {"text": json.dumps(doc)})
    assert export_palace(q, exported_at=0.0) == doc


names = st.sampled_from(["Alice", "BOB", "carol", "GCP", "Google Cloud Platform", "Dave!",
                         "erin", "Beta Inc"])
dates = st.one_of(st.none(), st.dates(date(2000, 1, 1), date(2030, 1, 1)).map(date.isoformat))
facts = st.lists(st.tuples(names, st.sampled_from(["knows", "works at", "uses"]), names,
                           st.floats(0, 1), dates, st.integers(0, 3)), max_size=15)


@settings(max_examples=60, deadline=None)
@given(facts=facts, alias=st.booleans())
def test_random_graphs_round_trip(facts, alias):
    p = Palace(extract_on_add=False, clock=lambda: NOW)
    if alias:
        call(p, "kg_alias", {"alias": "Dave!", "entity": "Erin"})
    for s, pred, o, conf, start, action in facts:
        try:
            out = call(p, "kg_add", {"subject": s, "predicate": pred, "object": o,
                                    "confidence": conf,
                                    **({} if start is None else {"valid_from": start})})
        except ValidationError:
            continue  # subject and object are one entity
        tid = out["triple_id"]
        current = out["triple"]["current"]
        if action == 1 and current:
            call(p, "kg_invalidate", {"triple_id": tid, "ended": "2031-01-01"})
        elif action == 2 and current:
            call(p, "kg_supersede", {"triple_id": tid, "object": "Zed", "at": "2031-01-01"})
    # Every current triple has its edge, every entity edge has a current triple.
    live = {(f"entity:{t.subject}", f"entity:{t.object}") for t in p.kg.triples.values()
            if t.current}
    assert set(relates(p)) == live
    doc = export_palace(p, exported_at=0.0)
    q = Palace(extract_on_add=False, clock=lambda: 3.0)
    call(q, "import", {"document": copy.deepcopy(doc)})
    assert export_palace(q, exported_at=0.0) == doc


def test_a_file_without_a_kg_section_gets_the_default_aliases():
    p = Palace(extract_on_add=False, clock=lambda: NOW)
    p.add_drawer("w", "r", "text")
    doc = export_palace(p, exported_at=0.0)
    del doc["palace"]["kg"]
    q = Palace(extract_on_add=False, clock=lambda: NOW)
    call(q, "import", {"document": doc})
    assert q.kg.aliases == DEFAULT_ALIASES and q.kg.triples == {}


def _triple(doc, i=0):
    return doc["palace"]["kg"]["triples"][i]


def _relates_edge(doc, src, dst):
    return next(e for e in doc["palace"]["edges"]
                if e["kind"] == "RELATES_TO" and e["src"] == src and e["dst"] == dst)


def _current_index(doc):
    return next(i for i, t in enumerate(doc["palace"]["kg"]["triples"])
                if t["valid_to"] is None)


BAD_SECTIONS = [
    (lambda d: _triple(d, 2).update(confidence=1.5),
     r"palace\.kg\.triples\[2\]\.confidence must be between 0 and 1"),
    (lambda d: _triple(d, 1).update(confidence="high"),
     r"palace\.kg\.triples\[1\]\.confidence must be a number"),
    (lambda d: _triple(d).update(valid_from="2020-02-30"),
     r"palace\.kg\.triples\[0\]\.valid_from .* not an ISO 8601 date"),
    (lambda d: _triple(d).update(valid_from="2020-01-01T00:00+00:00"),
     r"palace\.kg\.triples\[0\]\.valid_from .* not in canonical form"),
    (lambda d: _triple(d).update(observed_at=None),
     r"palace\.kg\.triples\[0\]\.observed_at must be a string"),
    (lambda d: _triple(d).update(valid_to="2019-01-01"),
     r"palace\.kg\.triples\[0\]\.valid_to must be after valid_from"),
    (lambda d: _triple(d, 2).update(invalidated_at="2024-01-01"),
     r"palace\.kg\.triples\[2\]\.invalidated_at is set but valid_to is not"),
    (lambda d: _triple(d).update(id="triple_0123456789abcdef01234567"),
     r"palace\.kg\.triples\[0\]\.id .* does not match"),
    (lambda d: _triple(d).update(subject="Alice"),
     r"palace\.kg\.triples\[0\]\.subject 'Alice' is not a normalised entity name"),
    (lambda d: _triple(d).update(subject="gcp"),
     r"palace\.kg\.triples\[0\]\.subject 'gcp' is an alias"),
    (lambda d: _triple(d).update(object="nobody"),
     r"palace\.kg\.triples\[0\]\.object: no entity 'entity:nobody'"),
    (lambda d: _triple(d).update(predicate="Works At"),
     r"palace\.kg\.triples\[0\]\.predicate .* not a normalised predicate"),
    (lambda d: _triple(d).update(statement_type="rumour"),
     r"palace\.kg\.triples\[0\]\.statement_type must be one of"),
    (lambda d: d["palace"]["kg"]["triples"].append(copy.deepcopy(_triple(d))),
     r"palace\.kg\.triples\[5\]\.id .* appears twice"),
    (lambda d: d["palace"]["kg"]["triples"].append("fact"),
     r"palace\.kg\.triples\[5\] must be an object"),
    (lambda d: d["palace"]["kg"].update(triples={}), r"palace\.kg\.triples must be a list"),
    (lambda d: d["palace"].update(kg=[]), r"palace\.kg must be an object"),
    (lambda d: d["palace"]["kg"].update(aliases=[]), r"palace\.kg\.aliases must be an object"),
    (lambda d: d["palace"]["kg"]["aliases"].update({"gcloud": "gcp"}),
     r"palace\.kg\.aliases\['gcloud'\] must lead to an entity"),
    (lambda d: d["palace"]["kg"]["aliases"].update({"G Cloud": "gcp"}),
     r"palace\.kg\.aliases\['G Cloud'\]: 'G Cloud' is not a normalised entity name"),
    (lambda d: d["palace"]["kg"]["triples"].append(
        {**_triple(d, 4), "valid_from": "2012-01-01", "valid_to": None,
         "id": triple_id("alice", "lived_in", "oslo", "2012-01-01")}),
     r"palace\.kg\.triples\[5\] overlaps triple_\w+ in time with the same subject"),
    # The edges in palace.edges must be exactly those the current facts need.
    (lambda d: d["palace"]["edges"].remove(
        _relates_edge(d, "entity:alice", "entity:beta")),
     r"palace\.kg: current facts link 'alice' to 'beta' but palace\.edges has no "
     r"RELATES_TO edge"),
    (lambda d: _relates_edge(d, "entity:beta", "entity:google-cloud-platform")["props"]
     .update(confidence=0.1), r"palace\.edges: the RELATES_TO edge .* has props"),
    (lambda d: _triple(d, _current_index(d)).update(valid_to="2099-01-01"),
     r"palace\.edges: the RELATES_TO edge entity:alice -> entity:beta has no current fact"),
]


@pytest.mark.parametrize("spoil,message", BAD_SECTIONS)
def test_a_malformed_kg_section_is_refused_and_the_open_palace_kept(spoil, message):
    doc = export_palace(built(), exported_at=0.0)
    spoil(doc)
    open_palace = Palace(extract_on_add=False, clock=lambda: 7.0)
    open_palace.add_drawer("w", "r", "mine")
    call(open_palace, "kg_add", {"subject": "mine", "predicate": "is", "object": "here"})
    before = snapshot(open_palace)
    with pytest.raises(ImportRejected, match=message):
        call(open_palace, "import", {"document": doc})
    assert snapshot(open_palace) == before
    assert call(open_palace, "kg_query", {"entity": "mine"})["count"] == 1


def test_the_spoilers_spoil_only_what_they_name():
    # The unspoilt file imports, so each refusal above is caused by its own change.
    doc = export_palace(built(), exported_at=0.0)
    call(Palace(extract_on_add=False, clock=lambda: 7.0), "import", {"document": doc})
    assert [t["valid_to"] is None for t in doc["palace"]["kg"]["triples"]] == [
        False, True, True, True, False]
