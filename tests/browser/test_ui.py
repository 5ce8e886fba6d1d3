"""The interface end to end in Chromium, network blocked: what a person does, click by click.

Each flow works through the Panel widgets rendered from the worker (stable css classes
``pz-…`` and ``data-testid`` attributes) and checks the result on the page and, where the page
cannot show it, through ``window.palazzo.call``.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import new_guarded_context

pytestmark = pytest.mark.browser
BOOT_TIMEOUT_MS = 180_000
XSS = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>'


def open_page(context, url):
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.set_default_timeout(BOOT_TIMEOUT_MS)
    page.goto(url)
    page.evaluate("window.palazzo.rendered")
    page.errors, page.dialogs = errors, dialogs
    return page


def tab(page, name):
    page.locator(".bk-tab").filter(has_text=re.compile(f"^{re.escape(name)}$")).click()


def text_of(page, testid):
    loc = page.locator(f"[data-testid={testid}]").first
    loc.wait_for()
    return loc.inner_text()


def wait_text(page, testid, pattern):
    """Wait until the element's text matches ``pattern``; return the text."""
    page.wait_for_function(
        """([id, pat]) => {
             const find = (root) => {
               const el = root.querySelector(`[data-testid="${id}"]`);
               if (el) return el;
               for (const host of root.querySelectorAll('*')) {
                 if (host.shadowRoot) { const f = find(host.shadowRoot); if (f) return f; }
               }
               return null;
             };
             const el = find(document);
             return el && new RegExp(pat).test(el.textContent);
           }""", arg=[testid, pattern])
    return text_of(page, testid)


@pytest.fixture(scope="module")
def session(browser, site_url):
    context, guard = new_guarded_context(browser, accept_downloads=True)
    page = open_page(context, site_url)
    yield page
    context.close()
    assert guard.outside == [], f"non-local requests were attempted: {guard.outside}"
    assert guard.failed == [], f"local requests failed: {guard.failed}"
    assert page.errors == [] and page.dialogs == []


# Where a room's dot is drawn on the map canvas, in page coordinates (from BokehJS's own
# scales), so the test can click it as a person would.
ROOM_XY = """(label) => {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views ?? [])) walk(c); };
  for (const root of Object.values(window.Bokeh.index)) walk(root);
  const plot = views.find((v) => v.model.title && v.model.title.text === "Wings and rooms");
  const dots = plot.model.renderers.find((r) => r.data_source && r.data_source.data.label);
  const data = dots.data_source.data;
  const i = Array.from(data.label).indexOf(label);
  const box = plot.canvas_view.el.getBoundingClientRect();
  return [box.left + plot.frame.x_scale.compute(data.x[i]),
          box.top + plot.frame.y_scale.compute(data.y[i])];
}"""


def test_first_launch_shows_the_demo_palace_and_its_map(session):
    page = session
    status = text_of(page, "palace-status")
    assert "Demo palace" in status and "saved in this browser" in status
    assert re.search(r"\b\d+ drawers\b", status)
    tab(page, "Map")
    assert page.locator(".pz-tabs canvas").count() >= 1
    x, y = page.evaluate(ROOM_XY, "Home/garden")
    page.mouse.click(x, y)  # clicking a room lists its drawers
    assert "Home / garden (3 drawers)" in wait_text(page, "room-title", "garden")
    assert "climbing roses" in text_of(page, "room-drawers")
    tab(page, "Heat")
    assert "Home" in text_of(page, "heat-table")


def test_search_open_edit_and_delete(session):
    page = session
    tab(page, "Search")
    page.locator(".pz-search-query input").fill("sourdough starter")
    page.locator(".pz-search-query input").press("Enter")
    assert "Sourdough" in wait_text(page, "search-result", "Sourdough")
    page.locator(".pz-result-open button:not([disabled])").first.click()
    assert "Sourdough" in wait_text(page, "drawer-text", "Sourdough")
    page.locator(".pz-drawer-edit textarea").fill("Sourdough starter: feed it every morning.")
    page.locator(".pz-drawer-save button").click()
    wait_text(page, "drawer-note", "Saved")
    found = page.evaluate("window.palazzo.call('search', {query: 'feed it every morning'})")
    assert found["results"][0]["content"] == "Sourdough starter: feed it every morning."
    drawer_id = found["results"][0]["drawer_id"]
    page.locator(".pz-drawer-delete button").click()
    page.locator(".pz-drawer-delete-yes button").click()
    wait_text(page, "drawer-note", "deleted")
    code = page.evaluate(f"""window.palazzo.call('get_drawer', {{drawer_id: '{drawer_id}'}})
                             .then(() => null, (e) => e.code)""")
    assert code == "not_found"


def test_add_warns_about_duplicates_and_hostile_text_stays_text(session):
    page = session
    tab(page, "Add")
    page.locator(".pz-add-wing input").fill("notes")
    page.locator(".pz-add-room input").fill("web")
    page.locator(".pz-add-text textarea").fill(f"A pasted snippet: {XSS}")
    page.locator(".pz-add-go button").click()
    wait_text(page, "add-note", "Added")
    page.locator(".pz-add-wing input").fill("elsewhere")
    page.locator(".pz-add-text textarea").fill(f"A pasted snippet: {XSS}")
    page.locator(".pz-add-go button").click()
    assert "notes / web" in wait_text(page, "add-duplicate", "already have")
    tab(page, "Search")
    page.locator(".pz-search-query input").fill("pasted snippet")
    page.locator(".pz-search-query input").press("Enter")
    shown = wait_text(page, "search-result", "pasted")
    assert "<img src=x" in shown and "<script>" in shown  # shown as text
    page.locator(".pz-result-open button:not([disabled])").first.click()
    assert "onerror" in wait_text(page, "drawer-text", "onerror")
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("window.__pwned === undefined")


def test_knowledge_lookup_as_of_a_date(session):
    page = session
    tab(page, "Knowledge")
    page.locator(".pz-kg-entity input").fill("Jonas")
    page.locator(".pz-kg-asof input").fill("2020-06-01")
    page.locator(".pz-kg-look button").click()
    facts = wait_text(page, "kg-facts", "berlin")
    assert "lisbon" not in facts
    assert "lisbon" in text_of(page, "kg-timeline")


def test_navigate_shows_the_path_and_its_costs(session):
    page = session
    tab(page, "Navigate")
    page.locator(".pz-nav-start input").fill("Home / garden")  # room pickers complete names
    page.locator(".pz-nav-start input").press("Enter")
    page.locator(".pz-nav-goal input").fill("Projects / palazzo")
    page.locator(".pz-nav-goal input").press("Enter")
    page.locator(".pz-nav-preset select").select_option("memory_recall")
    page.locator(".pz-nav-go button").click()
    assert re.search(r"\d+ steps, total cost", wait_text(page, "nav-summary", "steps"))
    steps = text_of(page, "nav-steps")
    assert "Projects / palazzo" in steps and "structural" in steps


def test_swarm_reports_progress_stays_responsive_and_can_be_cancelled(session):
    page = session
    tab(page, "Agents")
    # 100 agents × 10,000 cycles: a run long enough (minutes) to cancel on purpose.
    page.locator(".pz-swarm-agents input").fill("100")
    page.locator(".pz-swarm-agents input").press("Enter")
    page.locator(".pz-swarm-cycles input").fill("10000")
    page.locator(".pz-swarm-cycles input").press("Enter")
    page.locator(".pz-swarm-run button").click()
    page.wait_for_function("""() => {
        const find = (root) => { const w = root.querySelector('.pz-swarm-progress');
            if (w) return (w.shadowRoot ?? w).querySelector('progress') ?? w.querySelector(
            'progress'); for (const h of root.querySelectorAll('*'))
            if (h.shadowRoot) { const f = find(h.shadowRoot); if (f) return f; } return null; };
        const p = find(document); return p && Number(p.value) > 0; }""")
    # The page's own calls are answered while the swarm runs.
    assert page.evaluate("window.palazzo.call('palace_status')")["drawers"] > 0
    page.locator(".pz-swarm-cancel button").click()
    note = wait_text(page, "swarm-note", "Cancelled")
    done = int(re.search(r"Cancelled: ([\d,]+) of 10,000 cycles", note).group(1)
               .replace(",", ""))
    assert 0 < done < 10000


def test_provenance_slice_is_made_and_verified(session):
    page = session
    tab(page, "Provenance")
    page.locator(".pz-prov-slice button").click()
    token = wait_text(page, "prov-token", "^[0-9a-f]{64}$")
    assert len(token) == 64
    page.locator(".pz-prov-verify button").click()
    assert wait_text(page, "prov-verdict", "valid").startswith("valid")
    page.locator(".pz-prov-token input").fill(("1" if token[0] != "1" else "2") + token[1:])
    page.locator(".pz-prov-token input").press("Enter")
    page.locator(".pz-prov-verify button").click()
    assert "bad_signature" in wait_text(page, "prov-verdict", "INVALID")


def _export(page):
    doc = page.evaluate("window.palazzo.call('export', {vectors: 'none'})")["document"]
    body = doc["palace"]
    return {k: body[k] for k in ("wings", "rooms", "drawers", "kg", "conversations",
                                 "diaries")}


def test_export_then_import_into_a_fresh_profile_and_a_bad_file_changes_nothing(
        browser, site_url, tmp_path):
    context, guard = new_guarded_context(browser, accept_downloads=True)
    page = open_page(context, site_url)
    page.evaluate("""window.palazzo.call('add_drawer', {wing: 'travel', room: 'lisbon',
                     content: 'The tram 28 is slow but worth it.'})""")
    tab(page, "Palaces & files")
    with page.expect_download() as info:
        page.locator(".pz-export button").click()
    name = page.evaluate("window.palazzo.call('palace_status')")["name"]
    assert re.fullmatch(re.escape(name) + r"-\d{4}-\d{2}-\d{2}\.json",
                        info.value.suggested_filename)
    path = tmp_path / "palace.json"
    info.value.save_as(path)
    assert json.loads(path.read_text())["format"] == "palazzo"
    expected = _export(page)
    context.close()

    fresh, guard2 = new_guarded_context(browser)
    other = open_page(fresh, site_url)
    other.evaluate("window.palazzo.deferred")
    tab(other, "Palaces & files")
    before = _export(other)
    bad = tmp_path / "broken.json"
    bad.write_text('{"format": "palazzo", "version": 1, "palace": {"drawers": 7}}')
    other.locator(".pz-import-open").click()
    other.locator("#import-files-input").set_input_files(str(bad))
    other.wait_for_function("document.getElementById('import-status').className"
                            " === 'import-error'")
    assert "broken.json" in other.locator("#import-status").inner_text()
    assert _export(other) == before
    other.locator("#import-files-input").set_input_files(str(path))
    other.wait_for_function("document.getElementById('import-dialog').dataset.state"
                            " === 'found'")
    # Into the open palace: its contents replaced by the file's, its name kept.
    other.locator('input[name="import-target"][value="open"]').check()
    other.locator("#import-go").click()
    other.wait_for_function("document.getElementById('import-dialog').dataset.state"
                            " === 'done'")
    assert other.locator("#import-status").inner_text().startswith("Loaded the palace file")
    other.wait_for_function("""async () => {
        const s = await window.palazzo.call('palace_status');
        return s.embedded === s.drawers; }""", polling=500)  # embedded after the import
    assert _export(other) == expected
    fresh.close()
    for g in (guard, guard2):
        assert g.outside == [] and g.failed == []
    assert page.errors == [] and other.errors == []
