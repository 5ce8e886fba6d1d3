"""The knowledge graph engine: names, dates, validity, duplicates, edges, contradictions,
traversal (palazzo.memory.kg)."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palazzo.core.model import EdgeKind
from palazzo.errors import NotFound, ValidationError
from palazzo.memory.kg import (
    DEFAULT_ALIASES,
    KnowledgeGraph,
    normalise_entity,
    normalise_predicate,
    parse_when,
    stamp,
    traverse,
    triple_id,
)
from palazzo.palace import Palace

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.fixture
def palace():
    return Palace(clock=lambda: NOW)


def relates(palace):
    """Return {(src, dst): props} of the live RELATES_TO edges."""
    e = palace.edges
    return {(e.src[i], e.dst[i]): e.props[i] for i in e.live()
            if e.kind[i] is EdgeKind.RELATES_TO}


# -- names -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [
    "google-cloud-platform", "Google Cloud Platform", "  GOOGLE  cloud\tplatform ",
    "google_cloud.platform!", "--Google/Cloud//Platform--", "Ｇｏｏｇｌｅ Cloud Platform",
])
def test_spellings_normalise_to_one_key(name):
    assert normalise_entity(name) == "google-cloud-platform"


def test_normalisation_keeps_letters_of_any_script_and_refuses_empty_names(palace):
    assert normalise_entity("Straße München") == "strasse-münchen"
    assert normalise_entity("東京 タワー") == "東京-タワー"
    assert normalise_predicate("Works at") == normalise_predicate("WORKS-AT") == "works_at"
    kg = palace.kg
    for bad in ("!!!", "   ", "-"):
        with pytest.raises(ValidationError):
            kg.resolve(bad)
    with pytest.raises(ValidationError):
        kg.predicate("->")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_normalisation_is_idempotent(text):
    key = normalise_entity(text)
    assert normalise_entity(key) == key
    assert "--" not in key and not key.startswith("-") and not key.endswith("-")
    pred = normalise_predicate(text)
    assert normalise_predicate(pred) == pred


def test_default_aliases_make_gcp_meet(palace):
    kg = palace.kg
    assert kg.aliases == DEFAULT_ALIASES
    assert {kg.resolve(n) for n in ("GCP", "gcp.", "Google Cloud Platform",
                                    "google-cloud-platform")} == {"google-cloud-platform"}
    a = kg.add("GCP", "hosts", "Palazzo Demo")
    b = kg.add("Google Cloud Platform", "hosts", "palazzo demo")
    assert a.created and not b.created and a.triple.id == b.triple.id
    # Named by the first spelling that is not an alias.
    assert kg.entity("gcp").name == "google-cloud-platform"
    assert kg.entity("palazzo-demo").name == "Palazzo Demo"


def test_user_alias_resolves_old_and_new_spellings(palace):
    kg = palace.kg
    kg.add("Dream Weaver Engine", "written_in", "Rust")
    out = kg.add_alias("DreamWeaver", "dream weaver engine")
    assert out == {"alias": "dreamweaver", "entity": "dream-weaver-engine", "previous": None,
                   "repointed": []}
    assert kg.resolve("dreamweaver") == "dream-weaver-engine"
    # A query through the alias finds the fact stored under the entity.
    assert [t.object for t, _ in kg.query("DREAMWEAVER")] == ["rust"]
    # An alias to an alias is stored flat, and an alias that becomes an alias re-points.
    kg.add_alias("dw", "dreamweaver")
    assert kg.aliases["dw"] == "dream-weaver-engine"
    kg.add_alias("gcloud", "gcp")
    assert kg.aliases["gcloud"] == "google-cloud-platform"
    led_there = sorted(a for a, k in kg.aliases.items() if k == "google-cloud-platform")
    assert {"gcloud", "gcp", "google-cloud"} <= set(led_there)
    out = kg.add_alias("google-cloud-platform", "GCP Services")
    assert out["repointed"] == led_there
    assert kg.resolve("GCP") == kg.resolve("gcloud") == "gcp-services"
    assert all(v not in kg.aliases for v in kg.aliases.values())  # the table stays flat


def test_alias_refusals(palace):
    kg = palace.kg
    kg.add("Alice", "knows", "Bob")
    with pytest.raises(ValidationError, match="already an entity"):
        kg.add_alias("Alice", "Bob")  # merging two entities is not supported
    with pytest.raises(ValidationError, match="same entity"):
        kg.add_alias("ALICE!", "alice")
    with pytest.raises(ValidationError):
        kg.add_alias("...", "alice")
    with pytest.raises(NotFound):
        kg.remove_alias("nobody")
    assert kg.remove_alias("GCP") == "google-cloud-platform"
    assert kg.resolve("gcp") == "gcp"


# -- dates -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text,canonical", [
    ("2024-03-01", "2024-03-01"),
    ("2024-03-01T10:30", "2024-03-01T10:30:00Z"),
    ("2024-03-01 10:30:15Z", "2024-03-01T10:30:15Z"),
    ("2024-03-01T10:30:15+02:00", "2024-03-01T08:30:15Z"),
    ("2024-03-01T00:30:00+01:00", "2024-02-29T23:30:00Z"),
    ("2024-03-01T10:30:15.25-01:30", "2024-03-01T12:00:15.250000Z"),
])
def test_dates_have_one_canonical_form(text, canonical):
    when = parse_when(text)
    assert when.text == canonical
    assert parse_when(when.text) == when  # canonical text is a fixed point


def test_date_instants_order_dates_and_datetimes_together():
    day = parse_when("2024-03-01")
    assert day.instant == parse_when("2024-03-01T00:00:00Z").instant
    assert parse_when("2024-02-29T23:59:59.999999Z").instant == day.instant - 1
    assert parse_when("2024-03-01T01:00+01:00").instant == day.instant
    assert parse_when("0001-01-01").instant == 0
    assert stamp(0.0).text == "1970-01-01T00:00:00Z"
    assert stamp(NOW).text == "2023-11-14T22:13:20Z"
    assert stamp(1.5).instant - stamp(1.0).instant == 500_000


@pytest.mark.parametrize("text", [
    "2024-02-30", "2024-13-01", "24-03-01", "2024-03-01T25:00", "2024-03-01T10:61",
    "2024-03-01T10:00+24:00", "2024-03-01T10:00+01:75", "2024-W09-5", "2024-03-01T10",
    "2024-03-01T10:00:00.1234567Z", "yesterday", "", "0001-01-01T00:00+01:00",
    "٢٠٢٤-٠٣-٠١",
])
def test_bad_dates_are_refused(text):
    with pytest.raises(ValidationError):
        parse_when(text)


# -- facts in time ---------------------------------------------------------------------------

def test_triple_ids_are_deterministic(palace):
    kg = palace.kg
    a = kg.add("Alice", "works at", "Acme", valid_from="2020-01-01")
    assert a.triple.id == triple_id("alice", "works_at", "acme", "2020-01-01")
    assert Palace(clock=lambda: 1.0).kg.add("ALICE", "Works-At", "acme.",
                                            valid_from="2020-01-01").triple.id == a.triple.id
    assert kg.add("Alice", "works at", "Acme", valid_from="2019-01-01",
                  valid_to="2019-06-01").triple.id != a.triple.id


def test_as_of_before_inside_after_and_at_the_boundaries(palace):
    kg = palace.kg
    t = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01",
               valid_to="2022-07-01").triple
    open_ended = kg.add("Alice", "lives_in", "Paris", valid_from="2021-05-01T12:00Z").triple

    def at(when):
        return sorted(x.object for x, _ in kg.query("alice", as_of=when))

    assert at("2019-12-31") == []  # before
    assert at("2020-01-01") == ["acme"]  # valid_from is included
    assert at("2021-05-01") == ["acme"]  # the day starts at 00:00 UTC, Paris from noon
    assert at("2021-05-01T13:00+02:00") == ["acme"]  # 11:00 UTC
    assert at("2021-05-01T12:00:00Z") == ["acme", "paris"]
    assert at("2022-06-30T23:59:59.999999Z") == ["acme", "paris"]
    assert at("2022-07-01") == ["paris"]  # valid_to is excluded (half-open)
    assert at("2999-01-01") == ["paris"]  # after
    assert t.holds(parse_when("2021-01-01").instant) and not t.current
    assert open_ended.current
    # Without as_of every fact comes back, current or not.
    assert len(kg.query("alice")) == 2
    with pytest.raises(ValidationError):
        kg.query("alice", as_of="last year")


def test_validity_must_not_be_empty(palace):
    kg = palace.kg
    with pytest.raises(ValidationError, match="after valid_from"):
        kg.add("a", "p", "b", valid_from="2020-01-01", valid_to="2020-01-01")
    with pytest.raises(ValidationError, match="after valid_from"):
        kg.add("a", "p", "b", valid_from="2020-01-02", valid_to="2020-01-01T23:00Z")
    with pytest.raises(ValidationError, match="same entity"):
        kg.add("GCP", "is", "Google Cloud Platform")
    with pytest.raises(ValidationError, match="confidence"):
        kg.add("a", "p", "b", confidence=float("nan"))
    with pytest.raises(ValidationError, match="statement_type"):
        kg.add("a", "p", "b", statement_type="rumour")
    with pytest.raises(NotFound, match="source_drawer"):
        kg.add("a", "p", "b", source_drawer="drawer_missing")
    assert kg.triples == {} and palace.entities == {} and relates(palace) == {}


def test_duplicates_keep_the_higher_confidence(palace):
    kg = palace.kg
    first = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01", confidence=0.6,
                   source_file="a.txt")
    assert (first.created, first.updated) == (True, False)
    # Overlapping validity, lower confidence: nothing changes.
    lower = kg.add("alice", "works at", "acme", valid_from="2021-01-01", confidence=0.4,
                   source_file="b.txt")
    assert (lower.created, lower.updated) == (False, False)
    assert lower.triple is first.triple and first.triple.confidence == 0.6
    # Overlapping, higher: the stored triple takes its confidence and evidence.
    higher = kg.add("alice", "works_at", "acme", confidence=0.9, source_file="c.txt",
                    statement_type="observation")
    assert (higher.created, higher.updated) == (False, True)
    t = first.triple
    assert (t.confidence, t.source_file, t.statement_type) == (0.9, "c.txt", "observation")
    assert t.valid_from == "2020-01-01"  # validity is never changed by kg_add
    assert relates(palace)[("entity:alice", "entity:acme")]["confidence"] == 0.9
    # Exactly the same statement again: idempotent.
    again = kg.add("alice", "works_at", "acme", valid_from="2020-01-01", confidence=0.9)
    assert (again.created, again.updated) == (False, False) and len(kg.triples) == 1
    # Not overlapping (earlier period): a second triple.
    old = kg.add("alice", "works_at", "acme", valid_from="2010-01-01", valid_to="2012-01-01")
    assert old.created and len(kg.triples) == 2
    # Touching intervals do not overlap ([2012, 2015) after [2010, 2012)).
    assert kg.add("alice", "works_at", "acme", valid_from="2012-01-01",
                  valid_to="2015-01-01").created


def test_new_entities_get_types_and_entity_records_can_be_updated(palace):
    kg = palace.kg
    kg.add("Alice", "works_at", "Acme", subject_type="person", object_type="company")
    kg.add("alice", "knows", "Bob", subject_type="robot")  # types only apply to new entities
    assert kg.entity("alice").type == "person" and kg.entity("bob").type == "concept"
    entity, created = kg.set_entity("ACME", type="organisation", properties={"size": 3})
    assert not created and entity.type == "organisation" and entity.properties == {"size": 3}
    kg.set_entity("acme", properties={"city": "Paris"})
    assert kg.entity("acme").properties == {"size": 3, "city": "Paris"}
    with pytest.raises(ValidationError):
        kg.set_entity("acme", properties={"x": float("inf")})
    with pytest.raises(NotFound):
        kg.entity("Carol")


# -- edges -----------------------------------------------------------------------------------

def test_relates_to_edges_follow_the_current_facts(palace):
    kg = palace.kg
    works = kg.add("Alice", "works_at", "Acme", confidence=0.7).triple
    assert relates(palace) == {("entity:alice", "entity:acme"): {
        "predicates": ["works_at"], "confidence": 0.7, "triples": [works.id]}}
    likes = kg.add("Alice", "likes", "Acme", confidence=0.9).triple
    props = relates(palace)[("entity:alice", "entity:acme")]
    assert props == {"predicates": ["likes", "works_at"], "confidence": 0.9,
                     "triples": sorted([works.id, likes.id])}
    assert len(relates(palace)) == 1  # one edge per ordered pair of entities
    kg.invalidate([likes], "2024-01-01")
    assert relates(palace)[("entity:alice", "entity:acme")] == {
        "predicates": ["works_at"], "confidence": 0.7, "triples": [works.id]}
    kg.invalidate([works])
    assert relates(palace) == {}
    assert palace.edges.find(EdgeKind.RELATES_TO, "entity:alice", "entity:acme") is None
    # Facts that were already over when added are history: no edge.
    kg.add("Bob", "worked_at", "Acme", valid_from="2001-01-01", valid_to="2003-01-01")
    assert relates(palace) == {}
    # The reverse direction is its own edge.
    kg.add("Acme", "employs", "Alice")
    assert list(relates(palace)) == [("entity:acme", "entity:alice")]
    assert palace.counts()["entities"] == 3


def test_supersede_moves_the_edge_and_keeps_history(palace):
    kg = palace.kg
    old = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01").triple
    ended, added = kg.supersede(old.id, "Beta Inc", at="2023-06-01")
    assert ended is old and old.valid_to == "2023-06-01"
    assert old.invalidated_at == "2023-11-14T22:13:20Z"
    new = added.triple
    assert added.created and new.valid_from == "2023-06-01" and new.current
    assert (new.subject, new.predicate, new.object) == ("alice", "works_at", "beta-inc")
    assert list(relates(palace)) == [("entity:alice", "entity:beta-inc")]
    assert [t.object for t, _ in kg.query("alice", as_of="2023-05-31")] == ["acme"]
    assert [t.object for t, _ in kg.query("alice", as_of="2023-06-01")] == ["beta-inc"]
    assert kg.contradictions() == []  # the two periods touch but do not overlap
    # Re-stating the old object from the switch on is a new fact, not the old one reopened.
    _, back = kg.supersede(new.id, "Acme", at="2024-01-01")
    assert back.created and back.triple.id != old.id and not old.current


@pytest.mark.parametrize("change", [
    {"obj": "!!!"},  # the replacement's object normalises to nothing
    {"obj": "Beta", "at": "2019-12-31"},  # ends the old fact before it started
    {"obj": "Beta", "at": "not a date"},
    {"obj": "Beta", "confidence": 1.5},
    {"obj": "Beta", "valid_to": "2023-01-01", "at": "2023-06-01"},  # replacement is empty
    {"obj": "Beta", "source_drawer": "drawer_nope"},
    {"obj": "Alice"},  # replacement would link alice to herself
    {"obj": "Beta", "statement_type": "guess"},
    {"obj": "Beta", "object_type": "\x00"},
    {"obj": "Beta", "valid_from": "2023-01-01"},
])
def test_a_bad_replacement_leaves_the_old_fact_current(palace, change):
    kg = palace.kg
    old = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01").triple
    before = (dict(palace.entities), relates(palace), len(kg.triples))
    args = dict(change)
    obj = args.pop("obj")
    with pytest.raises((ValidationError, NotFound)):
        kg.supersede(old.id, obj, **args)
    assert old.current and old.valid_to is None and old.invalidated_at is None
    assert (dict(palace.entities), relates(palace), len(kg.triples)) == before


def test_supersede_refuses_ended_or_unknown_facts(palace):
    kg = palace.kg
    t = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01",
               valid_to="2021-01-01").triple
    with pytest.raises(ValidationError, match="already ended"):
        kg.supersede(t.id, "Beta")
    with pytest.raises(NotFound):
        kg.supersede("triple_0000", "Beta")


def test_invalidate_checks_every_fact_before_ending_any(palace):
    kg = palace.kg
    a = kg.add("Alice", "uses", "Vim", valid_from="2020-01-01").triple
    b = kg.add("Alice", "uses", "Emacs", valid_from="2022-01-01").triple
    with pytest.raises(ValidationError, match="cannot end"):
        kg.invalidate([a, b], "2021-01-01")  # b starts after the end date
    assert a.current and b.current and len(relates(palace)) == 2
    kg.invalidate([a, b], "2023-01-01")
    assert not a.current and not b.current and relates(palace) == {}
    with pytest.raises(ValidationError, match="already ended"):
        kg.invalidate([a])
    assert kg.matching("alice", "uses", "vim") == []


def test_timeline_orders_by_validity(palace):
    kg = palace.kg
    kg.add("Alice", "lives_in", "Rome", valid_from="2021-01-01")
    kg.add("Alice", "lives_in", "Oslo", valid_from="2015-01-01", valid_to="2018-01-01")
    kg.add("Alice", "born_in", "Lyon")  # no start: "since always" comes first
    kg.add("Bob", "knows", "Alice", valid_from="2015-01-01", valid_to="2016-01-01")
    kg.add("Bob", "knows", "Carol")
    order = [(t.subject, t.object) for t in kg.timeline("alice")]
    assert order == [("alice", "lyon"), ("bob", "alice"), ("alice", "oslo"),
                     ("alice", "rome")]
    assert [t.object for t in kg.timeline("alice", "lives in")] == ["oslo", "rome"]
    assert len(kg.timeline()) == 5


# -- contradictions --------------------------------------------------------------------------

def test_contradictions_are_overlapping_facts_with_different_objects(palace):
    kg = palace.kg
    kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01", valid_to="2023-01-01")
    kg.add("Alice", "works_at", "Beta", valid_from="2022-01-01")
    kg.add("Alice", "works_at", "Gamma", valid_from="2010-01-01", valid_to="2020-01-01")
    kg.add("Alice", "likes", "Tea")
    kg.add("Alice", "likes", "Coffee", valid_from="2019-01-01", valid_to="2019-02-01")
    kg.add("Bob", "works_at", "Acme")
    found = kg.contradictions()
    pairs = [(c.first.predicate, c.first.object, c.second.object) for c in found]
    assert pairs == [("likes", "tea", "coffee"), ("works_at", "acme", "beta")]
    works = found[1]
    assert (works.overlap_from, works.overlap_to) == ("2022-01-01", "2023-01-01")
    likes = found[0]
    assert (likes.overlap_from, likes.overlap_to) == ("2019-01-01", "2019-02-01")
    assert kg.contradictions("bob") == []
    assert len(kg.contradictions("alice", "works at")) == 1


def test_ending_a_fact_at_the_switch_resolves_the_contradiction(palace):
    kg = palace.kg
    acme = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01").triple
    kg.add("Alice", "works_at", "Beta", valid_from="2022-01-01")
    (c,) = kg.contradictions()
    assert (c.overlap_from, c.overlap_to) == ("2022-01-01", None)  # both still open
    kg.invalidate([acme], "2022-01-01")
    assert kg.contradictions() == []


# -- traversal -------------------------------------------------------------------------------

@pytest.fixture
def chain(palace):
    """a -> b -> c -> d -> e -> f (uses), with a cycle d -> a and a weak b -> x."""
    kg = palace.kg
    for s, o in zip("abcde", "bcdef", strict=True):
        kg.add(s, "uses", o, confidence=0.9)
    kg.add("d", "uses", "a", confidence=0.9)
    kg.add("b", "mentions", "x", confidence=0.2)
    return kg


def ends(result):
    return [(p.entities[-1], p.hops) for p in result.paths]


def test_traverse_respects_max_hops_and_cycles(chain):
    assert ends(traverse(chain, "a", max_hops=1)) == [("b", 1)]
    r = traverse(chain, "A", max_hops=6)
    assert ends(r) == [("b", 1), ("c", 2), ("x", 2), ("d", 3), ("e", 4), ("f", 5)]
    assert "a" not in [p.entities[-1] for p in r.paths]  # the cycle back to a is cut
    assert r.visited == 7 and not r.truncated
    assert r.paths[3].entities == ["a", "b", "c", "d"]
    assert [s.triple.predicate for s in r.paths[2].steps] == ["uses", "mentions"]
    assert r.paths[2].min_confidence == 0.2 and r.paths[1].min_confidence == 0.9


def test_traverse_respects_max_results_min_confidence_and_predicates(chain):
    r = traverse(chain, "a", max_hops=6, max_results=3)
    assert ends(r) == [("b", 1), ("c", 2), ("x", 2)] and r.truncated
    assert ends(traverse(chain, "a", max_results=2)) == [("b", 1), ("c", 2)]
    assert "x" not in [e for e, _ in ends(traverse(chain, "a", min_confidence=0.5))]
    assert ends(traverse(chain, "a", predicates=["Mentions"])) == []
    assert ends(traverse(chain, "b", predicates=["mentions"])) == [("x", 1)]


def test_traverse_direction(chain):
    assert ends(traverse(chain, "c", direction="out", max_hops=1)) == [("d", 1)]
    assert ends(traverse(chain, "c", direction="in", max_hops=2)) == [("b", 1), ("a", 2)]
    r = traverse(chain, "c", direction="both", max_hops=1)
    assert ends(r) == [("b", 1), ("d", 1)]
    assert {s.direction for p in r.paths for s in p.steps} == {"in", "out"}
    back = next(p for p in r.paths if p.entities[-1] == "b").steps[0]
    assert (back.direction, back.triple.subject, back.triple.object) == ("in", "b", "c")


def test_traverse_prefers_the_strongest_shortest_path_and_is_deterministic(palace):
    kg = palace.kg
    kg.add("s", "to", "m1", confidence=0.3)
    kg.add("s", "to", "m2", confidence=0.8)
    kg.add("m1", "to", "t", confidence=1.0)
    kg.add("m2", "to", "t", confidence=0.6)
    kg.add("s", "to", "z", confidence=0.8)
    r = traverse(kg, "s")
    assert [p.entities for p in r.paths] == [["s", "m2"], ["s", "z"], ["s", "m1"],
                                            ["s", "m2", "t"]]
    assert r.paths[-1].min_confidence == 0.6
    assert traverse(kg, "s").to_dict() == r.to_dict()


def test_traverse_reaches_each_entity_once_by_a_shortest_path(palace):
    kg = palace.kg
    kg.add("s", "to", "m", confidence=1.0)
    kg.add("m", "to", "t", confidence=1.0)
    kg.add("s", "to", "t", confidence=0.1)  # the weak direct link is still the shortest
    kg.add("t", "to", "u")
    kg.add("u", "to", "m")  # a cycle that does not pass through the start
    r = traverse(kg, "s", max_hops=6)
    assert ends(r) == [("m", 1), ("t", 1), ("u", 2)]
    assert r.paths[1].min_confidence == 0.1 and r.visited == 4


def test_traverse_picks_the_widest_path_even_through_a_weaker_first_hop(palace):
    kg = palace.kg
    kg.add("s", "to", "m1", confidence=0.9)
    kg.add("s", "to", "m2", confidence=0.8)
    kg.add("m1", "to", "t", confidence=0.1)
    kg.add("m2", "to", "t", confidence=0.7)
    (*_, last) = traverse(kg, "s").paths
    assert last.entities == ["s", "m2", "t"] and last.min_confidence == 0.7


def test_traverse_walks_only_current_facts_unless_as_of(palace):
    kg = palace.kg
    old = kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01").triple
    kg.supersede(old.id, "Beta", at="2023-01-01")
    kg.add("Acme", "located_in", "Paris")
    kg.add("Beta", "located_in", "Oslo")
    assert ends(traverse(kg, "alice")) == [("beta", 1), ("oslo", 2)]
    assert ends(traverse(kg, "alice", as_of="2021-06-01")) == [("acme", 1), ("paris", 2)]
    assert ends(traverse(kg, "alice", as_of="2019-06-01")) == []


def test_traverse_bounds_are_enforced(chain):
    for bad in ({"max_hops": 0}, {"max_hops": 7}, {"max_results": 0}, {"max_results": 1001},
                {"min_confidence": 1.5}, {"direction": "up"}, {"max_hops": True}):
        with pytest.raises(ValidationError):
            traverse(chain, "a", **bad)
    with pytest.raises(NotFound):
        traverse(chain, "nobody")


def test_stats_count_the_graph(palace):
    kg = palace.kg
    t = kg.add("Alice", "works_at", "Acme").triple
    kg.add("Alice", "knows", "Bob", statement_type="hypothesis")
    kg.invalidate([t])
    s = kg.stats()
    assert s == {"entities": 3, "triples": 2, "current": 1, "ended": 1,
                 "predicates": {"knows": 1, "works_at": 1},
                 "statement_types": {"fact": 1, "observation": 0, "inference": 0,
                                     "hypothesis": 1},
                 "aliases": len(DEFAULT_ALIASES), "relates_to_edges": 1}


def test_json_section_round_trip_on_the_engine(palace):
    kg = palace.kg
    kg.add("Alice", "works_at", "Acme", valid_from="2020-01-01", source_file="cv.md")
    kg.add_alias("ACME Corp", "acme")
    section = kg.to_json()
    again = KnowledgeGraph.from_json(palace, section, "palace.kg")
    assert again.to_json() == section
    assert again.by_subject == kg.by_subject and again.by_object == kg.by_object
