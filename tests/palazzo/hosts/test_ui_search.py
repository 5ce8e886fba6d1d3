"""Search like a product under CPython: the snippet and its marks, the cut rule, when a drawer
was added, and the search/open/delete/undo and Add flows driven without a browser (the same
flows run in Chromium in tests/browser/test_ui_search.py)."""

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, bind  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import build_app  # noqa: E402
from palazzo.hosts.ui.drawers import name_problem, shown, text_problem  # noqa: E402
from palazzo.hosts.ui.hits import (  # noqa: E402
    matched_words,
    snippet_html,
    when,
    worth_showing,
)

XSS = '<img src=x onerror="alert(1)"><script>alert(2)</script>'
NOW = 1764633600.0


def hit(vector, bm25, did="d"):
    return {"drawer_id": did, "wing": "w", "room": "r", "content": "c", "score": 0.0,
            "scores": {"vector": vector, "bm25": bm25}}


def demo_app():
    p = Palace(clock=lambda: NOW)
    demo.build(bind(p))
    app = build_app(Bridge(p)).palazzo_app
    app.search.now = lambda: NOW + 90
    return app, p


def test_the_snippet_marks_the_query_words_and_escapes_everything_else():
    text = f"Basil {XSS} hates cold NIGHTS; <b>basil</b> again"
    out = snippet_html(text, "basil nights")
    assert "<img" not in out and "<script" not in out and "<b>" not in out
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in out
    assert out.count("<mark>") == 3  # Basil, NIGHTS, basil: case folded, whole words
    assert "<mark>NIGHTS</mark>" in out and "<mark>Basil</mark>" in out
    # A query word that is markup is still only text, and stopwords are not marked.
    assert "<mark>" not in snippet_html("the script tag", "the")
    assert snippet_html("<mark>x</mark>", "mark") == (
        "&lt;<mark>mark</mark>&gt;x&lt;/<mark>mark</mark>&gt;")
    assert "<mark>café</mark>" in snippet_html("un café noir", "cafe")  # diacritics folded


def test_the_snippet_is_the_best_matching_window_of_a_long_text():
    text = "filler words here. " * 40 + "The sourdough starter doubles. " + "more. " * 60
    out = snippet_html(text, "sourdough starter", width=120)
    assert out.startswith("…") and out.endswith("…")
    assert "<mark>sourdough</mark> <mark>starter</mark>" in out
    assert len(out.replace("<mark>", "").replace("</mark>", "")) <= 122
    assert snippet_html("short text", "absent") == "short text"
    assert matched_words("Sourdough: feed the starter", "starter of sourdough") == [
        "starter", "sourdough"]


def test_weak_hits_are_cut_and_word_matches_stay():
    hits = [hit(0.70, 5.0, "a"), hit(0.60, 0.0, "b"), hit(0.50, 0.0, "c"),
            hit(0.10, 0.5, "d"), hit(0.28, 0.0, "e"), hit(None, 2.0, "f")]
    kept = [h["drawer_id"] for h in worth_showing(hits)]
    # a: words; b: close (0.60 >= 0.70 - 0.15); c: too far below the best; d: a word match
    # under a fifth of the best BM25; e: under MIN_COSINE; f: no vector but words.
    assert kept == ["a", "b", "f"]
    assert worth_showing([hit(0.22, 0.0), hit(0.13, 0.0)]) == []  # nothing really matches
    assert [h["drawer_id"] for h in worth_showing([hit(None, 1.0, "x"), hit(None, 0.1, "y")])
            ] == ["x"]  # BM25 alone (no embedder yet)
    assert worth_showing([]) == []


def test_hits_the_event_list_found_stay():
    best, event, weak = hit(0.70, 5.0, "a"), hit(0.20, 0.3, "e"), hit(0.20, 0.3, "w")
    event["scores"]["event"] = 0.016
    weak["scores"]["event"] = 0.0
    assert [h["drawer_id"] for h in worth_showing([best, event, weak])] == ["a", "e"]


def test_drawers_the_graph_brought_in_as_evidence_stay():
    best, fact, far = hit(0.70, 5.0, "a"), hit(None, None, "f"), hit(None, None, "n")
    fact.update(via="lisbon")
    fact["scores"]["structural"] = 1.0  # holds the fact the question asks for
    far.update(via="porto")
    far["scores"]["structural"] = 0.5  # an entity one hop from the question's
    assert [h["drawer_id"] for h in worth_showing([best, fact, far])] == ["a", "f"]


def test_when_says_how_long_ago_then_the_date():
    assert when(NOW - 5, NOW) == "just now"
    assert when(NOW - 60, NOW) == "1 minute ago"
    assert when(NOW - 3 * 3600, NOW) == "3 hours ago"
    assert when(NOW - 2 * 86400, NOW) == "2 days ago"
    assert when(NOW - 30 * 86400, NOW).endswith("2025")
    assert when(0, NOW) == "" and when(None, NOW) == ""


def test_empty_query_says_so_and_search_is_disabled_until_typed():
    app, _ = demo_app()
    s = app.search
    assert s.go.disabled and "Type what you are looking for" in s.hint.object
    s.query.value_input = "basil"
    assert not s.go.disabled and s.hint.object == ""
    s.query.value_input = "   "
    assert s.go.disabled
    assert s.run() is None and "pz-error" in s.hint.object


def test_search_shows_cards_and_cuts_what_does_not_match():
    app, _ = demo_app()  # no embedder: BM25 alone, as in the browser before MiniLM arrives
    s = app.search
    s.query.value = "sourdough starter"
    assert [h["room"] for h in s.shown] == ["kitchen"]
    card = s.cards.objects[0]
    assert card.objects[0].name == "Home / kitchen"
    body = card.objects[1].object
    assert "<mark>Sourdough</mark> <mark>starter</mark>" in body
    assert "added 1 minute ago" in body and "matches sourdough, starter" in body
    assert "score" not in body and "1 drawer match" in s.summary.object
    s.query.value = "quantum chromodynamics"
    assert s.shown == [] and not any(shown(c) for c in s.cards.objects)
    assert all(c.objects[1].object == "" for c in s.cards.objects)  # no stale card text
    assert "No drawer matches" in s.summary.object and "Try other words" in s.summary.object


def test_a_card_opens_the_drawer_with_its_neighbours_and_a_neighbour_opens():
    app, p = demo_app()
    s = app.search
    s.query.value = "basil cold nights"
    s.cards.objects[0].objects[0].clicks += 1
    assert "Basil hates cold nights" in s.meta.object and "added 1 minute ago" in s.meta.object
    assert s.text.value.startswith("Basil") and not s.save.disabled
    labels = [b.name for b in s.near.objects if shown(b)]
    assert labels and all("Home / garden" in lab for lab in labels if "same room" in lab)
    assert any("climbing roses" in lab for lab in labels)  # the room's other drawers
    other = s.near.objects[0]
    label = other.name
    other.clicks += 1
    assert label.split(": ", 2)[2][:20] in s.text.value


def test_delete_asks_first_then_undo_puts_the_same_drawer_back():
    app, p = demo_app()
    s = app.search
    s.query.value = "lentil soup"
    s.cards.objects[0].objects[0].clicks += 1
    did = s.opened
    before = p.drawer(did).to_dict()
    s.ask.clicks += 1
    assert shown(s.yes) and shown(s.no)
    s.no.clicks += 1  # Cancel
    assert not shown(s.yes) and did in p.drawers.row_of
    s.ask.clicks += 1
    s.yes.clicks += 1
    assert did not in p.drawers.row_of and "Drawer deleted" in s.note.object
    assert shown(s.undo) and s.shown == [] and s.save.disabled
    s.undo.clicks += 1
    after = p.drawer(did).to_dict()
    kept = ("id", "wing", "room", "closet", "content", "source", "source_file", "importance",
            "created_at", "key")
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert not shown(s.undo) and s.opened == did and len(s.shown) == 1
    assert "restored" in s.note.object


def test_hostile_text_stays_text_on_cards_in_the_pane_and_on_neighbour_buttons():
    p = Palace(clock=lambda: NOW)
    p.add_drawer("w", "r", f"hostile {XSS} text")
    p.add_drawer("w", "r", f"another {XSS}")
    app = build_app(Bridge(p)).palazzo_app
    s = app.search
    s.query.value = "hostile"
    s.open(s.shown[0]["drawer_id"])
    for html in (s.cards.objects[0].objects[1].object, s.meta.object):
        assert "<img" not in html and "<script" not in html
        assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    # a widget label: text, not markup
    assert any("<img" in b.name for b in s.near.objects if shown(b))


def test_add_form_says_what_is_wrong_under_each_field_and_enables_add_when_valid():
    assert name_problem("", "wing") == "Give the wing a name."
    assert name_problem("  ", "room") == "Give the room a name."
    assert "at most 200 characters; this one has 201" in name_problem("x" * 201, "wing")
    assert "control characters" in name_problem("a\tb", "wing")
    assert name_problem("  garden ", "room") is None
    assert text_problem(" \n") == "Write the text you want to keep."
    assert text_problem("x") is None
    app, p = demo_app()
    a = app.add
    assert a.add.disabled and all(e.object == "" for e in a.errors.values())  # untouched
    a.wing.value_input = " "
    assert "Give the wing a name." in a.errors["wing"].object and a.add.disabled
    assert a.errors["room"].object == ""  # not touched yet: no error shown
    a.wing.value_input = "notes"
    a.room.value_input = "web"
    a.text.value_input = f"Kept: {XSS}"
    assert not a.add.disabled and all(e.object == "" for e in a.errors.values())
    assert a.submit()["created"]
    assert a.add.disabled and a.errors["text"].object == ""  # emptied, not a mistake
    a.wing_pick.value = "Home"  # choosing a wing fills the field
    assert a.values["wing"] == "Home"
    before = p.counts()["drawers"]
    a.room.value_input = ""
    assert a.submit() is None and "Give the room a name." in a.errors["room"].object
    assert p.counts()["drawers"] == before
