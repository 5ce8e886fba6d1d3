"""The palace map: wings and rooms as a graph (halls, tunnels), coloured by pheromone heat and
sized by drawer count; tapping a room lists its drawers; a navigation path is drawn on top.

The layout is deterministic: wings sit on a circle in name order, each wing's rooms on a small
circle around it. Heat per room comes from the ``pheromone_heat`` operation.
"""

from __future__ import annotations

import math
from typing import Any

import panel as pn
from bokeh.models import ColumnDataSource, HoverTool, LabelSet, TapTool
from bokeh.plotting import figure

from palazzo.hosts.ui.common import Context, esc, html_pane, table

KINDS = ("exploration", "exploitation", "traversal", "recency", "success")
EDGE_COLOURS = {"HALL": "#9aa5b1", "TUNNEL": "#3b6ea5"}
COLD, HOT = (255, 244, 214), (178, 24, 43)


def layout(rooms: list[tuple[str, str]]) -> dict[tuple[str, str], tuple[float, float]]:
    """Return (x, y) for every (wing, room): wings on a circle in name order, each wing's
    rooms on a small circle around it."""
    wings = sorted({w for w, _ in rooms})
    big = 0.0 if len(wings) == 1 else 4.0 + len(wings) * 0.8
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for i, wing in enumerate(wings):
        a = 2 * math.pi * i / max(len(wings), 1)
        cx, cy = big * math.cos(a), big * math.sin(a)
        mine = sorted(r for w, r in rooms if w == wing)
        small = 0.0 if len(mine) == 1 else 1.6 + 0.3 * len(mine)
        for j, room in enumerate(mine):
            # A quarter turn from the wing's own direction, so a wing's rooms spread across
            # the circle of wings rather than along its radius (labels do not collide).
            b = 2 * math.pi * j / len(mine) + a + math.pi / 2
            out[(wing, room)] = (cx + small * math.cos(b), cy + small * math.sin(b))
    return out


def colour(value: float, top: float) -> str:
    """Return a hex colour from pale (0) to dark red (``top``)."""
    t = 0.0 if top <= 0 else min(value / top, 1.0)
    rgb = (round(c0 + (c1 - c0) * t) for c0, c1 in zip(COLD, HOT, strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def heat_of(room: dict[str, Any], kind: str) -> float:
    """Return a room's heat of pheromone ``kind`` (node kinds: drawer sum; edge kinds: sum of
    the edges touching it)."""
    if kind in ("exploration", "exploitation"):
        return float(room[kind]["sum"])
    return float(room["edges"][kind])


class PalaceMap:
    """The map figure, its pheromone-kind selector and the drawers of the tapped room."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.kind = pn.widgets.Select(name="Heat", options=list(KINDS), value="exploration",
                                      width=160, css_classes=["pz-map-kind"])
        self.rooms = ColumnDataSource({k: [] for k in ("x", "y", "size", "colour", "wing",
                                                       "room", "label", "drawers", "heat")})
        self.edges = ColumnDataSource({k: [] for k in ("x0", "y0", "x1", "y1", "colour")})
        self.path = ColumnDataSource({"x": [], "y": []})
        fig = figure(height=440, sizing_mode="stretch_width", tools="pan,wheel_zoom,reset",
                     toolbar_location="right", match_aspect=True, title="Wings and rooms")
        fig.axis.visible = False
        fig.grid.visible = False
        fig.segment("x0", "y0", "x1", "y1", source=self.edges, line_color="colour",
                    line_width=1.5, line_alpha=0.8)
        fig.line("x", "y", source=self.path, line_color="#d4a000", line_width=5, line_alpha=0.9)
        dots = fig.scatter("x", "y", size="size", fill_color="colour", line_color="#444",
                           source=self.rooms)
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.rooms, y_offset=8,
                                text_font_size="9pt", text_align="center"))
        fig.add_tools(TapTool(renderers=[dots]),
                      HoverTool(renderers=[dots], tooltips=[("room", "@wing / @room"),
                                                            ("drawers", "@drawers"),
                                                            ("heat", "@heat{0.000}")]))
        self.figure = fig
        self.drawers = html_pane("room-drawers")
        self.rooms.selected.on_change("indices", self._tapped)
        self.kind.param.watch(lambda _e: self.refresh(), "value")
        self.view = pn.Column(self.kind, pn.pane.Bokeh(fig, sizing_mode="stretch_width"),
                              self.drawers, sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload rooms, edges and heat."""
        heat = {(r["wing"], r["room"]): r for r in self.ctx.call("pheromone_heat")["rooms"]}
        keys = sorted(heat)
        where = layout(keys)
        values = [heat_of(heat[k], self.kind.value) for k in keys]
        top = max(values, default=0.0)
        self.rooms.data = {
            "x": [where[k][0] for k in keys], "y": [where[k][1] for k in keys],
            "size": [12 + 5 * math.sqrt(heat[k]["drawers"]) for k in keys],
            "colour": [colour(v, top) for v in values],
            "wing": [k[0] for k in keys], "room": [k[1] for k in keys],
            "label": [f"{k[0]}/{k[1]}" for k in keys],
            "drawers": [heat[k]["drawers"] for k in keys], "heat": values,
        }
        graph = self.ctx.call("export_graph", {"format": "d3", "level": "rooms"})["graph"]
        at = {f"room:{w}/{r}": xy for (w, r), xy in where.items()}
        links = [x for x in graph["links"] if x["kind"] in EDGE_COLOURS
                 and x["source"] in at and x["target"] in at]
        self.edges.data = {
            "x0": [at[x["source"]][0] for x in links], "y0": [at[x["source"]][1] for x in links],
            "x1": [at[x["target"]][0] for x in links], "y1": [at[x["target"]][1] for x in links],
            "colour": [EDGE_COLOURS[x["kind"]] for x in links],
        }
        self._where = at

    def show_path(self, nodes: list[str]) -> None:
        """Draw the rooms of a navigation path (other nodes are skipped) on the map."""
        points = [self._where[n] for n in nodes if n in self._where]
        self.path.data = {"x": [p[0] for p in points], "y": [p[1] for p in points]}

    def _tapped(self, _attr: str, _old: list[int], new: list[int]) -> None:
        if not new:
            return
        wing = self.rooms.data["wing"][new[0]]
        room = self.rooms.data["room"][new[0]]
        self.show_room(wing, room)

    def show_room(self, wing: str, room: str) -> None:
        """List the drawers of ``wing``/``room`` under the map."""
        found = self.ctx.call("list_drawers", {"wing": wing, "room": room, "limit": 200})
        rows = [(d["id"], d["snippet"]) for d in found["drawers"]]
        self.drawers.object = (f'<h3 data-testid="room-title">{esc(wing)} / {esc(room)} '
                               f'({found["total"]} drawers)</h3>'
                               + table(["drawer", "text"], rows, "room-drawers"))
