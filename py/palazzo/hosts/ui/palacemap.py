"""The palace map: wings as discs around the palace, rooms inside their wing coloured by
pheromone heat (with its colour bar) or by community (with the list of communities) and sized
by drawer count; halls and tunnels drawn once per pair of wings they join; tapping a room lists
its drawers (each with where it came from: a file's name, a turn's speaker and time); a
navigation path is drawn through every node it visits (palace, wings, rooms, drawers); "Show
on the map" from a search result or a drawer selects its room, rings it and marks the drawer
in the room's list (:meth:`PalaceMap.focus`).

Where things go is :mod:`palazzo.hosts.ui.maplayout` (pure geometry). The plot's ranges are
computed only from an invisible frame glyph holding the padded layout box (never empty), so
BokehJS always has initial ranges, even for an empty palace or a hidden tab, and keeps the
aspect ratio (circles stay round). Heat per room comes from the ``pheromone_heat`` operation,
halls and tunnels from ``export_graph`` at the rooms level; a room's community is the one
holding most of its drawers (:mod:`palazzo.hosts.ui.communities`), loaded only while the map is
coloured by community.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import panel as pn
from bokeh.models import (
    Arrow,
    ColorBar,
    ColumnDataSource,
    DataRange1d,
    HoverTool,
    LabelSet,
    LinearColorMapper,
    TapTool,
    VeeHead,
)
from bokeh.plotting import figure

from palazzo.hosts.ui import maplayout
from palazzo.hosts.ui.common import Context, esc, html_pane, message, plural, soon, verb
from palazzo.hosts.ui.communities import (
    OTHER,
    Communities,
    community_colour,
    legend_html,
    room_community,
)
from palazzo.hosts.ui.hits import source_short

KINDS = ("exploration", "exploitation", "traversal", "recency", "success")
# What each kind means and what leaves it (heat from use: palazzo.ops.pheromone).
MEANING = {
    "exploration": "how much the room's drawers have been searched already (each search "
                   "adds to the drawers it shows; explored with little found)",
    "exploitation": "how valuable the room's drawers proved when they were used (opened, "
                    "copied or marked Helpful)",
    "traversal": "how often links through the room were walked (a nearby drawer opened "
                 "from another, navigation that reinforces its path, the agents)",
    "recency": "how recently links through the room were walked",
    "success": "how often links through the room led to a result (a drawer opened, copied "
               "or marked Helpful after walking them)",
}
BUNDLE_COLOURS = {"HALL": "#9aa5b1", "TUNNEL": "#3b6ea5"}
COLD, HOT = (255, 244, 214), (178, 24, 43)
PATH_COLOUR = "#d4a000"
FOCUS_COLOUR = "#1a5fb4"  # the ring around the room "Show on the map" selected
ROOM_LIST = 200  # drawers listed under the map for a room (newest first)
COLOUR_BY = {"pheromone heat": "heat", "community": "community"}
HEAT_TIPS = [("room", "@wing / @room"), ("drawers", "@drawers"), ("heat", "@heat{0.000}")]
COMMUNITY_TIPS = [("room", "@wing / @room"), ("drawers", "@drawers"),
                  ("community", "@community")]


def colour(value: float, top: float) -> str:
    """Return a hex colour from pale (0) to dark red (``top``)."""
    t = 0.0 if top <= 0 else min(value / top, 1.0)
    rgb = (round(c0 + (c1 - c0) * t) for c0, c1 in zip(COLD, HOT, strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


PALETTE = [colour(i, 255) for i in range(256)]


def heat_of(room: dict[str, Any], kind: str) -> float:
    """Return a room's heat of pheromone ``kind`` (node kinds: drawer sum; edge kinds: sum of
    the edges touching it)."""
    if kind in ("exploration", "exploitation"):
        return float(room[kind]["sum"])
    return float(room["edges"][kind])


def bundles(links: list[dict[str, Any]], wing_of: dict[str, str]) -> dict[tuple[str, str],
                                                                             dict[str, int]]:
    """Return {(wing a, wing b): {"HALL": n, "TUNNEL": m}} for the halls and tunnels that join
    rooms of two different wings (a < b); those inside one wing are left out (its disc shows
    them together). ``wing_of`` maps room node ids to their wing. O(links)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for x in links:
        if x["kind"] not in BUNDLE_COLOURS:
            continue
        a, b = wing_of.get(x["source"]), wing_of.get(x["target"])
        if a is None or b is None or a == b:
            continue
        key = (a, b) if a < b else (b, a)
        counts = out.setdefault(key, {"HALL": 0, "TUNNEL": 0})
        counts[x["kind"]] += 1
    return out


def chord(a: tuple[float, float, float], b: tuple[float, float, float]) -> tuple[float, ...]:
    """Return (x0, y0, x1, y1): the segment between two discs (x, y, r), edge to edge."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    d = math.hypot(dx, dy) or 1.0
    return (a[0] + dx / d * a[2], a[1] + dy / d * a[2], b[0] - dx / d * b[2],
            b[1] - dy / d * b[2])


class PalaceMap:
    """The map figure, its heat-kind selector and legend, and the drawers of the tapped room."""

    def __init__(self, ctx: Context, communities: Communities | None = None) -> None:
        self.ctx = ctx
        self.communities = communities or Communities(ctx)
        self.colour_by = pn.widgets.Select(name="Colour rooms by", options=COLOUR_BY,
                                           value="heat", width=160,
                                           css_classes=["pz-map-colour-by"])
        self.kind = pn.widgets.Select(name="Heat", options=list(KINDS), value="exploration",
                                      width=160, css_classes=["pz-map-kind"])
        self.legend = html_pane("map-legend")
        self.groups = html_pane("map-communities")
        self.drawers = html_pane("room-drawers")
        self.lay = maplayout.Layout()
        self._shown_mode = "heat"  # how the dots are coloured now (see :meth:`_mode`)
        self._heat: list[dict[str, Any]] = []
        self._where: dict[str, tuple[float, float]] = {}
        self._focusing = False  # a selection made by focus(), not by a tap
        self.figure = self._figure()
        self.rooms.selected.on_change("indices", self._tapped)
        self.kind.param.watch(lambda _e: self.show_heat(), "value")
        self.colour_by.param.watch(lambda _e: self._recolour(), "value")
        self.view = pn.Column(pn.Row(self.colour_by, self.kind), self.legend,
                              pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
                              self.groups, self.drawers, sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        ctx.on_heat(self.reheat)
        self.refresh()

    def _figure(self) -> Any:
        """Return the figure with its sources, glyphs, labels, colour bar and tools."""
        def source(*cols: str) -> ColumnDataSource:
            return ColumnDataSource({c: [] for c in cols})

        self.frame = ColumnDataSource({"x": [-1.0, 1.0], "y": [-1.0, 1.0]})
        self.wings = source("x", "y", "r", "wing", "rooms", "drawers", "lx", "ly", "text")
        self.nodes = source("x", "y", "node", "marker")
        self.spokes = source("x0", "y0", "x1", "y1")
        self.links = source("x0", "y0", "x1", "y1", "width", "colour", "wings", "halls",
                            "tunnels")
        self.rooms = source("x", "y", "r", "heat", "wing", "room", "label", "drawers", "text",
                            "lx", "ly", "align", "base", "xo", "yo", "group", "community")
        self.path = source("x", "y")
        self.steps = source("x", "y", "step", "node", "fill")
        self.arrows = source("x0", "y0", "x1", "y1")
        self.focus_ring = source("x", "y", "r")
        self.mapper = LinearColorMapper(palette=PALETTE, low=0.0, high=1.0)
        fig = figure(height=520, sizing_mode="stretch_width", tools="pan,wheel_zoom,reset",
                     toolbar_location="right", match_aspect=True, title="Wings and rooms",
                     x_range=DataRange1d(range_padding=0.0),
                     y_range=DataRange1d(range_padding=0.0))
        fig.axis.visible = False
        fig.grid.visible = False
        box = fig.scatter("x", "y", source=self.frame, size=0, alpha=0.0)
        fig.x_range.renderers = [box]
        fig.y_range.renderers = [box]
        discs = fig.circle("x", "y", radius="r", source=self.wings, fill_color="#eef1f5",
                           fill_alpha=0.6, line_color="#b8c2cc")
        fig.segment("x0", "y0", "x1", "y1", source=self.spokes, line_color="#c5ccd3",
                    line_dash="dashed", line_width=1)
        links = fig.segment("x0", "y0", "x1", "y1", source=self.links, line_color="colour",
                            line_width="width", line_alpha=0.7)
        fig.scatter("x", "y", source=self.nodes, marker="marker", size=10,
                    fill_color="#555", line_color="#fff")
        dots = fig.circle("x", "y", radius="r", source=self.rooms,
                          fill_color={"field": "heat", "transform": self.mapper},
                          line_color="#444")
        fig.circle("x", "y", radius="r", source=self.focus_ring, fill_alpha=0.0,
                   line_color=FOCUS_COLOUR, line_width=3)
        fig.line("x", "y", source=self.path, line_color=PATH_COLOUR, line_width=4,
                 line_alpha=0.9)
        fig.add_layout(Arrow(end=VeeHead(size=11, fill_color=PATH_COLOUR,
                                         line_color=PATH_COLOUR),
                             x_start="x0", y_start="y0", x_end="x1", y_end="y1",
                             source=self.arrows, line_alpha=0.0))
        fig.scatter("x", "y", source=self.steps, size=16, fill_color="fill",
                    line_color=PATH_COLOUR, line_width=2)
        fig.add_layout(LabelSet(x="x", y="y", text="step", source=self.steps,
                                text_font_size="8pt", text_align="center",
                                text_baseline="middle"))
        fig.add_layout(LabelSet(x="lx", y="ly", text="text", source=self.wings,
                                text_font_size=f"{maplayout.WING_FONT_PX:g}px",
                                text_font_style="bold", text_align="center",
                                text_baseline="bottom", y_offset=maplayout.LABEL_PAD_PX))
        fig.add_layout(LabelSet(x="lx", y="ly", text="text", source=self.rooms,
                                text_font_size=f"{maplayout.ROOM_FONT_PX:g}px",
                                text_align={"field": "align"},
                                text_baseline={"field": "base"},
                                x_offset={"field": "xo"}, y_offset={"field": "yo"}))
        self.bar = ColorBar(color_mapper=self.mapper, orientation="horizontal",
                            title="exploration heat", height=10, location="bottom_left")
        fig.add_layout(self.bar, "below")
        self.room_tips = HoverTool(renderers=[dots], tooltips=HEAT_TIPS)
        fig.add_tools(
            TapTool(renderers=[dots]),
            self.room_tips,
            HoverTool(renderers=[discs], tooltips=[("wing", "@wing"), ("rooms", "@rooms"),
                                                   ("drawers", "@drawers")]),
            HoverTool(renderers=[links], tooltips=[("wings", "@wings"), ("halls", "@halls"),
                                                   ("tunnels", "@tunnels")]))
        self.dots = dots
        return fig

    # -- data ---------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Reload rooms, their heat and the wing bundles; lay the map out again. Cost: the
        ``pheromone_heat`` and ``export_graph`` operations plus O(rooms + links) here."""
        self._heat = self.ctx.call("pheromone_heat")["rooms"]
        keys = [(r["wing"], r["room"]) for r in self._heat]
        drawers = {k: int(r["drawers"]) for k, r in zip(keys, self._heat, strict=True)}
        lay = self.lay = maplayout.layout(drawers)
        labels = maplayout.place_labels(lay, keys)
        self._frame(lay, labels)
        per_wing: dict[str, list[int]] = {}
        for (w, _), n in drawers.items():
            per_wing.setdefault(w, []).append(n)
        names = sorted(lay.wings)
        put(self.wings, {
            "x": [lay.wings[w][0] for w in names], "y": [lay.wings[w][1] for w in names],
            "r": [lay.wings[w][2] for w in names], "wing": names,
            "rooms": [len(per_wing[w]) for w in names],
            "drawers": [sum(per_wing[w]) for w in names],
            "lx": [labels.wing_xy[w][0] for w in names],
            "ly": [labels.wing_xy[w][1] for w in names],
            "text": [labels.wing_text[w] for w in names],
        })
        put(self.nodes, {"x": [0.0, *(lay.doors[w][0] for w in names)],
                           "y": [0.0, *(lay.doors[w][1] for w in names)],
                           "node": ["palace", *(f"wing:{w}" for w in names)],
                           "marker": ["star", *(["square"] * len(names))]})
        put(self.spokes, {"x0": [0.0] * len(names), "y0": [0.0] * len(names),
                            "x1": [lay.doors[w][0] for w in names],
                            "y1": [lay.doors[w][1] for w in names]})
        self._set_links(lay)
        self._set_rooms(keys, lay, labels)
        self._where = {f"room:{w}/{r}": (x, y) for (w, r), (x, y, _) in lay.rooms.items()}
        if self.colour_by.value == "heat":
            self.show_heat()
        else:
            self.show_communities()

    def reheat(self, rooms: list[dict[str, Any]]) -> None:
        """Take the rooms of a new ``pheromone_heat`` answer (after a search or an opened
        drawer deposited pheromones: ``Context.heated``) and recolour the dots when the map
        shows heat; the layout stays (a room that came or went lays the map out again).
        Cost: O(rooms), no operation called unless the rooms changed."""
        if [(r["wing"], r["room"]) for r in rooms] != [(r["wing"], r["room"])
                                                        for r in self._heat]:
            self.refresh()
            return
        self._heat = rooms
        if self.colour_by.value == "heat":
            self.show_heat()

    def _frame(self, lay: maplayout.Layout, labels: maplayout.Labels) -> None:
        """Set the frame glyph to the layout's box grown to hold every label (as planned at
        the smallest map: on a bigger one labels take less room) and a margin."""
        b = lay.bounds
        x0, y0, x1, y1 = b.x0, b.y0, b.x1, b.y1
        for box in labels.boxes:
            x0, y0, x1, y1 = min(x0, box.x0), min(y0, box.y0), max(x1, box.x1), max(y1, box.y1)
        pad = 0.03 * max(x1 - x0, y1 - y0)
        put(self.frame, {"x": [x0 - pad, x1 + pad], "y": [y0 - pad, y1 + pad]})

    def _set_links(self, lay: maplayout.Layout) -> None:
        """Draw one line per pair of wings joined by halls or tunnels, as wide as the log of
        their count, blue when tunnels join them."""
        graph = self.ctx.call("export_graph", {"format": "d3", "level": "rooms"})["graph"]
        wing_of = {f"room:{w}/{r}": w for w, r in lay.rooms}
        pairs = sorted(bundles(graph["links"], wing_of).items())
        ends = [chord(lay.wings[a], lay.wings[b]) for (a, b), _ in pairs]
        put(self.links, {
            "x0": [e[0] for e in ends], "y0": [e[1] for e in ends],
            "x1": [e[2] for e in ends], "y1": [e[3] for e in ends],
            "width": [1.5 + 1.5 * math.log2(1 + c["HALL"] + c["TUNNEL"]) for _, c in pairs],
            "colour": [BUNDLE_COLOURS["TUNNEL" if c["TUNNEL"] else "HALL"] for _, c in pairs],
            "wings": [f"{a} ↔ {b}" for (a, b), _ in pairs],
            "halls": [c["HALL"] for _, c in pairs], "tunnels": [c["TUNNEL"] for _, c in pairs],
        })

    def _set_rooms(self, keys: list[tuple[str, str]], lay: maplayout.Layout,
                   labels: maplayout.Labels) -> None:
        """Send the rooms' columns (numbers as arrays: binary on the wire) that changed."""
        rows = [lay.rooms[k] for k in keys]
        new = {
            "x": np.array([p[0] for p in rows]), "y": np.array([p[1] for p in rows]),
            "r": np.array([p[2] for p in rows]),
            "heat": np.array([heat_of(r, self.kind.value) for r in self._heat]),
            "wing": [k[0] for k in keys], "room": [k[1] for k in keys],
            "label": [f"{w}/{r}" for w, r in keys],
            "drawers": np.array([r["drawers"] for r in self._heat], dtype=np.int64),
            "text": labels.room_text,
            "lx": np.array([p[0] for p in labels.room_xy]),
            "ly": np.array([p[1] for p in labels.room_xy]),
            "align": [a[0] for a in labels.room_align], "base": [a[1] for a in labels.room_align],
            "xo": np.array([a[2] for a in labels.room_align]),
            "yo": np.array([a[3] for a in labels.room_align]),
            **self._groups(keys),
        }
        put(self.rooms, new)

    def _groups(self, keys: list[tuple[str, str]]) -> dict[str, list[str]]:
        """Return the rooms' community columns: each room's colour ("group") and its
        community's label; grey and empty while the map is coloured by heat or the
        communities could not be found (no operation is called then)."""
        found = None
        if self.colour_by.value == "community":
            found = self.ctx.attempt(self.groups, lambda: self.communities.get(want=True),
                                     testid="map-communities")
        if found is None:
            return {"group": [OTHER] * len(keys), "community": [""] * len(keys)}
        of = room_community(found)
        picked = [of.get(k) for k in keys]
        return {"group": [OTHER if c is None else community_colour(c["id"]) for c in picked],
                "community": ["" if c is None else f'{c["id"]}: {c["name"]}' for c in picked]}

    def _recolour(self) -> None:
        """Switch between heat and community colouring (communities are found the first time
        they are asked for: a busy line shows until then)."""
        if self.colour_by.value == "community":
            if self.communities.stale:
                self.legend.object = message("Finding communities of drawers…", "info",
                                             "map-busy")
            soon(self.show_communities)
        else:
            self.show_heat()

    def _mode(self, mode: str) -> None:
        """Set the dots' colour, the colour bar, the tooltips and the Heat pick for ``mode``
        (heat or community); sends nothing when the mode is already set."""
        if self._shown_mode == mode:
            return
        self._shown_mode = mode
        heat = mode == "heat"
        self.kind.disabled = not heat
        self.bar.visible = heat
        self.room_tips.tooltips = HEAT_TIPS if heat else COMMUNITY_TIPS
        self.dots.glyph.fill_color = ({"field": "heat", "transform": self.mapper} if heat
                                      else {"field": "group"})
        if heat:
            self.groups.object = ""

    def show_communities(self) -> dict[str, Any] | None:
        """Colour each room by the community holding most of its drawers, list the largest
        communities under the map and return the ``communities`` answer (None when it
        failed: the error shows under the map). Cost: the ``communities`` operation (cached
        by the engine until the drawers change) plus O(rooms)."""
        keys = list(zip(self.rooms.data["wing"], self.rooms.data["room"], strict=True))
        cols = self._groups(keys)
        put(self.rooms, {**self.rooms.data, **cols})
        found = self.communities.found if not self.communities.stale else None
        self._mode("community")
        if found is None:
            self.legend.object = ""
            return None
        self.legend.object = (
            f'<p class="pz-map-legend-text" data-testid="map-legend">Colour: <b>community</b>'
            f', the group of drawers about one thing that holds most of the room\'s drawers '
            f'(found from their meaning and the entities they share); '
            f'{plural(found["total"], "community", "communities")} over '
            f'{plural(found["drawers"], "drawer")}. Grey: a smaller community. Hover a dot '
            'for its community.</p>')
        self.groups.object = "<h3>Communities</h3>" + legend_html(found)
        return found

    def show_heat(self) -> None:
        """Colour the rooms by the selected pheromone kind and say what the colours mean;
        sends only the heat column and the colour bar's top (no operation is called)."""
        self._mode("heat")
        kind = self.kind.value
        values = np.array([heat_of(r, kind) for r in self._heat], dtype=np.float64)
        top = float(values.max()) if len(values) else 0.0
        if not _same(self.rooms.data.get("heat", []), values):
            self.rooms.data["heat"] = values
        self.mapper.high = top if top > 0 else 1.0  # a 0..0 scale would divide by zero
        self.bar.title = f"{kind} heat"
        hot = sum(1 for v in values if v > 0)
        self.legend.object = (
            f'<p class="pz-map-legend-text" data-testid="map-legend">Colour: '
            f'<b>{esc(kind)}</b> heat, {esc(MEANING[kind])}: pale is none, dark red the '
            f'most ({top:.3g}); {hot} of {plural(len(values), "room")} '
            f'{verb(hot, "has", "have")} some. A dot\'s size is its number of drawers; a '
            'line joins two wings that halls or tunnels connect (thicker: more of them). '
            'Hover a dot for its name, tap it for its drawers.</p>')

    # -- path and room --------------------------------------------------------------------------

    def show_path(self, nodes: list[str]) -> None:
        """Draw a navigation path through every node it visits, in order, with its steps
        numbered and arrowed: the palace, wing doors, rooms, closets and drawers where they
        are (a drawer's room is looked up with ``get_drawer``); an entity or agent, which has
        no place on the map, hollow between its neighbours. Cost: one call a drawer node."""
        room_of: dict[str, tuple[str, str]] = {}
        for n in nodes:
            if n == "palace" or n.startswith(("wing:", "room:")):
                continue
            if n.startswith("closet:"):
                named = maplayout.rooms_named(n[len("closet:"):].rsplit("/", 1)[0], self.lay)
                if named:
                    room_of[n] = named[0]
                continue
            try:
                found = self.ctx.call("get_drawer", {"drawer_id": n})["drawer"]
            except Exception:  # noqa: BLE001 - not a drawer (an entity, an agent): no place
                continue
            room_of[n] = (found["wing"], found["room"])
        points = maplayout.path_points(nodes, self.lay, room_of)
        self.path.data = {"x": [p[0] for p in points], "y": [p[1] for p in points]}
        self.steps.data = {"x": [p[0] for p in points], "y": [p[1] for p in points],
                           "step": [str(i) for i in range(len(points))],
                           "node": list(nodes[: len(points)]),
                           "fill": ["#ffffff" if not p[2] else "#fff3c4" for p in points]}
        pairs = [(a, b) for a, b in zip(points, points[1:], strict=False)
                 if math.hypot(b[0] - a[0], b[1] - a[1]) > 1e-9]
        # Arrow heads stop short of the next step's marker so they stay visible.
        short = [_toward(a, b, 0.75) for a, b in pairs]
        self.arrows.data = {"x0": [a[0] for a, _ in pairs], "y0": [a[1] for a, _ in pairs],
                            "x1": [s[0] for s in short], "y1": [s[1] for s in short]}

    def _tapped(self, _attr: str, _old: list[int], new: list[int]) -> None:
        if not new or self._focusing:
            return
        wing = self.rooms.data["wing"][new[0]]
        room = self.rooms.data["room"][new[0]]
        put(self.focus_ring, {"x": [], "y": [], "r": []})
        self.show_room(wing, room)

    def focus(self, wing: str, room: str, drawer_id: str | None = None) -> bool:
        """Select room ``wing``/``room`` on the map (the other dots fade), ring it, and
        list its drawers under the map with ``drawer_id`` marked; return whether the room
        is on the map (a room made since the last refresh is found after one). Cost: one
        ``list_drawers`` (and a refresh when the room was not there)."""
        index = self._room_index(wing, room)
        if index is None:
            self.refresh()
            index = self._room_index(wing, room)
        if index is None:
            self.drawers.object = message(f"{wing} / {room} is not on the map.", "error",
                                          "room-title")
            return False
        x, y, r = (float(self.rooms.data[k][index]) for k in ("x", "y", "r"))
        put(self.focus_ring, {"x": [x], "y": [y], "r": [r * 1.6 + 0.15]})
        self._focusing = True
        try:
            self.rooms.selected.indices = [index]
        finally:
            self._focusing = False
        self.show_room(wing, room, mark=drawer_id)
        return True

    def _room_index(self, wing: str, room: str) -> int | None:
        """Return the row of ``wing``/``room`` among the map's rooms, or None. O(rooms)."""
        for i, (w, r) in enumerate(zip(self.rooms.data["wing"], self.rooms.data["room"],
                                       strict=True)):
            if w == wing and r == room:
                return i
        return None

    def show_room(self, wing: str, room: str, mark: str | None = None) -> None:
        """List the drawers of ``wing``/``room`` under the map (newest first, at most
        :data:`ROOM_LIST`), each with where it came from; ``mark`` (a drawer id) is marked,
        and listed first when it is not among them. Cost: one ``list_drawers`` (and one
        ``get_drawer`` for a marked drawer beyond the list)."""
        found = self.ctx.call("list_drawers", {"wing": wing, "room": room,
                                               "limit": ROOM_LIST})
        listed = found["drawers"]
        if mark is not None:
            ids = {d["id"] for d in listed}
            try:
                got = self.ctx.call("get_drawer", {"drawer_id": mark})
            except Exception:  # noqa: BLE001 - a drawer gone since: nothing to mark
                got = None
            if got is None:
                mark = None
            else:
                mark = got["drawer"]["id"]  # an old id (an edited drawer's) finds it
                if mark not in ids:
                    d = got["drawer"]
                    listed = [{"id": d["id"], "snippet": d["content"][:200],
                               "source": got.get("source")}, *listed]
        note = ('<p class="pz-msg" data-testid="room-focus">The drawer you came from is '
                'marked ▶ below.</p>' if mark is not None else "")
        self.drawers.object = (f'<h3 data-testid="room-title">{esc(wing)} / {esc(room)} '
                               f'({plural(found["total"], "drawer")})</h3>' + note
                               + room_table(listed, mark))


def room_table(drawers: list[dict[str, Any]], mark: str | None = None) -> str:
    """Return the table of a room's drawers (as ``list_drawers`` gives them): each row its
    id, where it came from (a file's name, a turn's speaker and time:
    :func:`palazzo.hosts.ui.hits.source_short`) and its first characters; the row of drawer
    ``mark`` marked (▶, ``aria-current``, ``data-testid="room-drawer-marked"``). Every cell
    escaped. Cost: O(rows)."""
    rows = []
    for d in drawers:
        here = d["id"] == mark
        testid = "room-drawer-marked" if here else "room-drawer"
        rows.append(
            f'<tr data-testid="{testid}" data-drawer="{esc(d["id"])}"'
            + (' aria-current="true" class="pz-marked"' if here else "")
            + f'><td>{"▶ " if here else ""}{esc(d["id"])}</td>'
            f'<td>{esc(source_short(d.get("source")))}</td><td>{esc(d["snippet"])}</td></tr>')
    return ('<table class="pz-table" data-testid="room-drawers"><thead><tr><th>drawer</th>'
            '<th>from</th><th>text</th></tr></thead><tbody>' + "".join(rows)
            + "</tbody></table>")


def put(source: ColumnDataSource, new: dict[str, Any]) -> None:
    """Give ``source`` the columns ``new``, sending only those that changed when the row
    count is the same (a drawer added sends a few numbers, an unchanged refresh nothing);
    the whole data when rows came or went. Cost: a comparison of each column."""
    old = source.data
    if set(old) != set(new) or any(len(old[k]) != len(v) for k, v in new.items()):
        source.data = new
        return
    changed = {k: v for k, v in new.items() if not _same(old[k], v)}
    if changed:
        source.data.update(changed)


def _toward(a: tuple[float, ...], b: tuple[float, ...], t: float) -> tuple[float, float]:
    """Return the point a fraction ``t`` of the way from ``a`` to ``b``."""
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)


def _same(old: Any, new: Any) -> bool:
    """Return whether two columns hold the same values (arrays or lists)."""
    if len(old) != len(new):
        return False
    if isinstance(new, np.ndarray) or isinstance(old, np.ndarray):
        return bool(np.array_equal(np.asarray(old), np.asarray(new)))
    return list(old) == list(new)
