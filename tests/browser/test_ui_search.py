"""Search like a product, in Chromium on the demo palace, network blocked: result cards that
open by click and by keyboard, weak hits cut off, the drawer in a side pane with neighbours,
edit, delete with a confirm step and undo, the empty-query sentence, the Add form's sentences,
hostile text inert, the 390 px layout, and no console warning or error during the flows.
"""

from __future__ import annotations

import statistics
import time

import pytest

from .conftest import new_guarded_context
from .test_ui import open_page, tab, wait_text

pytestmark = pytest.mark.browser
XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'

# The shadow-DOM-piercing lookup of wait_text, for conditions on several elements.
FIND_ALL = """(sel) => {
  const out = [];
  const walk = (root) => {
    out.push(...root.querySelectorAll(sel));
    for (const host of root.querySelectorAll('*')) if (host.shadowRoot) walk(host.shadowRoot);
  };
  walk(document);
  return out;
}"""


@pytest.fixture(scope="module")
def page(browser, site_url):
    context, guard = new_guarded_context(browser, viewport={"width": 1280, "height": 900})
    pg = open_page(context, site_url)
    pg.set_default_timeout(30_000)  # booted: a flow step that takes longer has failed
    pg.console_seen = []
    pg.on("console", lambda m: pg.console_seen.append(f"{m.type}: {m.text}")
          if m.type in ("warning", "error") else None)
    tab(pg, "Search")
    yield pg
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert pg.errors == [] and pg.dialogs == []


# BokehJS warns this when a figure of another tab (map, heat, knowledge) is redrawn empty
# after a change; those figures are another part of issue 14. Nothing else is let through.
OTHER_TABS = "warning: [bokeh 3.7.3] could not set initial ranges"


@pytest.fixture
def quiet(page):
    """Fail the test when the page logged a warning or an error during it."""
    page.console_seen.clear()
    yield page
    assert [m for m in page.console_seen if m != OTHER_TABS] == [], page.console_seen


def cards(page) -> list[str]:
    """Return the text of every result card on the page."""
    return page.evaluate(f"({FIND_ALL})('[data-testid=search-result]').map(e => e.textContent)")


def search(page, query: str, expect: str, card: str = "") -> float:
    """Search for ``query``; wait until the summary says ``expect`` (a regex) and, given
    ``card``, a result card shows that text; return the seconds from Enter until then."""
    box = page.locator(".pz-search-query input")
    box.fill(query)
    t0 = time.perf_counter()
    box.press("Enter")
    page.wait_for_function(
        f"""([q, pat]) => {{
              const all = ({FIND_ALL})(
                '[data-testid=search-summary],[data-testid=search-empty]');
              return all.some(e => e.textContent.includes(q)
                                   && new RegExp(pat).test(e.textContent));
            }}""", arg=[query, expect])
    if card:
        page.wait_for_function(f"""(c) => ({FIND_ALL})('[data-testid=search-result]')
                                   .some(e => e.textContent.includes(c))""", arg=card)
    return time.perf_counter() - t0


def test_empty_query_says_so_and_search_is_disabled(quiet):
    page = quiet
    assert "Type what you are looking for" in wait_text(page, "search-hint", "Type what")
    assert page.locator(".pz-search-go button").is_disabled()
    page.locator(".pz-search-query input").fill("x")
    page.wait_for_function(f"({FIND_ALL})('.pz-search-go button, button').length > 0")
    page.locator(".pz-search-go button:not([disabled])").wait_for()
    page.locator(".pz-search-query input").fill("")
    page.locator(".pz-search-go button[disabled]").wait_for()


def test_cards_show_place_marked_snippet_and_time_and_no_scores(quiet):
    page = quiet
    took = [search(page, q, "match", card) for q, card in (
        ("sourdough starter", "Sourdough"), ("violin", "violin"), ("roses pruning", "roses"),
        ("Jonas Lisbon", "Lisbon"), ("sourdough starter", "Sourdough"))]
    print(f"\nsearch-to-cards, 5 searches: median {statistics.median(took):.3f} s, "
          f"all {[round(t, 3) for t in took]}")
    shown = cards(page)
    assert len(shown) >= 1 and "Sourdough starter" in shown[0], shown
    assert not any("tomato" in c or "violin" in c for c in shown)  # unrelated drawers cut
    assert "score" not in " ".join(shown) and "bm25" not in " ".join(shown)
    marks = page.evaluate(f"({FIND_ALL})('[data-testid=search-snippet] mark')"
                          ".map(e => e.textContent)")
    assert {"Sourdough", "starter"} <= set(marks)
    assert "added" in shown[0] and "matches sourdough, starter" in shown[0]
    first = page.locator(".pz-result-open button:not([disabled])").first
    assert first.inner_text() == "Home / kitchen"
    assert page.locator(".pz-open").count() == 0  # no "Open result" dropdown any more


def test_a_query_with_no_real_match_shows_none_of_the_demo(quiet):
    page = quiet
    search(page, "quantum chromodynamics", "No drawer matches")
    assert cards(page) == []
    assert "Try other words" in wait_text(page, "search-empty", "Try")


def test_open_by_click_and_by_keyboard_with_neighbours(quiet):
    page = quiet
    search(page, "violin", "2 drawers match")
    page.locator(".pz-result-open button:not([disabled])").first.click()
    wait_text(page, "drawer-text", "violin")
    wait_text(page, "drawer-when", "added")
    wait_text(page, "drawer-neighbours", "Nearby")
    neighbour = page.locator(".pz-neighbour button:not([disabled])").first
    label = neighbour.inner_text()
    neighbour.click()
    place = label.split(": ")[1]
    wait_text(page, "drawer-title", place.split(" / ")[1])
    second = page.locator(".pz-result-open button:not([disabled])").nth(1)
    second.focus()
    page.keyboard.press("Enter")  # a real button: the keyboard opens it too
    title = second.inner_text().split(" / ")[1]
    wait_text(page, "drawer-title", title)
    assert "violin" in wait_text(page, "drawer-text", "[Vv]iolin").lower()


def test_the_pane_is_beside_the_results_wide_and_below_them_at_390(quiet):
    page = quiet
    box = lambda sel: page.locator(sel).first.bounding_box()  # noqa: E731
    results, pane = box(".pz-search-list"), box(".pz-drawer-pane")
    assert pane["x"] > results["x"] + results["width"] - 1  # side by side at 1280 px
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.wait_for_function(f"""() => ({FIND_ALL})('.pz-drawer-pane')[0]
                                   .getBoundingClientRect().right <= 390""")
        results, pane = box(".pz-search-list"), box(".pz-drawer-pane")
        assert pane["y"] >= results["y"] + results["height"] - 1  # stacked
        # Every part of the Search tab fits in 390 px (the page's other parts are not ours).
        for sel in (".pz-search-query", ".pz-search-wing", ".pz-search-room", ".pz-search-go",
                    ".pz-search-list", ".pz-drawer-pane", ".pz-drawer-edit"):
            b = box(sel)
            assert b["x"] >= 0 and b["x"] + b["width"] <= 391, (sel, b)
    finally:
        page.set_viewport_size({"width": 1280, "height": 900})


def test_edit_then_delete_with_confirm_then_undo(quiet):
    page = quiet
    search(page, "lentil soup", "match")
    page.locator(".pz-result-open button:not([disabled])").first.click()
    wait_text(page, "drawer-text", "lentil")
    page.locator(".pz-drawer-edit textarea").fill("Lentil soup: red lentils, cumin, lemon.")
    page.locator(".pz-drawer-save button").click()
    wait_text(page, "drawer-note", "Saved")
    wait_text(page, "drawer-text", "cumin, lemon.$")
    found = page.evaluate("window.palazzo.call('search', {query: 'red lentils cumin lemon'})")
    drawer = found["results"][0]["drawer_id"]
    before = page.evaluate(f"window.palazzo.call('get_drawer', {{drawer_id: '{drawer}'}})")
    page.locator(".pz-drawer-delete button").click()
    assert page.evaluate(f"window.palazzo.call('get_drawer', {{drawer_id: '{drawer}'}})"
                         ".then(() => 'there')") == "there"  # "Delete…" only asks
    page.locator(".pz-drawer-delete-no button").click()  # Cancel
    page.locator(".pz-drawer-delete button").click()
    page.locator(".pz-drawer-delete-yes button").click()
    wait_text(page, "drawer-note", "Drawer deleted")
    page.wait_for_function(f"({FIND_ALL})('[data-testid=search-result]')"
                           ".every(e => !e.textContent.includes('cumin'))")
    page.locator(".pz-drawer-undo button").click()
    wait_text(page, "drawer-note", "restored")
    page.wait_for_function(f"({FIND_ALL})('[data-testid=search-result]')"
                           ".some(e => e.textContent.includes('cumin'))")
    after = page.evaluate(f"window.palazzo.call('get_drawer', {{drawer_id: '{drawer}'}})")
    same = ("id", "wing", "room", "content", "importance", "source", "created_at")
    assert {k: after["drawer"][k] for k in same} == {k: before["drawer"][k] for k in same}


def test_add_form_says_what_is_wrong_under_the_field(quiet):
    page = quiet
    tab(page, "Add")
    add = page.locator(".pz-add-go button")
    assert add.is_disabled()
    page.locator(".pz-add-wing input").fill("   ")
    assert "Give the wing a name." in wait_text(page, "add-wing-error", "Give the wing")
    page.locator(".pz-add-wing input").fill("w" * 201)
    wait_text(page, "add-wing-error", "at most 200 characters")
    page.locator(".pz-add-wing input").fill("notes")
    page.locator(".pz-add-room input").fill("web")
    page.locator(".pz-add-text textarea").fill(f"Zanzibar notes, kept verbatim: {XSS}")
    page.locator(".pz-add-go button:not([disabled])").wait_for()
    assert page.evaluate(f"({FIND_ALL})('[data-testid=add-wing-error]').length") == 0
    add.click()
    wait_text(page, "add-note", "Added")
    assert add.is_disabled()  # the text is empty again
    tab(page, "Search")
    search(page, "zanzibar", "1 drawer match", "Zanzibar")
    shown = cards(page)
    assert "<img src=x" in shown[0] and "<script>" in shown[0]  # hostile text stays text
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("window.__pwned === undefined")
