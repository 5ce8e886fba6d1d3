"""The Panel interface: views over operations, no palace logic of its own.

This package is a host: it is the only place in :mod:`palazzo` that imports Panel, and it
reads and changes the palace only through the bridge's operations. :func:`build_app` lays the
views out as tabs under a status line; after any change a view calls ``ctx.changed()`` and
every view reloads what it shows.
"""

from __future__ import annotations

import panel as pn

from palazzo.hosts.bridge import Bridge
from palazzo.hosts.ui.agents import AgentsView
from palazzo.hosts.ui.common import CSS, Context
from palazzo.hosts.ui.drawers import AddView, SearchView
from palazzo.hosts.ui.explore import HeatView, NavigateView
from palazzo.hosts.ui.files import FilesView
from palazzo.hosts.ui.knowledge import KnowledgeView
from palazzo.hosts.ui.palacemap import PalaceMap
from palazzo.hosts.ui.provenance import ProvenanceView
from palazzo.hosts.ui.status import StatusLine

TABS = ("Map", "Search", "Add", "Heat", "Navigate", "Knowledge", "Agents", "Provenance",
        "Palaces & files")


class App:
    """Every view of one document, over one bridge."""

    def __init__(self, bridge: Bridge) -> None:
        self.ctx = Context(bridge)
        self.status = StatusLine(self.ctx)
        self.map = PalaceMap(self.ctx)
        self.search = SearchView(self.ctx)
        self.add = AddView(self.ctx)
        self.heat = HeatView(self.ctx)
        self.navigate = NavigateView(self.ctx, self.map)
        self.knowledge = KnowledgeView(self.ctx)
        self.agents = AgentsView(self.ctx)
        self.provenance = ProvenanceView(self.ctx)
        self.files = FilesView(self.ctx)
        views = (self.map, self.search, self.add, self.heat, self.navigate, self.knowledge,
                 self.agents, self.provenance, self.files)
        self.tabs = pn.Tabs(*((name, v.view) for name, v in zip(TABS, views, strict=True)),
                            dynamic=False, sizing_mode="stretch_width",
                            css_classes=["pz-tabs"])
        self.layout = pn.Column(
            pn.pane.HTML('<h1 class="pz-title">palazzo</h1>', sizing_mode="stretch_width"),
            self.status.pane, self.tabs, sizing_mode="stretch_width", design=pn.theme.Native)


def build_app(bridge: Bridge) -> pn.viewable.Viewable:
    """Return the palazzo Panel layout for the bridge's open palace (the app object is kept
    on the layout as ``palazzo_app`` for hosts and tests)."""
    pn.config.raw_css = [*pn.config.raw_css, CSS]
    app = App(bridge)
    app.layout.palazzo_app = app
    bridge.hooks.refresh_ui = app.ctx.changed  # changes made through the page's RPC
    bridge.hooks.refresh_status = app.status.refresh  # background embedding progress
    bridge.hooks.lock_free = app.files.lock_free  # a read-only palace's writer has gone
    return app.layout
