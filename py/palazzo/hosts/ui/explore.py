"""Pheromone heat per room (the hottest first) and Semantic A* navigation between two rooms,
its path drawn on the map through every node it visits."""

from __future__ import annotations

from typing import Any

import panel as pn

from palazzo.hosts.ui.common import Context, html_pane, message, table
from palazzo.hosts.ui.palacemap import KINDS, PalaceMap, heat_of

PICKER = {"case_sensitive": False, "search_strategy": "includes", "min_characters": 1,
          "restrict": False, "width": 240}
PRESETS = ("default", "hypothesis_testing", "exploratory_research", "evidence_gathering",
           "memory_recall")


SHOWN = 50  # heat table rows: the hottest rooms first, a filter finds the others


class HeatView:
    """Every room's heat per pheromone kind, the hottest first by a chosen kind, filtered by
    a word of the wing or room name (a palace of 500 rooms shows its top SHOWN); reloaded
    after each change."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.decay = pn.widgets.Button(name="Decay one cycle", css_classes=["pz-decay"])
        self.sort = pn.widgets.Select(name="Hottest by", options=list(KINDS), width=160,
                                      css_classes=["pz-heat-sort"])
        self.filter = pn.widgets.TextInput(name="Rooms named", placeholder="part of a name",
                                           width=200, css_classes=["pz-heat-filter"])
        self.note = html_pane("heat-note")
        self.table = html_pane("heat-table")
        self.decay.on_click(lambda _e: self._decay())
        self.sort.param.watch(lambda _e: self.show(), "value")
        self.filter.param.watch(lambda _e: self.show(), "value_input")
        self._rooms: list[dict[str, Any]] = []
        self.view = pn.Column(pn.Row(self.sort, self.filter, self.decay), self.note,
                              self.table, sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload every room's heat (one ``pheromone_heat`` call) and show the table."""
        self._rooms = self.ctx.call("pheromone_heat")["rooms"]
        self.show()

    def show(self) -> None:
        """Show the SHOWN hottest rooms by the chosen kind whose wing or room name holds the
        filter's text (case-insensitive). O(rooms log rooms), no operation called."""
        word = (self.filter.value_input or "").strip().casefold()
        kind = self.sort.value
        rooms = [r for r in self._rooms
                 if not word or word in f'{r["wing"]} / {r["room"]}'.casefold()]
        rooms.sort(key=lambda r: (-heat_of(r, kind), r["wing"], r["room"]))
        rows = [(r["wing"], r["room"], r["drawers"],
                 *(f"{heat_of(r, k):.3f}" for k in KINDS)) for r in rooms[:SHOWN]]
        more = (f'<p class="pz-msg" data-testid="heat-count">{min(len(rooms), SHOWN)} of '
                f'{len(rooms)} rooms shown, hottest by {kind} first.</p>')
        self.table.object = more + table(["wing", "room", "drawers", *KINDS], rows,
                                         "heat-table")

    def _decay(self) -> None:
        if self.ctx.attempt(self.note, lambda: self.ctx.call("decay_now", {"cycles": 1}),
                            ok="Decayed one cycle.", testid="heat-note") is not None:
            self.ctx.changed()


class NavigateView:
    """Pick two rooms and a context preset; run Semantic A*; show the path and its costs."""

    def __init__(self, ctx: Context, palace_map: PalaceMap) -> None:
        self.ctx = ctx
        self.map = palace_map
        # Type part of a room's name, pick it from the list: usable at 500 rooms, where a
        # drop-down of every room is not.
        self.start = pn.widgets.AutocompleteInput(
            name="From", placeholder="type a room or wing", css_classes=["pz-nav-start"],
            **PICKER)
        self.goal = pn.widgets.AutocompleteInput(
            name="To", placeholder="type a room or wing", css_classes=["pz-nav-goal"],
            **PICKER)
        self._ids: dict[str, str] = {}
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
        """Offer every room as "wing / room" (their ids kept aside); an empty pick, or a room
        that is gone, becomes the first room (From) or the last (To)."""
        before = self._ids
        self._ids = {f'{r["wing"]} / {r["name"]}': f'room:{r["wing"]}/{r["name"]}'
                     for r in self.ctx.rooms()}
        labels = list(self._ids)
        for w, fallback in ((self.start, labels[:1]), (self.goal, labels[-1:])):
            w.options = labels
            gone = w.value in before and w.value not in self._ids
            if not w.value or gone:  # what a person typed themselves stays
                w.value = fallback[0] if fallback else ""

    def node(self, text: str) -> str:
        """Return the node id a picker's text names: a listed room's id, else the text as
        typed (navigate also takes ids, "wing/room" and wing names, and says when none
        fits)."""
        return self._ids.get(text, text.strip())

    def run(self) -> dict[str, Any] | None:
        """Navigate from the chosen room to the other; draw and list the path."""
        args = {"start": self.node(self.start.value), "goal": self.node(self.goal.value),
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
                                   f'{out["total_cost"]:.3f}, {out["iterations"]} '
                                   'iterations. The Map tab draws it: 0 is the start, each '
                                   'number the step that reaches that node.',
                                   "ok", "nav-summary")
                           + table(["#", "node", "edge", "semantic", "pheromone",
                                    "structural", "cost"], rows, "nav-steps"))
        self.map.show_path(out["nodes"])
        if args["deposit"]:
            self.ctx.changed()
        return out
