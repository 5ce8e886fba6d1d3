"""The Knowledge, Agents and Provenance tabs in Chromium, network blocked: find an entity by
typing two letters, open its neighbourhood, end a fact through the confirm step and undo it;
a swarm of 0 cycles is refused in words with Run disabled; a provenance slice is made and
verified; and the console stays clean (no warning, no error) through all of it.

One page on the demo palace for the module (booting costs ~15 s).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import new_guarded_context
from .test_ui import BOOT_TIMEOUT_MS, tab, text_of, wait_text
from .test_ui_map import BLAME_JS

pytestmark = pytest.mark.browser
FIGURE = "Neighbourhood"
LISBON = "jonas lives in lisbon (from 2024-03-01)"

# The data of the Knowledge tab's neighbourhood plot, as BokehJS holds it.
GRAPH_JS = """(title) => {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views ?? [])) walk(c); };
  for (const root of Object.values(window.Bokeh.index)) walk(root);
  const plot = views.find((v) => v.model.title && v.model.title.text === title);
  const r = plot.model.renderers.find((r) => r.data_source && r.data_source.data.label
                                              && r.data_source.data.colour);
  return {labels: Array.from(r.data_source.data.label),
          x: [plot.model.x_range.start, plot.model.x_range.end]};
}"""


@pytest.fixture(scope="module")
def page(browser, site_url):
    """The demo palace's page; console warnings and errors are recorded once it has booted."""
    context, guard = new_guarded_context(browser)
    context.add_init_script(BLAME_JS)
    pg = context.new_page()
    pg.set_default_timeout(BOOT_TIMEOUT_MS)
    pg.errors, pg.console_log, pg.booted = [], [], False
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.on("console", lambda m: pg.console_log.append(f"{m.type}: {m.text}")
          if pg.booted and m.type in ("warning", "error") else None)
    pg.goto(site_url)
    pg.evaluate("window.palazzo.rendered")
    text_of(pg, "palace-status")
    pg.booted = True
    pg.set_default_timeout(30_000)
    yield pg
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert pg.errors == []


def call(page, name, args):
    return page.evaluate("([n, a]) => window.palazzo.call(n, a)", [name, args])


def button(page, css):
    return page.locator(f".{css} button")


def test_two_letters_suggest_an_entity_and_picking_it_opens_its_neighbourhood(page):
    tab(page, "Knowledge")
    page.locator(".pz-kg-entity input").press_sequentially("jo")
    assert "1 entity matches “jo”" in wait_text(page, "kg-found", "match")
    matches = page.locator(".pz-kg-matches select")
    # the demo's four facts and "moved to Lisbon", extracted from its drawer
    assert matches.locator("option").all_inner_texts() == ["Jonas — 5 facts"]
    matches.select_option(label="Jonas — 5 facts")
    facts = wait_text(page, "kg-facts", "friend of")
    assert re.search(r"in\s+marta\s+friend of\s+jonas", facts)
    assert re.search(r"out\s+jonas\s+lives in\s+lisbon", facts)
    assert "lisbon" in text_of(page, "kg-timeline")
    page.wait_for_function(f"() => ({GRAPH_JS})({FIGURE!r}).labels.length === 5")
    graph = page.evaluate(GRAPH_JS, FIGURE)
    assert graph["labels"][0] == "jonas" and "marta" in graph["labels"]
    assert graph["x"] == [-1.6, 1.6]  # fixed ranges: never fitted to empty data


def test_ending_a_fact_asks_first_names_fact_and_date_and_can_be_undone(page):
    tab(page, "Knowledge")
    pick = page.locator(".pz-kg-end-pick select")
    assert pick.input_value() in ("", "None") or "pick" in pick.locator(
        "option:checked").inner_text()  # nothing pre-selected
    expect(button(page, "pz-kg-end")).to_be_disabled(timeout=30_000)
    pick.select_option(label=LISBON)
    date = page.locator(".pz-kg-end-on input")
    date.fill("2025-06-30")
    expect(button(page, "pz-kg-end")).to_be_enabled(timeout=30_000)
    button(page, "pz-kg-end").click()
    question = wait_text(page, "kg-confirm", "End")
    assert f"End “{LISBON}” on 2025-06-30?" in question

    def lisbon():
        return next(f for f in call(page, "kg_timeline", {"entity": "jonas"})["facts"]
                    if f["object"] == "lisbon")

    assert lisbon()["valid_to"] is None  # asking ended nothing
    button(page, "pz-kg-end-yes").click()
    assert f"Ended “{LISBON}” on 2025-06-30." in wait_text(page, "kg-end-note", "Ended")
    assert lisbon()["valid_to"] == "2025-06-30"
    button(page, "pz-kg-undo").click()
    assert "is current again" in wait_text(page, "kg-end-note", "Undone")
    assert lisbon()["valid_to"] is None and lisbon()["invalidated_at"] is None


def test_zero_cycles_is_said_next_to_the_field_and_run_is_disabled(page):
    tab(page, "Agents")
    cycles = page.locator(".pz-swarm-cycles input")
    cycles.fill("0")
    cycles.press("Tab")
    assert "Cycles must be at least 1, not 0." in wait_text(page, "swarm-cycles-error",
                                                             "Cycles")
    expect(button(page, "pz-swarm-run")).to_be_disabled(timeout=30_000)
    cycles.fill("3")
    cycles.press("Tab")
    page.locator("[data-testid=swarm-cycles-error]").wait_for(state="detached")
    expect(button(page, "pz-swarm-run")).to_be_enabled(timeout=30_000)


def test_provenance_slice_is_made_and_verified(page):
    tab(page, "Provenance")
    button(page, "pz-prov-slice").click()
    wait_text(page, "prov-token", "^[0-9a-f]{64}$")
    button(page, "pz-prov-verify").click()
    assert wait_text(page, "prov-verdict", "valid").startswith("valid")


def test_the_console_stayed_clean(page):
    """No warning or error since boot; none of Bokeh's "could not set initial ranges" is
    this tab's figure's (one blamed on another plot is printed, not failed: not ours)."""
    culprits = page.evaluate("window.__range_culprits")
    assert not any(FIGURE in c for c in culprits), culprits
    log = [m for m in page.console_log if "could not set initial ranges" not in m]
    assert log == [], page.console_log
    others = sum(1 for c in culprits if c)
    assert len(page.console_log) - len(log) <= others, (page.console_log, culprits)
    if culprits:
        print("initial-ranges warnings blamed on other plots:", culprits)
