"""The Knowledge, Agents and Provenance views under CPython: the entity finder, ending a fact
with a confirm step and an undo, and forms that say what is wrong next to the field and keep
their button disabled until the input is valid (the browser flows: tests/browser/
test_ui_knowledge.py)."""

import asyncio
import concurrent.futures

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, bind  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402

XSS = '<img src=x onerror="alert(1)">'


def run(coro):
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


@pytest.fixture
def demo_app():
    p = Palace(clock=lambda: 1764633600.0)
    demo.build(bind(p))
    return build_app(Bridge(p)).palazzo_app, p


def error_of(form, field):
    return form.fields[field].error.object


def test_typing_lists_matching_entities_with_their_fact_counts(demo_app):
    app, _ = demo_app
    k = app.knowledge
    k.entity.value_input = "jo"
    # the demo's four facts and "moved to Lisbon", extracted from its drawer
    assert list(k.matches.options) == ["Jonas — 5 facts"]
    assert k.matches.value is None  # nothing opened until one is picked
    assert "1 entity matches “jo”" in k.found.object
    k.entity.value_input = "zzz"
    assert k.matches.options == {} and "0 entities match" in k.found.object
    k.entity.value_input = ""
    assert k.found.object == ""


def test_picking_a_match_shows_facts_in_and_out_the_graph_and_the_timeline(demo_app):
    app, _ = demo_app
    k = app.knowledge
    assert k.nodes.data["x"] == []
    k.entity.value_input = "jon"
    k.matches.value = "jonas"
    assert "<td>in</td><td>marta</td><td>friend of</td>" in k.facts.object
    assert "<td>out</td><td>jonas</td><td>lives in</td><td>berlin</td>" in k.facts.object
    assert k.nodes.data["label"][0] == "jonas" and "marta" in k.nodes.data["label"]
    assert len(k.links.data["x0"]) == 5 and "friend of" in k.links.data["label"]
    assert "kg-timeline" in k.timeline.object
    k.as_of.value = "2020-06-01"
    assert "berlin" in k.facts.object and "lisbon" not in k.facts.object
    assert "as of 2020-06-01" in k.facts.object


def test_enter_opens_the_name_typed_or_its_best_match(demo_app):
    app, _ = demo_app
    k = app.knowledge
    k.entity.value = "Marta"
    assert k.opened == "marta"
    k.entity.value = "clou"  # no such entity: the best match opens
    assert k.opened == "cloud-company"


def test_a_bad_date_is_a_sentence_under_the_date_field(demo_app):
    app, _ = demo_app
    k = app.knowledge
    k.entity.value = "Jonas"
    k.as_of.value = "2020"
    assert "As of is too short: 4 characters" in error_of(k.find, "as_of")
    assert k.look.disabled is True
    k.as_of.value = "not a date"
    k.lookup()
    assert "is not an ISO 8601 date" in error_of(k.find, "as_of")
    k.as_of.value = ""
    assert error_of(k.find, "as_of") == "" and k.look.disabled is False


def test_ending_a_fact_needs_a_pick_and_a_confirm_and_can_be_undone(demo_app):
    app, p = demo_app
    k = app.knowledge
    k.entity.value = "Jonas"
    assert k.end_pick.value is None and k.end.disabled is True  # nothing pre-selected
    label = "jonas lives in lisbon (from 2024-03-01)"
    tid = k.end_pick.options[label]
    k.end_pick.value = tid
    k.end_on.value = "2025-06-30"
    assert k.end.disabled is False
    k.ask()
    assert k.yes.disabled is False and k.end.disabled is True
    assert f"End “{label}” on 2025-06-30?" in k.question.object
    assert p.kg.get(tid).valid_to is None  # asking ends nothing
    k.cancel_end()
    assert k.yes.disabled is True and p.kg.get(tid).valid_to is None
    k.ask()
    k.confirm_end()
    assert p.kg.get(tid).valid_to == "2025-06-30"
    assert f"Ended “{label}” on 2025-06-30." in k.end_note.object
    assert k.undo.disabled is False
    assert label not in k.end_pick.options  # no longer current
    before = {f: getattr(p.kg.get(tid), f) for f in ("confidence", "valid_from",
                                                      "observed_at", "source_drawer")}
    k.undo_end()
    t = p.kg.get(tid)
    assert (t.valid_to, t.invalidated_at) == (None, None) and k.undo.disabled is True
    assert {f: getattr(t, f) for f in before} == before
    assert "is current again" in k.end_note.object and label in k.end_pick.options


def test_an_end_date_before_the_fact_started_is_said_under_the_date(demo_app):
    app, p = demo_app
    k = app.knowledge
    k.entity.value = "Jonas"
    tid = k.end_pick.options["jonas lives in lisbon (from 2024-03-01)"]
    k.end_pick.value = tid
    k.end_on.value = "2020-01-01"
    k.ask()
    k.confirm_end()
    assert "cannot end at 2020-01-01" in error_of(k.end_form, "ended")
    assert p.kg.get(tid).valid_to is None and k.undo.disabled is True


def test_add_is_disabled_until_the_fact_is_complete_and_says_what_is_missing(demo_app):
    app, p = demo_app
    k = app.knowledge
    assert k.add.disabled is True
    assert error_of(k.add_form, "subject") == ""  # untouched fields say nothing yet
    k.subject.value_input = "Ada"
    k.subject.value_input = ""
    assert "Fill in “Subject”." in error_of(k.add_form, "subject")
    k.subject.value_input, k.predicate.value_input = XSS, "plays"
    k.object.value_input = "chess"
    assert k.add.disabled is False
    k.valid_from.value_input = "2019"
    assert k.add.disabled is True and "Valid from is too short" in \
        error_of(k.add_form, "valid_from")
    k.valid_from.value_input = "2019-01-01"
    k._add()
    assert "Fact added" in k.add_note.object
    assert "<img" not in k.facts.object and "&lt;img src=x" in k.facts.object  # text, escaped
    k.entity.value_input = "img"
    assert any("img" in label for label in k.matches.options)


def test_cycles_zero_is_a_sentence_and_run_is_disabled(demo_app):
    app, _ = demo_app
    a = app.agents
    assert a.run_button.disabled is False
    a.cycles.value = 0
    assert "Cycles must be at least 1, not 0." in error_of(a.form, "cycles")
    assert a.run_button.disabled is True
    a.cycles.value = None  # the box emptied
    assert "Cycles is empty: it must be a whole number." in error_of(a.form, "cycles")
    out = run(a.run(2, 0, 3))  # a call from Python is checked too: nothing runs
    assert out == {"cycles_run": 0, "cancelled": False}
    assert a.progress.value == 0
    a.cycles.value, a.agents.value = 3, 101
    assert "Agents must be at most 100, not 101." in error_of(a.form, "agents")
    a.agents.value = 2
    assert a.run_button.disabled is False and error_of(a.form, "agents") == ""
    run(a._start())
    assert a.progress.value == 3 and "Done: 3 of 3 cycles" in a.note.object


def test_provenance_buttons_wait_for_a_slice_and_a_token():
    app = build_app(Bridge(Palace(clock=lambda: 1.0))).palazzo_app
    assert app.provenance.make.disabled is True and app.provenance.verify.disabled is True
    assert app.provenance.make_slice() is None
    assert "no conversations yet" in error_of(app.provenance.slice_form, "anchor")


def test_provenance_empty_token_is_said_next_to_it(demo_app):
    app, _ = demo_app
    prov = app.provenance
    assert prov.make.disabled is False and prov.verify.disabled is True
    assert prov.make_slice() is not None and prov.verify.disabled is False
    prov.token.value_input = ""
    assert prov.verify.disabled is True
    assert prov.check() is None
    assert "The token is empty" in error_of(prov.verify_form, "bundle")
    prov.token.value_input = prov.bundle["token"]
    assert prov.check()["valid"] is True


def test_the_tab_says_what_the_graph_holds_and_how_it_was_found(demo_app):
    app, p = demo_app
    about = app.knowledge.about.object
    stats = p.kg.stats()
    read = stats["statement_types"]["observation"]
    assert 'data-testid="kg-about"' in about
    assert f"{stats['entities']} entities and {stats['triples']} facts." in about
    assert f"{read} fact{' was' if read == 1 else 's were'} read from your own words" in about
    assert "not the assistant" not in about or "never the assistant" in about
    assert "by fixed rules, not a model" in about
    assert "other languages give entities but few facts" in about


def test_the_summary_line_reads_plainly_for_an_empty_or_hand_made_graph():
    from palazzo.hosts.ui.knowledge import about_text

    empty = about_text({"entities": 0, "triples": 0, "statement_types": {}})
    assert empty.startswith("0 entities and 0 facts. Entities are")
    hand = about_text({"entities": 1, "triples": 1, "statement_types": {"fact": 1}})
    assert hand.startswith("1 entity and 1 fact.") and "read from" not in hand
