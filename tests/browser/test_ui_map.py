"""The palace map in Chromium, network blocked, on the demo palace: it renders with its heat
legend and colour bar, the labels it shows do not overlap and are not clipped (measured from
BokehJS's own views and the canvas's text metrics), switching heat kinds recolours it, a
navigation path is drawn through every node the Semantic A* returned, and the console stays
free of warnings and errors (Bokeh's "could not set initial ranges" above all) throughout.

One page for the whole module (booting costs ~15 s); the flows run in file order.
"""

from __future__ import annotations

import re

import pytest

from .conftest import new_guarded_context
from .test_ui import BOOT_TIMEOUT_MS, tab, text_of, wait_text

pytestmark = pytest.mark.browser
TITLE = "Wings and rooms"

# The map's plot view (BokehJS), found by its title.
PLOT_JS = """(title) => {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views ?? [])) walk(c); };
  for (const root of Object.values(window.Bokeh.index)) walk(root);
  return views.find((v) => v.model.title && v.model.title.text === title);
}"""

# Every shown wing and room label's box on the canvas (px): the anchor from the plot's own
# scales and the label's pixel offsets, the size from the canvas's measureText in the label's
# font; plus the frame's box and how many labels are hidden.
LABELS_JS = f"""(title) => {{
  const plot = ({PLOT_JS})(title);
  const ctx = document.createElement("canvas").getContext("2d");
  const boxes = [];
  let hidden = 0;
  for (const model of plot.model.center) {{
    if (model.type !== "LabelSet" || model.text.field !== "text") continue;
    const d = model.source.data;
    const size = model.text_font_size.value;
    ctx.font = `${{model.text_font_style.value}} ${{size}} ${{model.text_font.value}}`;
    const px = parseFloat(size);
    const col = (spec, i) => (spec.field ? d[spec.field][i] : spec.value);
    for (let i = 0; i < d.text.length; i++) {{
      const text = d.text[i];
      if (!text) {{ hidden += 1; continue; }}
      const sx = plot.frame.x_scale.compute(d.lx[i]) + col(model.x_offset, i);
      const sy = plot.frame.y_scale.compute(d.ly[i]) - col(model.y_offset, i);
      const w = ctx.measureText(text).width, h = px * 1.2;
      const align = col(model.text_align, i), base = col(model.text_baseline, i);
      const x0 = align === "left" ? sx : align === "right" ? sx - w : sx - w / 2;
      const y0 = base === "top" ? sy : base === "bottom" ? sy - h : sy - h / 2;
      boxes.push({{ text, x0, y0, x1: x0 + w, y1: y0 + h }});
    }}
  }}
  const f = plot.frame.bbox;
  return {{ boxes, hidden, frame: {{ x0: f.left, y0: f.top, x1: f.right, y1: f.bottom }} }};
}}"""

# What the map shows: colour bar, room heat, the path and its step nodes.
STATE_JS = f"""(title) => {{
  const plot = ({PLOT_JS})(title);
  const sources = plot.model.renderers.map((r) => r.data_source).filter(Boolean);
  const rooms = sources.find((s) => s.data.label !== undefined).data;
  const steps = sources.find((s) => s.data.step !== undefined).data;
  const path = plot.model.renderers.find((r) => r.glyph && r.glyph.type === "Line");
  const bars = plot.model.below.filter((m) => m.type === "ColorBar");
  return {{ colour_bars: bars.length, high: bars.length ? bars[0].color_mapper.high : null,
           heat: Array.from(rooms.heat), labels: Array.from(rooms.label),
           path_x: Array.from(path.data_source.data.x), path_y: Array.from(path.data_source.data.y),
           step_nodes: Array.from(steps.node), step_x: Array.from(steps.x),
           step_y: Array.from(steps.y) }};
}}"""

# Time BokehJS's paints of the plot while the wheel zooms and the mouse pans (ms each).
PAINT_HOOK_JS = f"""(title) => {{
  const plot = ({PLOT_JS})(title);
  window.__paints = [];
  const paint = plot.paint.bind(plot);
  plot.paint = (...args) => {{ const t0 = performance.now(); const out = paint(...args);
                               window.__paints.push(performance.now() - t0); return out; }};
  return true;
}}"""

# Before the page's scripts: each Bokeh "could not set initial ranges" warning is logged with
# the titles of the plots whose ranges were not numbers at that moment (the culprits).
BLAME_JS = """(() => {
  const warn = console.warn;
  window.__range_culprits = [];
  console.warn = function (...args) {
    if (args.join(" ").includes("could not set initial ranges")) {
      const bad = [];
      const walk = (v) => {
        const m = v.model;
        if (m && m.x_range && isNaN(m.x_range.start + m.x_range.end + m.y_range.start
                                    + m.y_range.end)) bad.push(m.title ? m.title.text : "?");
        for (const c of (v.child_views ?? [])) walk(c);
      };
      for (const root of Object.values((window.Bokeh || {}).index || {})) walk(root);
      window.__range_culprits.push(bad);
    }
    return warn.apply(this, args);
  };
})();"""

NEXT_FRAME_JS = """() => new Promise((resolve) => requestAnimationFrame(
  () => requestAnimationFrame(() => resolve(performance.now()))))"""


@pytest.fixture(scope="module")
def page(browser, site_url):
    """One page on the demo palace, with every console warning and error recorded (the
    recording starts once the page has booted: the flows here are what is checked)."""
    context, guard = new_guarded_context(browser)
    context.add_init_script(BLAME_JS)
    pg = context.new_page()
    pg.set_default_timeout(BOOT_TIMEOUT_MS)
    pg.console_log = []
    pg.boot_log = []
    pg.errors = []
    pg.on("pageerror", lambda exc: pg.errors.append(str(exc)))
    pg.on("console", lambda m: (pg.console_log if pg.booted else pg.boot_log).append(
        f"{m.type}: {m.text}") if m.type in ("warning", "error") else None)
    pg.booted = False
    pg.goto(site_url)
    pg.evaluate("window.palazzo.rendered")
    text_of(pg, "palace-status")
    pg.booted = True
    yield pg
    context.close()
    assert guard.outside == [] and guard.failed == []
    assert pg.errors == []
    print("console during boot:", pg.boot_log)


def no_console_noise(page):
    """Fail on any console warning or error since boot, and on any "could not set initial
    ranges" at all that the map is to blame for. Such warnings from another plot (whose
    ranges were the ones not set) are printed rather than failed here: not the map's."""
    culprits = page.evaluate("window.__range_culprits")
    assert not any(TITLE in c for c in culprits), culprits
    others = sum(1 for c in culprits if c)
    log = [m for m in page.console_log if "could not set initial ranges" not in m]
    ranges = len(page.console_log) - len(log)
    assert log == [] and ranges <= others, page.console_log
    if culprits:
        print("initial-ranges warnings, by the plots whose ranges were unset:", culprits)


def overlapping(boxes):
    """Return the pairs of boxes that overlap (by more than half a pixel)."""
    return [(a["text"], b["text"]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a["x0"] < b["x1"] - 0.5 and b["x0"] < a["x1"] - 0.5
            and a["y0"] < b["y1"] - 0.5 and b["y0"] < a["y1"] - 0.5]


def test_map_renders_with_a_legend_and_labels_that_neither_overlap_nor_clip(page):
    tab(page, "Map")
    assert "exploration heat" in wait_text(page, "map-legend", "exploration heat")
    state = page.evaluate(STATE_JS, TITLE)
    assert state["colour_bars"] == 1 and len(state["labels"]) == 10
    page.wait_for_function(f"() => ({PLOT_JS})({TITLE!r}).frame.bbox.width > 100")
    labels = page.evaluate(LABELS_JS, TITLE)
    texts = [b["text"] for b in labels["boxes"]]
    assert {"Home", "Projects", "garden", "palazzo"} <= set(texts)  # few rooms: all named
    assert labels["hidden"] == 0
    assert overlapping(labels["boxes"]) == []
    f = labels["frame"]
    for b in labels["boxes"]:  # nothing clipped at the plot's edge
        assert f["x0"] <= b["x0"] and b["x1"] <= f["x1"] and f["y0"] <= b["y0"] \
            and b["y1"] <= f["y1"], (b, f)
    no_console_noise(page)


def test_switching_heat_kinds_recolours_the_map_quickly(page):
    tab(page, "Map")
    # Walk a path with a deposit so the edge pheromones are not all zero.
    page.evaluate("window.palazzo.call('navigate', {start: 'Home/garden', goal: "
                  "'Projects/palazzo', deposit: true})")
    times = {}
    for kind in ("traversal", "recency", "success", "exploration"):
        t0 = page.evaluate("performance.now()")
        page.locator(".pz-map-kind select").select_option(kind)
        wait_text(page, "map-legend", f"{kind} heat")
        times[kind] = page.evaluate(NEXT_FRAME_JS) - t0
        state = page.evaluate(STATE_JS, TITLE)
        top = max(state["heat"])
        assert state["high"] == (top if top > 0 else 1.0)
        if kind == "traversal":
            assert top > 0  # the deposit warmed the rooms of the path
    print("heat kind switch to redrawn canvas (ms):",
          {k: round(v, 1) for k, v in times.items()})
    assert max(times.values()) < 3000
    no_console_noise(page)


def zoom_and_drag(page) -> list[float]:
    """Wheel-zoom the map ten times and drag it in twenty steps, as a person would; return
    the paint times (ms) the hook recorded (the map tab must be showing). Shared with
    tests/bench/map_scale.py."""
    page.evaluate(PAINT_HOOK_JS, TITLE)
    box = page.locator(".pz-tabs canvas").first.bounding_box()
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(cx, cy)
    for _ in range(10):
        page.mouse.wheel(0, -120)
    page.mouse.down()
    for i in range(20):
        page.mouse.move(cx + 6 * i, cy + 3 * i)
    page.mouse.up()
    page.evaluate(NEXT_FRAME_JS)
    return page.evaluate("window.__paints")


def test_pan_and_zoom_paint_times(page):
    tab(page, "Map")
    paints = zoom_and_drag(page)
    assert len(paints) >= 5
    paints.sort()
    print(f"map paints during pan/zoom: n={len(paints)} p50={paints[len(paints) // 2]:.1f} ms "
          f"max={paints[-1]:.1f} ms")
    assert paints[len(paints) // 2] < 50
    no_console_noise(page)


def test_navigate_draws_the_path_through_every_node_it_visits(page):
    tab(page, "Navigate")
    start = page.locator(".pz-nav-start input")
    start.fill("Home / garden")
    start.press("Enter")
    goal = page.locator(".pz-nav-goal input")
    goal.fill("Projects / palazzo")
    goal.press("Enter")
    page.locator(".pz-nav-go button").click()
    assert re.search(r"\d+ steps, total cost", wait_text(page, "nav-summary", "steps"))
    expected = page.evaluate("window.palazzo.call('navigate', {start: 'room:Home/garden', "
                             "goal: 'room:Projects/palazzo'})")["nodes"]
    assert "palace" in expected and "wing:Home" in expected
    tab(page, "Map")
    page.wait_for_function(f"(n) => ({STATE_JS})({TITLE!r}).step_nodes.length === n",
                           arg=len(expected))
    state = page.evaluate(STATE_JS, TITLE)
    assert state["step_nodes"] == expected
    assert len(state["path_x"]) == len(expected)
    palace = expected.index("palace")
    assert (state["path_x"][palace], state["path_y"][palace]) == (0.0, 0.0)
    assert state["path_x"] == state["step_x"] and state["path_y"] == state["step_y"]
    no_console_noise(page)
