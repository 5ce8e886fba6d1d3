"""Pheromone heat per room (the hottest first) and Semantic A* navigation between two rooms,
its path drawn on the map through every node it visits."""

from __future__ import annotations

import difflib
from typing import Any

import panel as pn

from palazzo.errors import NotFound
from palazzo.hosts.ui.agents import place
from palazzo.hosts.ui.common import Context, esc, html_pane, message, plural, table
from palazzo.hosts.ui.palacemap import KINDS, PalaceMap, heat_of

PICKER = {"case_sensitive": False, "search_strategy": "includes", "min_characters": 1,
          "restrict": False, "width": 240}
PRESETS = ("default", "hypothesis_testing", "exploratory_research", "evidence_gathering",
           "memory_recall")


SHOWN = 50  # heat table rows: the hottest rooms first, a filter finds the others
CLOSEST = 3  # names offered when a typed place is not in the palace

# What each kind of link is, in words; the engine's name follows in brackets.
LINKS = {"HAS_WING": "the palace and a wing", "HAS_ROOM": "a wing and its room",
         "HAS_CLOSET": "a room and its closet", "HAS_DRAWER": "a room and its drawer",
         "HALL": "a hall between rooms of one wing", "TUNNEL": "a tunnel between wings",
         "SIMILAR_TO": "drawers similar in meaning", "RELATES_TO": "related entities",
         "REFERENCES": "a drawer and an entity it names", "HAS_AGENT": "the palace and an agent",
         "FOCUSES_ON": "an agent and its wing", "WROTE": "an agent and what it wrote"}
COSTS = ("Each step costs semantic (how far the place is in meaning from the goal) plus "
         "pheromone (lower where earlier walks along that link succeeded) plus structural "
         "(fixed by the kind of link: a hall is cheaper than a tunnel); the path is the "
         "cheapest sum.")


def where(node: str) -> str:
    """Return a path node as a person reads it: "Home / garden", "the palace", "Ada (an
    entity)", "a drawer (<id>)"."""
    kind, _, rest = node.partition(":")
    if node == "palace":
        return "the palace"
    if kind == "entity":
        return f"{rest} (an entity)"
    return place(node) if kind in ("room", "closet", "wing") else f"a drawer ({node})"


def link_words(kind: str) -> str:
    """Return a kind of link as a person reads it, its engine name in brackets."""
    return f"{LINKS[kind]} ({kind})" if kind in LINKS else kind


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
        ctx.on_heat(self.reheat)
        self.refresh()

    def refresh(self) -> None:
        """Reload every room's heat (one ``pheromone_heat`` call) and show the table."""
        self.reheat(self.ctx.call("pheromone_heat")["rooms"])

    def reheat(self, rooms: list[dict[str, Any]]) -> None:
        """Show the rooms of a ``pheromone_heat`` answer (a use deposited pheromones:
        ``Context.heated``). No operation called."""
        self._rooms = rooms
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
                f'{plural(len(rooms), "room")} shown, hottest by {kind} first.</p>')
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

    def _known(self, node: str) -> bool:
        """Return whether ``node`` names a place navigate finds: a listed room, a wing, a
        "wing/room" of a listed room, or a node id (those the engine checks itself)."""
        if node in self._ids.values() or node == "palace" or ":" in node:
            return True
        rooms = {i.partition(":")[2] for i in self._ids.values()}
        return node in rooms or node in {r.partition("/")[0] for r in rooms} \
            or node in set(self.ctx.wings())

    def _unknown(self, field: str, text: str) -> str:
        """Return what to type in ``field`` instead of ``text``, with the closest names."""
        names = [*self._ids, *self.ctx.wings()]
        low = text.casefold()
        near = [n for n in names if low and low in n.casefold()][:CLOSEST] or \
            difflib.get_close_matches(text, names, n=CLOSEST, cutoff=0.5)
        offer = (f" Closest: {'; '.join(near)}." if near else
                 f" For example: {'; '.join(names[:CLOSEST])}." if names else "")
        what = ("a wing, or a wing / room" if field == "From" else
                "a wing, a wing / room, or words for a topic to go toward")
        if not text:
            return f"{field} is empty: type {what} (the list offers them as you type)."
        return (f"{field}: “{text}” is not a wing or room of this palace. Type {what} "
                f"(the list offers them as you type).{offer}")

    def run(self) -> dict[str, Any] | None:
        """Navigate from the chosen room to the other (or toward a topic: a To that names no
        place is taken as words to go toward); draw and list the path."""
        start, goal = self.node(self.start.value), self.node(self.goal.value)
        if not start or not self._known(start):
            self.out.object = message(self._unknown("From", start), "error", "nav-result")
            return None
        if not goal:
            self.out.object = message(self._unknown("To", goal), "error", "nav-result")
            return None
        topic = not self._known(goal)
        args: dict[str, Any] = {"start": start, "goal_query" if topic else "goal": goal,
                                "context": self.preset.value,
                                "deposit": bool(self.deposit.value)}

        def call() -> dict[str, Any]:
            try:
                return self.ctx.call("navigate", args)
            except NotFound as err:  # a topic nothing in the palace is about
                if topic:
                    raise NotFound(f"Nothing in this palace is about “{goal}”. "
                                   + self._unknown("To", goal)) from err
                raise

        out = self.ctx.attempt(self.out, call, testid="nav-result")
        if out is None:
            return None
        if not out["found"]:
            self.out.object = message(f"No path: {out.get('reason', 'not found')}.", "error",
                                      "nav-result")
            self.map.show_path([])
            return out
        rows = [(i, where(s["node"]), link_words(s["kind"]), f'{s["semantic"]:.3f}',
                 f'{s["pheromone"]:.3f}', f'{s["structural"]:.3f}', f'{s["cost"]:.3f}')
                for i, s in enumerate(out["steps"], 1)]
        toward = ""
        choice = out.get("goal_choice")
        if topic and choice:
            nodes = out["nodes"]
            room = next((where(n) for n in reversed(nodes) if n.startswith("room:")), None)
            found = (f"the place nearest in meaning is {where(choice['node'])}"
                     if choice["by"] == "centroid" else "the drawer that matches it best"
                     + (f", in {room}" if room else ""))
            toward = message(f"Toward “{goal}”: {found}.", "info", "nav-toward")
        self.out.object = (message(f'{plural(out["length"], "step")}, total cost '
                                   f'{out["total_cost"]:.3f}, '
                                   f'{plural(out["iterations"], "iteration")}. The Map tab draws '
                                   'it: 0 is the start, each number the step that reaches '
                                   'that node.',
                                   "ok", "nav-summary")
                           + toward + f'<p class="pz-msg">{esc(COSTS)}</p>'
                           + table(["#", "place", "link", "semantic", "pheromone",
                                    "structural", "cost"], rows, "nav-steps"))
        self.map.show_path(out["nodes"])
        if args["deposit"]:
            self.ctx.changed()
        return out
