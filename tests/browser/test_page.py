"""The built page in Chromium: boot, RPC, the Panel document, and the offline guard itself."""

from __future__ import annotations

import pytest

from .conftest import new_guarded_context

BOOT_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def booted(browser, site_url):
    """One page booted to its first rendered document, shared by this module's tests."""
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    page.goto(site_url)
    page.evaluate("window.palazzo.ready")
    page.evaluate("window.palazzo.rendered")
    yield page, guard, errors
    context.close()
    assert guard.outside == [], f"non-local requests were attempted: {guard.outside}"
    assert guard.failed == [], f"local requests failed: {guard.failed}"
    assert errors == []


def test_palace_status_through_the_worker_rpc(booted):
    page, _, _ = booted
    status = page.evaluate("window.palazzo.call('palace_status', {})")
    assert status["name"] == "Demo palace"  # a first launch builds the demo palace
    assert status["wings"] >= 4 and status["rooms"] >= 8 and status["drawers"] >= 15
    assert status["engine"]["python"].startswith("3.12")
    assert status["engine"]["platform"] == "emscripten"  # the engine ran in Pyodide


def test_deferred_packages_arrive_after_the_first_render(booted):
    page, _, _ = booted
    page.evaluate("window.palazzo.deferred")
    t = page.evaluate("window.palazzo.timings")
    assert t["deferred:done"] >= t["interface:done"]
    status = page.evaluate("window.palazzo.call('palace_status')")
    assert status["engine"]["scipy"] is False  # loaded when first needed (the atlas)
    assert status["embedder"]["name"] == "minilm"
    assert status["embedded"] == status["drawers"]  # the demo palace was embedded in steps


def test_the_loaded_libraries_bytes_are_let_go_and_their_modules_still_import(booted):
    """Pyodide keeps every shared library it instantiated, and the build every Python source
    beside its bytecode, as files nothing reads again; the worker empties those files.
    NumPy, Panel and Bokeh (imported after the boot packages' files were emptied), SciPy's
    sparse graphs and NetworkX (after the deferred ones') still work."""
    page, _, _ = booted
    page.evaluate("window.palazzo.deferred")
    stages = page.evaluate("window.palazzo.stages")
    freed = {k: float(stages[k].split(" MB")[0]) for k in ("packages:done", "deferred:done")}
    assert freed["packages:done"] > 5 and freed["deferred:done"] > 1, stages  # NumPy; NetworkX
    found = page.evaluate("window.palazzo.call('communities', {limit: 100})")  # NetworkX
    assert found["communities"]
    # SciPy loads when the atlas first runs, its libraries emptied too, and its sparse
    # graphs work.
    atlas = page.evaluate("window.palazzo.call('atlas', {limit: 5})")
    assert atlas["anchors"] == 4  # the demo conversation's turns
    assert page.evaluate("window.palazzo.call('palace_status')")["engine"]["scipy"] is True
    search = page.evaluate("window.palazzo.call('search', {query: 'roses'})")  # NumPy
    assert search["results"]


def test_drawers_are_added_and_found_through_the_worker(booted):
    page, _, _ = booted
    page.evaluate("window.palazzo.deferred")
    added = page.evaluate(
        """(async () => {
             const c = window.palazzo.call;
             await c('add_drawer', {wing: 'garden', room: 'roses',
                                    content: 'The climbing roses need pruning in late winter.'});
             await c('add_drawer', {wing: 'kitchen', room: 'bread',
                                    content: 'Sourdough starter wants feeding twice a day.'});
             return (await c('search', {query: 'when should I cut back my flowers?'})).results;
           })()"""
    )
    assert "roses" in added[0]["content"]  # the new drawer or the demo's rose drawer
    assert any(r["wing"] == "garden" for r in added[:3])
    assert added[0]["scores"]["vector"] is not None  # MiniLM ranked it, not only BM25


def test_errors_come_back_structured(booted):
    page, _, _ = booted
    error = page.evaluate(
        """window.palazzo.call('palace_status', {bogus: 1}).then(
             () => null, (e) => ({name: e.name, code: e.code, message: e.message}))"""
    )
    assert error == {
        "name": "PalaceError",
        "code": "invalid_arguments",
        "message": "Unknown field(s) for palace_status arguments: bogus (it takes: none).",
    }
    unknown = page.evaluate(
        "window.palazzo.call('no_such_operation').then(() => null, (e) => e.code)"
    )
    assert unknown == "unknown_operation"


def test_panel_document_renders_visible_content(booted):
    page, _, _ = booted
    assert page.locator("#boot").is_hidden()
    # Panel renders into shadow roots; Playwright's text selectors pierce them.
    status = page.locator("[data-testid=palace-status]")
    status.wait_for(state="visible")
    assert "drawers" in status.inner_text() and "Demo palace" in status.inner_text()
    knowledge = page.get_by_role("tab", name="Knowledge", exact=True)  # a tab (web/a11y.js)
    knowledge.wait_for(state="visible")
    assert knowledge.is_visible()
    box = page.locator("#app").bounding_box()
    assert box and box["height"] > 100


def test_boot_stages_were_reported_in_order(booted):
    page, _, _ = booted
    t = page.evaluate("window.palazzo.timings")
    order = ["runtime:done", "packages:done", "engine:done", "interface:done", "document:done"]
    assert all(k in t for k in order), t
    assert [t[k] for k in order] == sorted(t[k] for k in order)


def test_the_guard_catches_requests_to_other_hosts(browser, site_url):
    # Proof that the offline check can fail: a page that reaches out is caught, from the
    # page and from a worker alike.
    context, guard = new_guarded_context(browser)
    page = context.new_page()
    page.goto(site_url + "vendor/panel/css/loading.css")
    page.evaluate("fetch('http://example.invalid/a').catch(() => null)")
    page.evaluate(
        """new Promise((done) => {
             const src = "fetch('https://cdn.example.invalid/b').catch(()=>0).then(()=>postMessage(1))";
             const w = new Worker(URL.createObjectURL(new Blob([src])));
             w.onmessage = () => done(true);
           })"""
    )
    context.close()
    assert "http://example.invalid/a" in guard.outside
    assert "https://cdn.example.invalid/b" in guard.outside
