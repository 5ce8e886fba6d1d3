"""The knowledge graph: look up an entity, its facts (as of a date), timeline, contradictions,
add and end facts, and a small neighbourhood graph."""

from __future__ import annotations

import math
from typing import Any

import panel as pn
from bokeh.models import ColumnDataSource, LabelSet
from bokeh.plotting import figure

from palazzo.hosts.ui.common import Context, esc, html_pane, message, table

FACT_COLUMNS = ["subject", "predicate", "object", "from", "to", "confidence", "current"]


def _fact_row(f: dict[str, Any]) -> tuple[Any, ...]:
    return (f["subject"], f["predicate"], f["object"], f["valid_from"] or "–",
            f["valid_to"] or "–", f'{f["confidence"]:.2f}', "yes" if f["current"] else "no")


class KnowledgeView:
    """Entity lookup with as-of date, timeline, contradictions, add/end facts, neighbourhood."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.entity = pn.widgets.TextInput(name="Entity", placeholder="a person, place, thing",
                                           css_classes=["pz-kg-entity"])
        self.as_of = pn.widgets.TextInput(name="As of (YYYY-MM-DD, optional)",
                                          css_classes=["pz-kg-asof"])
        self.look = pn.widgets.Button(name="Look up", button_type="primary",
                                      css_classes=["pz-kg-look"])
        self.facts = html_pane("kg-facts")
        self.timeline = html_pane("kg-timeline")
        self.contradictions = html_pane("kg-contradictions")
        self.subject = pn.widgets.TextInput(name="Subject", css_classes=["pz-kg-subject"])
        self.predicate = pn.widgets.TextInput(name="Predicate", css_classes=["pz-kg-predicate"])
        self.object = pn.widgets.TextInput(name="Object", css_classes=["pz-kg-object"])
        self.valid_from = pn.widgets.TextInput(name="Valid from (optional)",
                                               css_classes=["pz-kg-from"])
        self.add = pn.widgets.Button(name="Add fact", css_classes=["pz-kg-add"])
        self.end_pick = pn.widgets.Select(name="End a current fact", options={},
                                          css_classes=["pz-kg-end-pick"])
        self.end = pn.widgets.Button(name="End it today", css_classes=["pz-kg-end"])
        self.note = html_pane("kg-note")
        self.nodes = ColumnDataSource({"x": [], "y": [], "label": [], "colour": []})
        self.links = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": []})
        fig = figure(height=300, sizing_mode="stretch_width", tools="pan,wheel_zoom,reset",
                     toolbar_location="right", match_aspect=True, title="Neighbourhood")
        fig.axis.visible = False
        fig.grid.visible = False
        fig.segment("x0", "y0", "x1", "y1", source=self.links, line_color="#888")
        fig.scatter("x", "y", size=14, fill_color="colour", line_color="#333", source=self.nodes)
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.nodes, y_offset=8,
                                text_font_size="9pt", text_align="center"))
        self.look.on_click(lambda _e: self.lookup())
        self.add.on_click(lambda _e: self._add())
        self.end.on_click(lambda _e: self._end())
        self.view = pn.Column(
            pn.Row(self.entity, self.as_of, self.look), self.note, self.facts,
            pn.pane.Bokeh(fig, sizing_mode="stretch_width"), self.timeline,
            pn.Row(self.end_pick, self.end),
            pn.pane.HTML("<h3>Add a fact</h3>"),
            pn.Row(self.subject, self.predicate, self.object, self.valid_from), self.add,
            pn.pane.HTML("<h3>Contradictions</h3>"), self.contradictions,
            sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload contradictions, and the looked-up entity if there is one."""
        found = self.ctx.call("kg_contradictions", {"limit": 50})["contradictions"]
        rows = [(c["subject"], c["predicate"], ", ".join(c["objects"]), c["overlap_from"] or
                 "–", c["overlap_to"] or "–") for c in found]
        self.contradictions.object = (table(["subject", "predicate", "objects", "from", "to"],
                                            rows, "kg-contradictions") if rows else
                                      message("No contradictions.", "info", "kg-none"))
        if self.entity.value.strip():
            self.lookup(quiet=True)

    def lookup(self, quiet: bool = False) -> None:
        """Show the entity's facts (as of the date), timeline and neighbourhood."""
        name = self.entity.value.strip()
        if not name:
            return
        args: dict[str, Any] = {"entity": name, "direction": "both", "limit": 200}
        if self.as_of.value.strip():
            args["as_of"] = self.as_of.value.strip()
        out = self.ctx.attempt(self.note, lambda: self.ctx.call("kg_query", args),
                               testid="kg-note")
        if out is None:
            self.facts.object = self.timeline.object = ""
            return
        if not quiet:
            self.note.object = ""
        when = f" as of {args['as_of']}" if "as_of" in args else ""
        self.facts.object = (f"<h3>Facts{esc(when)}</h3>"
                             + table(FACT_COLUMNS, [_fact_row(f) for f in out["facts"]],
                                     "kg-facts"))
        line = self.ctx.call("kg_timeline", {"entity": name, "limit": 200})["facts"]
        self.timeline.object = ("<h3>Timeline</h3>"
                                + table(FACT_COLUMNS, [_fact_row(f) for f in line],
                                        "kg-timeline"))
        self.end_pick.options = {f'{f["subject"]} {f["predicate"]} {f["object"]}': f["id"]
                                 for f in line if f["current"]}
        self._neighbourhood(name)

    def _neighbourhood(self, name: str) -> None:
        graph = self.ctx.call("export_graph", {"format": "d3", "entity": name, "hops": 1})
        nodes = graph["graph"]["nodes"]
        centre = nodes and next((n["id"] for n in nodes if n["label"].casefold() ==
                                 name.casefold()), nodes[0]["id"])
        others = [n for n in nodes if n["id"] != centre]
        at = {centre: (0.0, 0.0)} if nodes else {}
        for i, n in enumerate(others):
            a = 2 * math.pi * i / max(len(others), 1)
            at[n["id"]] = (math.cos(a), math.sin(a))
        self.nodes.data = {"x": [at[n["id"]][0] for n in nodes],
                           "y": [at[n["id"]][1] for n in nodes],
                           "label": [n["label"] for n in nodes],
                           "colour": ["#b2182b" if n["id"] == centre else "#67a9cf"
                                      for n in nodes]}
        links = graph["graph"]["links"]
        self.links.data = {"x0": [at[x["source"]][0] for x in links],
                           "y0": [at[x["source"]][1] for x in links],
                           "x1": [at[x["target"]][0] for x in links],
                           "y1": [at[x["target"]][1] for x in links]}

    def _add(self) -> None:
        args = {"subject": self.subject.value, "predicate": self.predicate.value,
                "object": self.object.value}
        if self.valid_from.value.strip():
            args["valid_from"] = self.valid_from.value.strip()
        out = self.ctx.attempt(self.note, lambda: self.ctx.call("kg_add", args),
                               testid="kg-note")
        if out is None:
            return
        self.ctx.confirm(self.note, "Fact added." if out["created"] else
                         "Fact already known (kept the higher confidence).", "kg-note")
        if not self.entity.value.strip():
            self.entity.value = self.subject.value
        self.ctx.changed()

    def _end(self) -> None:
        tid = self.end_pick.value
        if not tid:
            self.note.object = message("Pick a current fact first.", "error", "kg-note")
            return
        if self.ctx.attempt(self.note, lambda: self.ctx.call("kg_invalidate",
                                                             {"triple_id": tid}),
                            ok="Fact ended.", testid="kg-note") is not None:
            self.ctx.changed()
            self.ctx.confirm(self.note, "Fact ended.", "kg-note")
