"""The shell of the Panel interface under CPython: the plain status line, the welcome tab and
what its buttons do, and the one-line intros of the advanced tabs."""

import pytest

pn = pytest.importorskip("panel")

from palazzo import Palace, bind  # noqa: E402
from palazzo.hosts import demo  # noqa: E402
from palazzo.hosts.bridge import Bridge  # noqa: E402
from palazzo.hosts.ui import INTROS, TABS, build_app  # noqa: E402
from palazzo.hosts.ui.status import search_words, status_html  # noqa: E402
from palazzo.hosts.ui.welcome import DEMO_QUERY, welcome_html  # noqa: E402
from palazzo.persist.library import Library  # noqa: E402
from palazzo.persist.storage import MemoryRoot  # noqa: E402

XSS = '<img src=x onerror="alert(1)">'


def status(**over):
    base = {"name": "Mine", "wings": 2, "rooms": 3, "drawers": 23, "entities": 4,
            "embedded": 23, "embedder": {"name": "minilm", "dim": 384, "fingerprint": "f"}}
    return {**base, **over}


def test_status_says_in_words_what_search_can_do():
    assert search_words(status(), False) == "semantic search ready"
    assert search_words(status(embedded=5), False) == "semantic search: embedding 5 of 23…"
    assert search_words(status(embedder=None, embedded=0), True) == (
        "keyword search only (the language model is loading)")
    assert search_words(status(embedder=None), False) == "keyword search only (no language model)"
    assert search_words(status(embedder={"name": "hash"}), False) == "similarity search ready"
    assert search_words(status(drawers=0, embedded=0), False) == "semantic search ready"
    # Every drawer has a vector; some long turns have their opening window's only so far.
    assert search_words(status(to_embed=0, to_complete=1234), False) == (
        "semantic search ready · embedding the rest of 1,234 long turns…")
    assert search_words(status(to_embed=0, to_complete=1), False, "3.0 drawers/s") == (
        "semantic search ready · embedding the rest of 1 long turn · 3.0 drawers/s")


def test_status_says_which_drawers_semantic_search_does_not_read():
    html = status_html(status(unread={"drawers": 1234, "script": "latin"}), None)
    head = html.partition("<details")[0]
    assert ("semantic search reads English only: 1,234 drawers in other scripts are found "
            "by their words") in head
    one = status_html(status(unread={"drawers": 1, "script": "latin"}), None)
    assert "1 drawer in other scripts is found by its words" in one
    for none in (None, {"drawers": 0, "script": "latin"}):
        assert "status-unread" not in status_html(status(unread=none), None)


def test_status_gives_the_embedding_rate_and_what_computes_the_vectors():
    assert search_words(status(embedded=5), False, "12.5 drawers/s, about 2 s left") == (
        "semantic search: embedding 5 of 23 · 12.5 drawers/s, about 2 s left")
    emb = {"name": "minilm", "dim": 384, "fingerprint": "f",
           "runtime": "ONNX Runtime, wasm, 1 thread"}
    html = status_html(status(embedder=emb, embedded=5), None, rate="3.0 drawers/s, about 6 s left")
    head, _, detail = html.partition("<details")
    assert "embedding 5 of 23 · 3.0 drawers/s, about 6 s left" in head
    assert "embedder: minilm on ONNX Runtime, wasm, 1 thread (5/23 drawers embedded)" in detail


def test_status_line_is_plain_words_with_the_jargon_in_details():
    storage = {"backend": "opfs", "status": {"last_saved": None, "read_only": True,
                                             "problem": f"disk {XSS} full"}}
    html = status_html(status(name=XSS, drawers=1234, embedded=5), storage, True)
    head, _, detail = html.partition("<details")
    assert "1,234 drawers in 3 rooms of 2 wings" in head
    assert "saved in this browser" in head and "opfs" not in head and "embedder" not in head
    assert "read-only: this palace is open in another tab" in head
    assert "embedder: minilm (5/1,234 drawers embedded)" in detail
    assert "storage: opfs · last save not yet" in detail
    assert "<img" not in html and "&lt;img src=x" in html
    assert "1 room of" in status_html(status(rooms=1), None)


def test_welcome_for_the_demo_suggests_a_query_that_finds_a_demo_drawer():
    p = Palace(name=demo.DEMO_NAME, clock=lambda: 1764633600.0)
    demo.build(bind(p))
    app = build_app(Bridge(p)).palazzo_app
    assert TABS[0] == "Start" and app.tabs.active == 0
    assert "This is a demo palace" in app.welcome.text.object
    assert DEMO_QUERY in app.welcome.text.object and app.welcome.try_demo.visible
    # Without a language model (as at first render in the browser): words alone find it.
    assert p.embedder is None
    app.welcome.try_demo.clicks += 1
    assert TABS[app.tabs.active] == "Search"
    hits = bind(p)("search", {"query": DEMO_QUERY, "limit": 1})["results"]
    assert hits and hits[0]["room"] == "garden" and "roses" in hits[0]["content"]
    app.welcome.add.clicks += 1
    assert TABS[app.tabs.active] == "Add"
    app.welcome.search.clicks += 1
    assert TABS[app.tabs.active] == "Search"


def test_welcome_for_another_palace_and_the_import_button():
    app = build_app(Bridge(Palace(name="Notes", clock=lambda: 0.0))).palazzo_app
    assert "Notes is empty" in app.welcome.text.object and not app.welcome.try_demo.visible
    button = app.welcome.importer.object
    assert 'data-action="import"' in button and 'type="button"' in button
    html = welcome_html(XSS, 3)
    assert "<img" not in html and "is open" in html


def test_welcome_follows_the_open_palace():
    lib = Library(MemoryRoot(), lambda **kw: Palace(clock=lambda: 0.0, **kw))
    lib.new_palace(demo.DEMO_NAME)
    app = build_app(Bridge(library=lib)).palazzo_app
    assert "demo palace" in app.welcome.text.object
    lib.new_palace("Second")
    app.ctx.changed()
    assert "Second is empty" in app.welcome.text.object and not app.welcome.try_demo.visible
    assert "kept in memory only" in app.status.pane.object


def test_every_advanced_tab_opens_with_its_intro_line():
    app = build_app(Bridge(Palace(clock=lambda: 0.0))).palazzo_app
    for name in ("Heat", "Navigate", "Knowledge", "Agents", "Provenance", "Palaces & files"):
        first = app.tabs[TABS.index(name)][0]
        assert 'class="pz-intro"' in first.object and INTROS[name] in first.object
