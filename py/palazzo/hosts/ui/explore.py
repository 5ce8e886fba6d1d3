"""Pheromone heat per room and Semantic A* navigation between two rooms."""

from __future__ import annotations

from typing import Any

import panel as pn

from palazzo.hosts.ui.common import Context, html_pane, message, set_options, table
from palazzo.hosts.ui.palacemap import KINDS, PalaceMap, heat_of

PRESETS = ("default", "hypothesis_testing", "exploratory_research", "evidence_gathering",
           "memory_recall")


class HeatView:
    """A table of every room's heat per pheromone kind, reloaded after each change."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.decay = pn.widgets.Button(name="Decay one cycle", css_classes=["pz-decay"])
        self.note = html_pane("heat-note")
        self.table = html_pane("heat-table")
        self.decay.on_click(lambda _e: self._decay())
        self.view = pn.Column(pn.Row(self.decay), self.note, self.table,
                              sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the heat table."""
        rooms = self.ctx.call("pheromone_heat")["rooms"]
        rows = [(r["wing"], r["room"], r["drawers"],
                 *(f"{heat_of(r, k):.3f}" for k in KINDS)) for r in rooms]
        self.table.object = table(["wing", "room", "drawers", *KINDS], rows, "heat-table")

    def _decay(self) -> None:
        if self.ctx.attempt(self.note, lambda: self.ctx.call("decay_now", {"cycles": 1}),
                            ok="Decayed one cycle.", testid="heat-note") is not None:
            self.ctx.changed()


class NavigateView:
    """Pick two rooms and a context preset; run Semantic A*; show the path and its costs."""

    def __init__(self, ctx: Context, palace_map: PalaceMap) -> None:
        self.ctx = ctx
        self.map = palace_map
        self.start = pn.widgets.Select(name="From", css_classes=["pz-nav-start"])
        self.goal = pn.widgets.Select(name="To", css_classes=["pz-nav-goal"])
        self.preset = pn.widgets.Select(name="Context", options=list(PRESETS),
                                        css_classes=["pz-nav-preset"])
        self.deposit = pn.widgets.Checkbox(name="Reinforce the path (deposit pheromones)")
        self.go = pn.widgets.Button(name="Navigate", button_type="primary",
                                    css_classes=["pz-nav-go"])
        self.out = html_pane("nav-result")
        self.go.on_click(lambda _e: self.run())
        self.view = pn.Column(pn.Row(self.start, self.goal, self.preset), self.deposit,
                              self.go, self.out, sizing_mode="stretch_width")
        ctx.on_refresh(self._rooms)
        self._rooms()

    def _rooms(self) -> None:
        rooms = {f'{r["wing"]} / {r["name"]}': f'room:{r["wing"]}/{r["name"]}'
                 for r in self.ctx.rooms()}
        for w in (self.start, self.goal):
            set_options(w, rooms)
        if len(rooms) > 1 and self.goal.value == self.start.value:
            self.goal.value = list(rooms.values())[-1]

    def run(self) -> dict[str, Any] | None:
        """Navigate from the chosen room to the other; draw and list the path."""
        args = {"start": self.start.value, "goal": self.goal.value,
                "context": self.preset.value, "deposit": bool(self.deposit.value)}
        out = self.ctx.attempt(self.out, lambda: self.ctx.call("navigate", args),
                               testid="nav-result")
        if out is None:
            return None
        if not out["found"]:
            self.out.object = message(f"No path: {out.get('reason', 'not found')}.", "error",
                                      "nav-result")
            self.map.show_path([])
            return out
        rows = [(i, s["node"], s["kind"], f'{s["semantic"]:.3f}', f'{s["pheromone"]:.3f}',
                 f'{s["structural"]:.3f}', f'{s["cost"]:.3f}')
                for i, s in enumerate(out["steps"], 1)]
        self.out.object = (message(f'{out["length"]} steps, total cost '
                                   f'{out["total_cost"]:.3f}, {out["iterations"]} iterations',
                                   "ok", "nav-summary")
                           + table(["#", "node", "edge", "semantic", "pheromone",
                                    "structural", "cost"], rows, "nav-steps"))
        self.map.show_path(out["nodes"])
        if args["deposit"]:
            self.ctx.changed()
        return out
