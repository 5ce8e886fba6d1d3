"""The Panel interface: views over operations, no palace logic of its own.

This package is a host: it is the only place in :mod:`palazzo` that imports Panel, and it
reads and changes the palace only through the bridge's operations. :func:`build_app` lays the
views out as tabs under a status line, the first tab a welcome that says what to do; each
advanced tab opens with one line saying what it shows and why one would use it. After any
change a view calls ``ctx.changed()`` and every view reloads what it shows.

The tab strip is Bokeh's; web/tabs.js gives it the WAI-ARIA tab roles and keys in the page.
"""

from __future__ import annotations

import panel as pn

from palazzo.hosts.bridge import Bridge
from palazzo.hosts.ui.agents import AgentsView
from palazzo.hosts.ui.common import CSS, Context, intro, message
from palazzo.hosts.ui.communities import Communities
from palazzo.hosts.ui.drawers import AddView, SearchView
from palazzo.hosts.ui.drawers import show as show_widget
from palazzo.hosts.ui.explore import HeatView, NavigateView
from palazzo.hosts.ui.files import FilesView
from palazzo.hosts.ui.knowledge import PICK, KnowledgeView
from palazzo.hosts.ui.palacemap import PalaceMap
from palazzo.hosts.ui.provenance import ProvenanceView
from palazzo.hosts.ui.status import StatusLine
from palazzo.hosts.ui.welcome import WelcomeView

TABS = ("Start", "Map", "Search", "Add", "Heat", "Navigate", "Knowledge", "Agents",
        "Provenance", "Palaces & files")

# The one line each tab beyond the first three opens with: what it shows, why use it.
INTROS = {
    "Map": "Your wings and rooms as a map: bigger dots hold more drawers, darker ones are "
           "visited more, or colour them by community (drawers about one thing). Click a "
           "room to list its drawers.",
    "Heat": "How much each room has been explored and used (pheromone heat), to see what "
            "your palace leans on and what it forgets.",
    "Navigate": "Find a path from one room to another that follows meaning and past use, "
                "to see how two topics connect.",
    "Knowledge": "Facts about people, places and things (subject, predicate, object) with "
                 "the dates they held, to ask what was true when.",
    "Agents": "Let a swarm of small agents walk the palace and leave trails, which shape "
              "the heat and the paths that navigation prefers; specialists keep diaries and "
              "generalists propose tunnels between wings for you to approve.",
    "Provenance": "Cut a signed slice of a conversation and verify it, to prove which turns "
                  "an answer was given and that none was changed; the atlas shows which "
                  "turns matter across many slices.",
    "Palaces & files": "Download this palace as a file, import one, open, start and "
                       "delete palaces kept in this browser, or check the files of the "
                       "open palace and repair them.",
}


class App:
    """Every view of one document, over one bridge."""

    def __init__(self, bridge: Bridge) -> None:
        self.ctx = Context(bridge)
        # First of all: on a palace switch, what the views showed goes before they reload.
        self.ctx.on_switch(self.forget)
        self.status = StatusLine(self.ctx)
        # Before the views: it hears of a change first, so their refreshes find it stale.
        self.communities = Communities(self.ctx)
        self.welcome = WelcomeView(self.ctx, self.show, self.try_search)
        self.map = PalaceMap(self.ctx, self.communities)
        self.search = SearchView(self.ctx, self.communities, on_map=self.locate)
        self.add = AddView(self.ctx)
        self.heat = HeatView(self.ctx)
        self.navigate = NavigateView(self.ctx, self.map)
        self.knowledge = KnowledgeView(self.ctx)
        self.agents = AgentsView(self.ctx)
        self.provenance = ProvenanceView(self.ctx)
        self.files = FilesView(self.ctx)
        views = (self.welcome, self.map, self.search, self.add, self.heat, self.navigate,
                 self.knowledge, self.agents, self.provenance, self.files)
        self.tabs = pn.Tabs(*((name, self._opened(name, v.view))
                              for name, v in zip(TABS, views, strict=True)),
                            dynamic=False, sizing_mode="stretch_width",
                            css_classes=["pz-tabs"])
        self.layout = pn.Column(
            pn.pane.HTML('<h1 class="pz-title">palazzo</h1>', sizing_mode="stretch_width"),
            self.status.pane, self.tabs, sizing_mode="stretch_width", design=pn.theme.Native,
            css_classes=["pz-app"])

    @staticmethod
    def _opened(name: str, view: pn.viewable.Viewable) -> pn.viewable.Viewable:
        """Return ``view`` under its tab's intro line, or as it is for a tab without one."""
        if name not in INTROS:
            return view
        return pn.Column(intro(INTROS[name], name), view, sizing_mode="stretch_width")

    def forget(self) -> None:
        """Drop everything the tabs show of the palace open before (another is open now):
        search results and the opened drawer (its Delete and Undo with it), the map's room
        list, ring and path, the navigation result, the opened entity, the swarm's and the
        slice's results. Their refreshes, which follow, load the new palace. Returns None."""
        # The search and knowledge views are reset from here (their modules are being
        # reworked); the same steps as deleting the opened drawer, without the delete.
        s = self.search
        s.shown = []
        s._fill_cards([], "")
        s.summary.object = ""
        s.opened, s._place, s._deleted, s._came_from = None, None, None, None
        s._confirming(False)
        s._editable(False)
        s.meta.object = message("Click a result to open it here.", "info", "drawer-empty")
        s.text.value = ""
        s.note.object = s.used.object = s.conversation.object = s.near_title.object = ""
        s._fill_neighbours([])
        for w in (s.read_it, s.map_it, s.undo):
            show_widget(w, False)
        s.copy.disabled = s.helpful.disabled = True
        k = self.knowledge
        k.opened = None
        k.facts.object = k.timeline.object = k.end_note.object = k.add_note.object = ""
        k.nodes.data = {name: [] for name in k.nodes.data}
        k.links.data = {name: [] for name in k.links.data}
        k.end_pick.options, k.end_pick.value = {PICK: None}, None
        m = self.map
        m.drawers.object = ""
        m.show_path([])
        m.focus_ring.data = {"x": [], "y": [], "r": []}
        self.navigate.out.object = ""
        self.agents.results.object = self.agents.note.object = ""
        self.agents.last = None
        p = self.provenance
        p.bundle = None
        p.slice.object = p.result.object = p.atlas.object = ""
        p.token.value = ""

    def show(self, name: str) -> None:
        """Switch to the tab called ``name`` (one of TABS); returns None."""
        self.tabs.active = TABS.index(name)

    def locate(self, wing: str, room: str, drawer_id: str) -> None:
        """Show drawer ``drawer_id`` on the map: its room selected and ringed, the drawer
        marked in the room's list under the map; switch to the Map tab (here, for Python
        callers; in the page the buttons' ``pz-go-map`` class switches the drawn tab strip,
        which a change of ``active`` made in the worker does not reach). Returns None."""
        self.map.focus(wing, room, drawer_id)
        self.show("Map")

    def try_search(self, query: str) -> None:
        """Search for ``query`` as if typed into the Search tab, and show that tab."""
        box = self.search.query
        box.value_input = query
        if box.value == query:
            self.search.submit()  # the same query again: no change event to run it
        else:
            box.value = query
        self.show("Search")


def build_app(bridge: Bridge) -> pn.viewable.Viewable:
    """Return the palazzo Panel layout for the bridge's open palace (the app object is kept
    on the layout as ``palazzo_app`` for hosts and tests)."""
    if CSS not in pn.config.raw_css:  # raw_css reaches every component's shadow root
        pn.config.raw_css = [*pn.config.raw_css, CSS]
    app = App(bridge)
    app.layout.palazzo_app = app
    bridge.hooks.refresh_ui = app.ctx.changed  # changes made through the page's RPC
    bridge.hooks.refresh_status = app.status.refresh  # background embedding progress
    bridge.hooks.packages_ready = app.search.packages_ready  # NetworkX: communities
    bridge.hooks.lock_free = app.files.lock_free  # a read-only palace's writer has gone
    bridge.hooks.exported = app.files.exported  # the page saved the palace file
    return app.layout
