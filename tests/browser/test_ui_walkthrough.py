"""What a new person's walk-through found (issue 31, point 8), in Chromium at 390 px wide,
network blocked: a hidden tab neither widens the page nor takes the keyboard's focus, a PNG
named conversations.json is refused in one line with nothing changed, and opening another
palace leaves nothing of the old one on the tabs (no stale Delete).

One page (``?embedder=hash``), the tests in order: the palace switch comes last.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest

from .conftest import new_guarded_context
from .test_ui import open_page, tab, wait_text
from .test_ui_import import DROP, status
from .test_ui_search import FIND_ALL
from .test_ui_shell import TABS, until_selected

pytestmark = pytest.mark.browser

# The focused element (through shadow roots), and whether an ancestor of it is a tab panel
# that is not the selected one: [tag, text, in a hidden panel].
FOCUSED = """() => {
  let a = document.activeElement;
  while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement;
  if (!a) return null;
  let hidden = false;
  for (let n = a; n; n = n.parentNode || n.host) {
    if (n.nodeType === 1 && n.getAttribute('role') === 'tabpanel'
        && getComputedStyle(n).visibility === 'hidden') hidden = true;
  }
  return [a.tagName, (a.textContent || a.value || '').trim().slice(0, 40), hidden];
}"""


def png_bytes() -> bytes:
    """A minimal valid PNG (one pixel, written by zlib and struct: tests/palazzo/data)."""
    return (Path(__file__).resolve().parents[1] / "palazzo" / "data" / "pixel.png").read_bytes()


@pytest.fixture(scope="module")
def page(browser, site_url):
    context, guard = new_guarded_context(browser, viewport={"width": 390, "height": 844})
    pg = open_page(context, site_url + "?embedder=hash")
    pg.set_default_timeout(60_000)
    yield pg
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert pg.errors == [] and pg.dialogs == []


def go(page, name: str) -> None:
    """Click the tab ``name``; return once it is selected and web/a11y.js has marked it."""
    tab(page, name)
    until_selected(page, name)
    page.wait_for_timeout(300)  # the debounced pass of web/a11y.js after the switch


def test_a_hidden_tab_never_widens_a_390_px_page(page):
    # A slice's id and the tables under it, drawn in the Provenance tab, were laid out
    # while another tab showed and widened the page to 434 px.
    go(page, "Provenance")
    page.locator(".pz-prov-slice button").click()
    wait_text(page, "prov-slice-id", "slice")
    go(page, "Navigate")
    page.locator(".pz-nav-go button").click()
    wait_text(page, "nav-summary", "total cost")
    widths = {}
    for name in TABS:
        go(page, name)
        widths[name] = page.evaluate("document.documentElement.scrollWidth")
    assert all(w <= 390 for w in widths.values()), widths


def test_tab_from_the_strip_never_focuses_a_control_of_a_hidden_tab(page):
    for name in ("Start", "Heat"):
        go(page, name)
        page.locator(".bk-tab").filter(has_text=re.compile(f"^{re.escape(name)}$")).focus()
        seen = []
        for _ in range(30):
            page.keyboard.press("Tab")
            seen.append(page.evaluate(FOCUSED))
        assert [s for s in seen if s and s[2]] == [], seen


def test_a_png_named_conversations_json_is_refused_and_changes_nothing(page):
    before = page.evaluate("window.palazzo.call('list_palaces', {})")
    page.evaluate(DROP, ["conversations.json", base64.b64encode(png_bytes()).decode()])
    said = status(page, "PNG")
    assert said.startswith("conversations.json: a PNG image, not JSON text")
    assert page.locator("#import-go").is_hidden()
    page.locator("#import-close").click()
    assert page.evaluate("window.palazzo.call('list_palaces', {})") == before


def test_another_palace_leaves_nothing_of_the_old_one_on_the_tabs(page):
    go(page, "Search")
    box = page.locator(".pz-search-query input")
    box.fill("roses")
    box.press("Enter")
    wait_text(page, "search-summary", "roses")
    page.locator(".pz-result-open button:not([disabled])").first.click()
    wait_text(page, "drawer-text", ".")
    go(page, "Palaces & files")
    page.locator(".pz-palace-new-name input").fill("Second")
    page.locator(".pz-palace-new button").click()
    wait_text(page, "palace-note", "Started Second")
    go(page, "Search")
    wait_text(page, "drawer-empty", "Click a result")
    cards = page.evaluate(f"({FIND_ALL})('[data-testid=search-result]')"
                          ".map(e => e.textContent)")
    assert cards == [], cards
    assert page.evaluate(f"({FIND_ALL})('[data-testid=drawer-text]').length") == 0
    assert page.locator(".pz-drawer-delete button").is_disabled()  # no stale Delete…
