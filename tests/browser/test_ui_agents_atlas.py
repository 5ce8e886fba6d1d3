"""Communities, agents that act and the atlas in Chromium, network blocked: the map is
coloured by community and lists the communities, search keeps to one community, a swarm of
generalists and specialists runs and shows what each agent did, a proposed tunnel is approved
(and is then a TUNNEL of the palace), a specialist's diary is shown, and the atlas lists the
conversation's influential turns; every control of those tabs has a name, and the console
stays clean.

One page for the module, the demo palace with ``?embedder=hash`` (the hashing embedder after
the first render: two rooms of different wings holding the same texts are as similar as can
be, so a generalist passing through one proposes a tunnel to the other).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from .conftest import new_guarded_context
from .test_ui import BOOT_TIMEOUT_MS, tab, text_of, wait_text
from .test_ui_map import BLAME_JS, PLOT_JS
from .test_ui_shell import unnamed_controls

pytestmark = pytest.mark.browser
TITLE = "Wings and rooms"
BREAD = ("Sourdough starter wants flour and water twice a day.",
         "Knead the sourdough and let it rise overnight in the fridge.",
         "Bake the sourdough loaf at a high heat with steam.")

# The map's rooms as BokehJS holds them: label, colour group and community.
ROOMS_JS = f"""(title) => {{
  const plot = ({PLOT_JS})(title);
  const d = plot.model.renderers.map((r) => r.data_source).filter(Boolean)
    .find((s) => s.data.label !== undefined).data;
  const dots = plot.model.renderers.find((r) => r.data_source && r.data_source.data.label
                                              && r.glyph.type === "Circle");
  return {{ labels: Array.from(d.label), group: Array.from(d.group),
           community: Array.from(d.community), fill: dots.glyph.fill_color.field,
           bar: plot.model.below.filter((m) => m.type === "ColorBar")[0].visible }};
}}"""


@pytest.fixture(scope="module")
def page(browser, site_url):
    """The demo palace's page with two bakeries in two wings; console warnings and errors
    are recorded once it has booted."""
    context, guard = new_guarded_context(browser)
    context.add_init_script(BLAME_JS)
    pg = context.new_page()
    pg.set_default_timeout(BOOT_TIMEOUT_MS)
    pg.errors, pg.console_log, pg.booted = [], [], False
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.on("console", lambda m: pg.console_log.append(f"{m.type}: {m.text}")
          if pg.booted and m.type in ("warning", "error") else None)
    pg.goto(site_url + "?embedder=hash")
    pg.evaluate("window.palazzo.rendered")
    pg.evaluate("window.palazzo.deferred")  # the embedder is in: drawers get vectors
    for wing, room in (("Kitchen", "bread"), ("Notebook", "baking")):
        for text in BREAD:
            call(pg, "add_drawer", {"wing": wing, "room": room, "content": text})
    text_of(pg, "palace-status")
    pg.booted = True
    pg.set_default_timeout(60_000)
    yield pg
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert pg.errors == []


def call(page, name, args=None):
    return page.evaluate("([n, a]) => window.palazzo.call(n, a)", [name, args or {}])


def button(page, css):
    return page.locator(f".{css} button")


def test_the_map_is_coloured_by_community_and_lists_them(page):
    tab(page, "Map")
    page.locator(".pz-map-colour-by select").select_option(label="community")
    listed = wait_text(page, "community-list", "sourdough|starter|knead|bake")
    found = call(page, "communities", {"limit": 1000})
    assert found["total"] >= 2
    assert found["communities"][0]["name"] in listed  # the largest first, named by its words
    page.wait_for_function(f"() => ({ROOMS_JS})({TITLE!r}).fill === 'group'")
    rooms = page.evaluate(ROOMS_JS, TITLE)
    assert rooms["bar"] is False  # no heat scale while coloured by community
    at = dict(zip(rooms["labels"], rooms["group"], strict=True))
    # the two bakeries hold the same texts: the same community, the same colour
    assert at["Kitchen/bread"] == at["Notebook/baking"] != "#d9d9d9"
    assert len(set(rooms["group"])) >= 3 and all(rooms["community"])
    page.locator(".pz-map-colour-by select").select_option(label="pheromone heat")
    page.wait_for_function(f"() => ({ROOMS_JS})({TITLE!r}).bar === true")


def test_the_search_filter_offers_communities_after_boot_without_a_change(browser, site_url):
    """The first refresh comes before NetworkX has loaded; the worker tells the views when
    the deferred packages are in, so the demo palace's filter lists its communities then,
    with no change to the palace."""
    context, guard = new_guarded_context(browser)
    pg = context.new_page()
    pg.set_default_timeout(BOOT_TIMEOUT_MS)
    pg.goto(site_url + "?embedder=hash")
    pg.evaluate("window.palazzo.deferred")
    tab(pg, "Search")
    options = pg.locator(".pz-search-community select option")
    expect(options.nth(1)).to_be_attached(timeout=60_000)
    assert options.first.inner_text() == "(all)"
    context.close()
    assert guard.outside == [] and guard.failed == []


def test_search_keeps_to_the_chosen_community(page):
    tab(page, "Search")
    found = call(page, "communities", {"limit": 1000})
    bakery = next(c for c in found["communities"]
                  if any(r["wing"] == "Kitchen" for r in c["rooms"]))
    others = next(c for c in found["communities"] if c["id"] != bakery["id"]
                  and not any(r["wing"] in ("Kitchen", "Notebook") for r in c["rooms"]))
    pick = page.locator(".pz-search-community select")
    labels = pick.locator("option").all_inner_texts()
    mine = next(t for t in labels if t.startswith(f'{others["id"]}: '))
    pick.select_option(label=mine)
    query = page.locator(".pz-search-query input")
    query.fill("sourdough")
    query.press("Enter")
    assert "No drawer matches" in wait_text(page, "search-empty", "sourdough")
    mine = next(t for t in labels if t.startswith(f'{bakery["id"]}: '))
    pick.select_option(label=mine)
    button(page, "pz-search-go").click()
    assert "Sourdough" in wait_text(page, "search-result", "Sourdough")
    pick.select_option(label="(all)")


def test_a_swarm_acts_and_a_proposed_tunnel_is_approved(page):
    tab(page, "Agents")
    for name in ("generalist", "specialist"):
        page.locator(".pz-swarm-archetypes button").filter(
            has_text=re.compile(f"^{name}$")).click()
    agents = page.locator(".pz-swarm-agents input")
    agents.fill("6")
    agents.press("Tab")
    cycles = page.locator(".pz-swarm-cycles input")
    cycles.fill("300")
    cycles.press("Tab")
    button(page, "pz-swarm-run").click()
    note = wait_text(page, "swarm-note", "^Done")
    assert re.search(r"Done: 300 of 300 cycles", note), note
    table = text_of(page, "swarm-agents")
    assert "specialist-0" in table and "generalist-1" in table  # in the archetypes' order
    proposals = call(page, "list_tunnel_proposals")
    assert proposals["counts"]["pending"] >= 1, (note, proposals)
    assert re.search(r"[1-9]\d* tunnels? proposed", note)
    best = proposals["proposals"][0]
    wait_text(page, "tunnel-list", "similarity|proposed by|↔|/")
    expect(button(page, "pz-tunnel-approve")).to_be_enabled()
    chosen = page.locator(".pz-tunnel-pick select").input_value()  # the option's label
    ends = [best[k].split(":", 1)[1].replace("/", " / ") for k in ("src", "dst")]
    assert chosen.startswith(f"{ends[0]} ↔ {ends[1]} (similarity")  # the best one first
    button(page, "pz-tunnel-approve").click()
    assert "Tunnel added" in wait_text(page, "tunnel-note", "Tunnel added")
    joined = {frozenset((t["src"], t["dst"])) for t in call(page, "find_tunnels")["tunnels"]}
    assert frozenset((best["src"], best["dst"])) in joined
    status = {p["id"]: p["status"] for p in
              call(page, "list_tunnel_proposals", {"status": "all"})["proposals"]}
    assert status[best["id"]] == "approved"
    # the specialist's diary: what it found in its wing, as text
    entries = wait_text(page, "diary-entries", "specialist-")
    assert "walked" in entries
    assert "room" in text_of(page, "node-pheromones")  # wings and rooms the agents marked


def test_the_atlas_lists_the_influential_turns(page):
    tab(page, "Provenance")
    page.locator(".pz-prov-budget input").fill("200")
    page.locator(".pz-prov-budget input").press("Tab")
    page.locator(".pz-prov-form select").select_option(label="text")
    button(page, "pz-prov-slice").click()
    wait_text(page, "prov-token", "^[0-9a-f]{64}$")
    assert "user:" in wait_text(page, "prov-context", "user:")
    button(page, "pz-prov-verify").click()
    assert wait_text(page, "prov-verdict", "valid").startswith("valid")
    button(page, "pz-atlas-run").click()
    summary = wait_text(page, "atlas-summary", "anchor turns sliced")
    assert "4 anchor turns sliced" in summary, summary
    turns = text_of(page, "atlas-turns")
    assert "central" in turns and "assistant:" in turns


def test_every_control_of_these_tabs_has_a_name_and_the_console_stayed_clean(page):
    missing = {}
    for name in ("Map", "Search", "Navigate", "Agents", "Provenance"):
        tab(page, name)
        page.wait_for_timeout(300)  # the debounced labelling pass after the patches
        found = unnamed_controls(page)
        if found:
            missing[name] = found
    assert missing == {}, missing
    log = [m for m in page.console_log if "could not set initial ranges" not in m]
    assert log == [], page.console_log
