// Accessibility the rendered Panel/Bokeh document lacks, added in the page:
// - WAI-ARIA tabs on Bokeh's tab strip (roles, aria-selected, aria-controls, a roving
//   tabindex; Left/Right/Home/End move focus, Enter/Space activate: "manual activation");
// - names and roles for focusable controls Bokeh leaves unnamed (figure toolbar buttons carry
//   a title but no role or name);
// - the focus ring in shadow roots Panel's stylesheets do not reach (raw Bokeh models);
// - hidden tabs out of the way: Bokeh hides an inactive tab's panel with visibility: hidden,
//   which leaves it laid out (a wide table there widened a 390 px page to 434) and its
//   scrollable tables and some buttons in the keyboard's Tab order; such a panel is made
//   inert (no focus, not in the accessibility tree) and clips what overflows it.
// Bokeh renders into shadow roots, so this walks them; it runs after the first render and,
// debounced, after every patch from the worker (views re-render and lose what was added).

const FOCUS_CSS = ":focus-visible { outline: 3px solid #1a5fb4 !important; outline-offset: 2px !important; }";
let focusSheet = null;

// Every shadow root under `root` (depth first); a few thousand elements in a full document.
function shadowRoots(root, out = []) {
  for (const el of root.querySelectorAll("*")) {
    if (el.shadowRoot) {
      out.push(el.shadowRoot);
      shadowRoots(el.shadowRoot, out);
    }
  }
  return out;
}

// Every BokehJS view of the page, roots first.
function allViews() {
  const views = [];
  const walk = (v) => { views.push(v); for (const c of (v.child_views ?? [])) walk(c); };
  for (const root of Object.values(window.Bokeh?.index ?? {})) walk(root);
  return views;
}

// Roles, ids and the roving tabindex from the view's active tab.
function syncTabs(view) {
  const active = view.model.active;
  view.header_els.forEach((tab, i) => {
    const panel = view.child_views[i]?.el;
    tab.id = `pz-tab-${i}`;
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", String(i === active));
    tab.tabIndex = i === active ? 0 : -1;
    if (panel) {
      const hidden = i !== active;
      panel.inert = hidden;
      panel.style.overflow = hidden ? "hidden" : "";
      panel.id = `pz-tabpanel-${i}`;
      panel.setAttribute("role", "tabpanel");
      panel.setAttribute("aria-labelledby", tab.id);
      tab.setAttribute("aria-controls", panel.id);
    }
  });
}

function onTabKey(event) {
  const tabs = [...event.currentTarget.querySelectorAll("[role=tab]")];
  const i = tabs.indexOf(event.target);
  if (i < 0) return;
  const n = tabs.length;
  const to = { ArrowLeft: (i - 1 + n) % n, ArrowRight: (i + 1) % n, Home: 0, End: n - 1 }[event.key];
  if (to !== undefined) {
    event.preventDefault();
    tabs[to].focus();
  } else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    event.target.click(); // Bokeh's own handler switches the tab
  }
}

// Make one Tabs view an ARIA tab widget; idempotent (its observer keeps it in sync).
function enhanceTabs(view) {
  const header = view.header_el;
  if (!header) return;
  if (header.dataset.pzTabs) { syncTabs(view); return; } // panels drawn again lose it
  header.dataset.pzTabs = "1";
  header.setAttribute("role", "tablist");
  header.setAttribute("aria-label", "palazzo views");
  header.addEventListener("keydown", onTabKey);
  // The active class changes (a click, Python setting `active`) and rebuilt headers.
  new MutationObserver(() => syncTabs(view)).observe(header, {
    childList: true, subtree: true, attributes: true, attributeFilter: ["class"],
  });
  syncTabs(view);
}

// Controls Bokeh renders without a name: toolbar buttons (a title, no role), the arrows of a
// number spinner, and a select's blank choice ("no choice yet").
function nameControls(root) {
  for (const el of root.querySelectorAll("[tabindex][title]:not([role])")) {
    if (!el.title) continue;
    el.setAttribute("role", "button");
    if (!el.hasAttribute("aria-label")) el.setAttribute("aria-label", el.title);
  }
  const field = root.querySelector("label")?.textContent.trim() ?? "";
  for (const [cls, verb] of [["bk-spin-btn-up", "Increase"], ["bk-spin-btn-down", "Decrease"]]) {
    for (const el of root.querySelectorAll(`.${cls}:not([aria-label])`)) {
      el.setAttribute("aria-label", `${verb} ${field}`.trim());
    }
  }
  // Bokeh's Checkbox puts its text in a sibling <div class="bk-label">, not a <label>.
  for (const el of root.querySelectorAll("input[type=checkbox]:not([aria-label])")) {
    const text = (el.closest("label") ?? root.querySelector("label, .bk-label"))
      ?.textContent.trim();
    if (text) el.setAttribute("aria-label", text);
  }
  for (const el of root.querySelectorAll(".bk-events[tabindex]:not([aria-label])")) {
    el.setAttribute("role", "img");
    el.setAttribute("aria-label", "Plot: drag to pan, scroll to zoom");
  }
  for (const el of root.querySelectorAll("option:not([aria-label])")) {
    if (!el.textContent.trim()) el.setAttribute("aria-label", "(none)");
  }
}

function adoptFocusRing(root) {
  if (!focusSheet) {
    focusSheet = new CSSStyleSheet();
    focusSheet.replaceSync(FOCUS_CSS);
  }
  if (!root.adoptedStyleSheets.includes(focusSheet)) {
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, focusSheet];
  }
}

// One pass over the document: tabs (and their hidden panels), names, focus rings.
export function enhance() {
  for (const view of allViews()) {
    if (view.header_el && view.header_els && view.model?.properties?.active) enhanceTabs(view);
  }
  for (const root of shadowRoots(document)) {
    nameControls(root);
    adoptFocusRing(root);
  }
}

// A click on an element (or inside one) with class pz-go-<tab> shows that tab, from the page:
// the welcome's Search and Add buttons (the tab strip is switched where it is drawn).
export function goToTab(event) {
  for (const el of event.composedPath()) {
    const go = [...(el.classList ?? [])].find((c) => c.startsWith("pz-go-"));
    if (!go) continue;
    const name = go.slice("pz-go-".length);
    for (const view of allViews()) {
      const tab = (view.header_els ?? []).find((t) => t.textContent.trim().toLowerCase() === name);
      if (tab) tab.click();
    }
    return;
  }
}

let pending = null;

// Run `enhance` once the current burst of patches has settled (at most every 150 ms).
export function enhanceSoon() {
  if (pending !== null) return;
  pending = setTimeout(() => { pending = null; enhance(); }, 150);
}
