"""The knowledge graph: find an entity as you type, open it to see its facts in and out (as
of a date), its neighbourhood graph and timeline; add facts; end one after a confirm step,
with an undo; contradictions."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import panel as pn
from bokeh.models import ColumnDataSource, LabelSet, Range1d
from bokeh.plotting import figure

from palazzo.errors import PalazzoError, ValidationError
from palazzo.hosts.ui.common import Context, esc, html_pane, message, table
from palazzo.hosts.ui.forms import Field, Form, typed

FACT_COLUMNS = ["subject", "relation", "object", "from", "to", "confidence", "current"]
MATCHES = 8  # entities listed under the search box
PICK = "— pick a current fact —"


def _words(predicate: str) -> str:
    return predicate.replace("_", " ")


def _fact_row(f: dict[str, Any]) -> tuple[Any, ...]:
    return (f["subject"], _words(f["predicate"]), f["object"], f["valid_from"] or "–",
            f["valid_to"] or "–", f'{f["confidence"]:.2f}', "yes" if f["current"] else "no")


def fact_text(f: dict[str, Any]) -> str:
    """Return a fact as a person reads it: "jonas lives in lisbon (from 2021-03-01)"."""
    since = f" (from {f['valid_from'][:10]})" if f["valid_from"] else ""
    return f'{f["subject"]} {_words(f["predicate"])} {f["object"]}{since}'


def about_text(stats: dict[str, Any]) -> str:
    """Return, in plain words, what the knowledge graph holds and how it was found, from the
    ``kg_stats`` answer: entities and facts, how many facts were read from the text (the
    extractor's observations) and by what."""
    n, facts = stats["entities"], stats["triples"]
    read = stats["statement_types"].get("observation", 0)
    line = f"{n:,} entit{'y' if n == 1 else 'ies'} and {facts:,} fact{'' if facts == 1 else 's'}. "
    if read:
        line += (f"{read:,} {'fact was' if read == 1 else 'facts were'} read from your own words "
                 "(your turns and notes, never the assistant's answers) by fixed rules, not a "
                 "model")
        if facts - read:
            line += f"; {facts - read:,} added by hand or imported"
        line += ". "
    return (line + "Entities are the names, aliases and code names the text mentions. The "
            "rules read English statements: other languages give entities but few facts.")


def match_label(e: dict[str, Any]) -> str:
    """Return how a found entity is listed: its name, the alias that matched, its facts."""
    alias = f" (alias {e['alias']})" if e["alias"] else ""
    n = e["facts"]
    return f'{e["name"]}{alias} — {n} fact{"" if n == 1 else "s"}'


def ring(centre: str, facts: list[dict[str, Any]]) -> tuple[dict[str, list[Any]],
                                                            dict[str, list[Any]]]:
    """Return the (nodes, links) columns of the neighbourhood drawing: ``centre`` in the
    middle, the other end of every fact on a circle, one link per fact with its relation.
    Cost: O(facts)."""
    others = list(dict.fromkeys(f["object"] if f["subject"] == centre else f["subject"]
                                for f in facts))
    at = {centre: (0.0, 0.0)}
    for i, key in enumerate(others):
        a = 2 * math.pi * i / len(others)
        at[key] = (math.cos(a), math.sin(a))
    names = [centre, *others]
    nodes = {"x": [at[k][0] for k in names], "y": [at[k][1] for k in names], "label": names,
             "colour": ["#b2182b"] + ["#67a9cf"] * len(others)}
    ends = [(at[f["subject"]], at[f["object"]]) for f in facts]
    links = {"x0": [s[0] for s, _ in ends], "y0": [s[1] for s, _ in ends],
             "x1": [o[0] for _, o in ends], "y1": [o[1] for _, o in ends],
             "mx": [(s[0] + o[0]) / 2 for s, o in ends],
             "my": [(s[1] + o[1]) / 2 for s, o in ends],
             "label": [_words(f["predicate"]) for f in facts]}
    return nodes, links


class KnowledgeView:
    """Entity finder, neighbourhood (facts, graph, timeline), add a fact, end a fact with a
    confirm step and an undo, contradictions."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.opened: str | None = None  # the key of the entity shown
        self.ending: dict[str, Any] | None = None  # the fact the confirm step is about
        self.ended: dict[str, Any] | None = None  # the fact Undo would reopen
        # -- find and open --------------------------------------------------------------
        self.entity = pn.widgets.TextInput(name="Find an entity",
                                           placeholder="type part of a name or alias",
                                           css_classes=["pz-kg-entity"])
        self.as_of = pn.widgets.TextInput(name="As of (YYYY-MM-DD, optional)",
                                          placeholder="empty: all time",
                                          css_classes=["pz-kg-asof"])
        self.look = pn.widgets.Button(name="Open", button_type="primary", disabled=True,
                                      css_classes=["pz-kg-look"])
        self.matches = pn.widgets.Select(name="Matching entities", options={}, size=MATCHES,
                                         css_classes=["pz-kg-matches"])
        self.found = html_pane("kg-found")
        self.find = Form(ctx, "kg_query", {"entity": Field(self.entity, "kg-entity"),
                                           "as_of": Field(self.as_of, "kg-asof")},
                         self.look, self._query_args)
        self.facts = html_pane("kg-facts")
        self.timeline = html_pane("kg-timeline")
        self.note = html_pane("kg-note")
        self.about = html_pane("kg-about")  # what the graph holds and how it was found
        # -- the neighbourhood graph: fixed ranges, so an empty drawing never asks BokehJS
        # to fit a range to no data ("could not set initial ranges").
        self.nodes = ColumnDataSource({"x": [], "y": [], "label": [], "colour": []})
        self.links = ColumnDataSource({"x0": [], "y0": [], "x1": [], "y1": [], "mx": [],
                                       "my": [], "label": []})
        fig = figure(height=320, sizing_mode="stretch_width", tools="pan,wheel_zoom,reset",
                     toolbar_location="right", x_range=Range1d(-1.6, 1.6),
                     y_range=Range1d(-1.35, 1.35), title="Neighbourhood")
        fig.axis.visible = False
        fig.grid.visible = False
        fig.segment("x0", "y0", "x1", "y1", source=self.links, line_color="#888")
        fig.add_layout(LabelSet(x="mx", y="my", text="label", source=self.links,
                                text_font_size="8pt", text_color="#555", text_align="center"))
        fig.scatter("x", "y", size=14, fill_color="colour", line_color="#333", source=self.nodes)
        fig.add_layout(LabelSet(x="x", y="y", text="label", source=self.nodes, y_offset=8,
                                text_font_size="9pt", text_align="center"))
        # Nothing here is shown or hidden later: a pane first rendered hidden stayed hidden
        # in Chromium, and models added after the first render were unknown to the page.
        self.graph = pn.pane.Bokeh(fig, sizing_mode="stretch_width")
        # -- end a fact -------------------------------------------------------------------
        self.end_pick = pn.widgets.Select(name="Fact to end", options={PICK: None},
                                          css_classes=["pz-kg-end-pick"])
        today = datetime.now(UTC).date().isoformat()
        self.end_on = pn.widgets.TextInput(name="End on (YYYY-MM-DD)", value=today,
                                           css_classes=["pz-kg-end-on"])
        self.end = pn.widgets.Button(name="End it…", disabled=True, css_classes=["pz-kg-end"])
        self.end_form = Form(ctx, "kg_invalidate",
                             {"triple_id": Field(self.end_pick, "kg-end-pick"),
                              "ended": Field(self.end_on, "kg-end-on")},
                             self.end, self._end_args)
        self.question = html_pane("kg-confirm")
        self.yes = pn.widgets.Button(name="Yes, end it", button_type="danger",
                                     css_classes=["pz-kg-end-yes"])
        self.keep = pn.widgets.Button(name="Keep it", css_classes=["pz-kg-end-no"])
        self.yes.disabled = self.keep.disabled = True  # enabled while a question is asked
        self.confirm_box = pn.Row(self.question, self.yes, self.keep,
                                  sizing_mode="stretch_width")
        self.end_note = html_pane("kg-end-note")
        self.undo = pn.widgets.Button(name="Undo", disabled=True, css_classes=["pz-kg-undo"])
        # -- add a fact -------------------------------------------------------------------
        self.subject = pn.widgets.TextInput(name="Subject", css_classes=["pz-kg-subject"])
        self.predicate = pn.widgets.TextInput(name="Relation", placeholder="e.g. lives in",
                                              css_classes=["pz-kg-predicate"])
        self.object = pn.widgets.TextInput(name="Object", css_classes=["pz-kg-object"])
        self.valid_from = pn.widgets.TextInput(name="Valid from (YYYY-MM-DD, optional)",
                                               css_classes=["pz-kg-from"])
        self.add = pn.widgets.Button(name="Add fact", disabled=True, css_classes=["pz-kg-add"])
        self.add_form = Form(ctx, "kg_add", {
            "subject": Field(self.subject, "kg-subject"),
            "predicate": Field(self.predicate, "kg-predicate"),
            "object": Field(self.object, "kg-object"),
            "valid_from": Field(self.valid_from, "kg-from")}, self.add, self._add_args)
        self.add_note = html_pane("kg-add-note")
        self.contradictions = html_pane("kg-contradictions")

        self.entity.param.watch(lambda _e: self.search(), "value_input")
        self.entity.param.watch(lambda _e: self.lookup(), "value")  # Enter
        self.as_of.param.watch(lambda _e: self.opened and self.open(self.opened), "value")
        self.matches.param.watch(self._picked, "value")
        self.look.on_click(lambda _e: self.lookup())
        self.end.on_click(lambda _e: self.ask())
        self.yes.on_click(lambda _e: self.confirm_end())
        self.keep.on_click(lambda _e: self.cancel_end())
        self.undo.on_click(lambda _e: self.undo_end())
        self.add.on_click(lambda _e: self._add())
        self.view = pn.Column(
            self.about,
            pn.Row(self.find.fields["entity"].view, self.find.fields["as_of"].view, self.look,
                   sizing_mode="stretch_width"),
            self.found, self.matches, self.note, self.facts, self.graph, self.timeline,
            pn.pane.HTML("<h3>End a fact</h3>"),
            pn.Row(self.end_form.fields["triple_id"].view, self.end_form.fields["ended"].view,
                   self.end),
            self.confirm_box,
            pn.Row(self.end_note, self.undo, sizing_mode="stretch_width"),
            pn.pane.HTML("<h3>Add a fact</h3>"),
            pn.Row(*(f.view for f in self.add_form.fields.values())), self.add, self.add_note,
            pn.pane.HTML("<h3>Contradictions</h3>"), self.contradictions,
            sizing_mode="stretch_width")
        ctx.on_refresh(self.refresh)
        self.refresh()

    # -- finding ----------------------------------------------------------------------------
    def refresh(self) -> None:
        """Reload the summary line, contradictions, the matches of the search box and the
        opened entity."""
        self.about.object = message(about_text(self.ctx.call("kg_stats", {})), "info",
                                    "kg-about")
        found = self.ctx.call("kg_contradictions", {"limit": 50})["contradictions"]
        rows = [(c["subject"], _words(c["predicate"]), ", ".join(c["objects"]),
                 c["overlap_from"] or "–", c["overlap_to"] or "–") for c in found]
        self.contradictions.object = (
            table(["subject", "relation", "objects", "from", "to"], rows, "kg-contradictions")
            if rows else message("No contradictions.", "info", "kg-none"))
        self.search()
        if self.opened is not None:
            self.open(self.opened, quiet=True)

    def search(self) -> list[dict[str, Any]]:
        """List the entities matching what is typed so far (name, alias, fact counts) and
        return them. Cost: one kg_entities call (milliseconds at 5,000 entities)."""
        text = typed(self.entity)
        self.find.check()
        if not text:
            self.matches.options, self.matches.value = {}, None
            self.found.object = ""
            return []
        out = self.ctx.attempt(self.found, lambda: self.ctx.call(
            "kg_entities", {"query": text, "limit": MATCHES}), testid="kg-found")
        if out is None:
            return []
        found = out["entities"]
        self.matches.options = {match_label(e): e["key"] for e in found}
        self.matches.value = None  # a click on any match is a change, even the last one
        more = f"{len(found)} of {out['count']}" if out["truncated"] else f"{out['count']}"
        self.found.object = message(
            f"{more} entit{'y matches' if out['count'] == 1 else 'ies match'} "
            f"“{text}”" + (": pick one to open it." if found else "."),
            "info", "kg-found")
        return found

    def _picked(self, event: Any) -> None:
        if event.new:
            self.open(event.new)

    def _query_args(self) -> dict[str, Any]:
        args: dict[str, Any] = {"entity": typed(self.entity), "direction": "both",
                                "limit": 200}
        if typed(self.as_of):
            args["as_of"] = typed(self.as_of)
        return args

    def lookup(self) -> None:
        """Open the entity named in the box (a name, key or alias), else the best match."""
        name = typed(self.entity)
        if not name:
            return
        try:
            self.ctx.call("kg_query", {"entity": name, "limit": 1})
        except PalazzoError:
            found = self.search()
            if found:
                name = found[0]["key"]
        self.open(name)

    def open(self, name: str, quiet: bool = False) -> None:
        """Show the entity's facts in and out (as of the date), its neighbourhood graph, its
        timeline, and its current facts as the ones that can be ended."""
        args = {**self._query_args(), "entity": name}
        try:
            out = self.ctx.call("kg_query", args)
        except PalazzoError as err:  # a bad date goes under its field, the rest under "find"
            if not self.find.place(err):
                self.find.fields["entity"].show(str(err))
            return
        self.find.check()
        key = out["entity"]["key"]
        self.opened = key
        if not quiet:
            self.note.object = ""
        when = f" as of {out['as_of'][:10]}" if out["as_of"] else " (all time)"
        rows = [("out" if f["direction"] == "out" else "in", *_fact_row(f))
                for f in out["facts"]]
        self.facts.object = (f"<h3>{esc(out['entity']['name'])}: facts{esc(when)}</h3>"
                             + (table(["direction", *FACT_COLUMNS], rows, "kg-facts") if rows
                                else message("No facts at that date.", "info", "kg-facts")))
        nodes, links = ring(key, out["facts"])
        self.links.data, self.nodes.data = links, nodes

        line = self.ctx.call("kg_timeline", {"entity": key, "limit": 200})["facts"]
        self.timeline.object = ("<h3>Timeline</h3>"
                                + table(FACT_COLUMNS, [_fact_row(f) for f in line],
                                        "kg-timeline"))
        keep = self.end_pick.value
        options = {PICK: None, **{fact_text(f): f["id"] for f in line if f["current"]}}
        self.end_pick.options = options
        self.end_pick.value = keep if keep in options.values() else None
        self.end_form.check()

    # -- ending, with a confirm step and an undo ---------------------------------------------
    def _end_args(self) -> dict[str, Any]:
        if not self.end_pick.value:
            raise ValidationError("Pick the fact to end.", field="triple_id")
        return {"triple_id": self.end_pick.value, "ended": typed(self.end_on)}

    def ask(self) -> None:
        """Show the confirm step naming the picked fact and the date; end nothing yet."""
        args = self.end_form.check(show_all=True)
        if args is None:
            return
        label = next(k for k, v in self.end_pick.options.items() if v == args["triple_id"])
        self.ending = args
        self.question.object = (
            f'<p class="pz-msg pz-warn" data-testid="kg-confirm">End “{esc(label)}” on '
            f'{esc(args["ended"])}? It stays in the timeline but is no longer current.</p>')
        self.yes.disabled = self.keep.disabled = False
        self.end.disabled = True

    def cancel_end(self) -> None:
        """Close the confirm step without ending anything."""
        self.ending = None
        self.question.object = ""
        self.yes.disabled = self.keep.disabled = True
        self.end_form.check()

    def confirm_end(self) -> dict[str, Any] | None:
        """End the fact the confirm step names; offer Undo. Returns the ended fact or None."""
        args, self.ending = self.ending, None
        self.question.object = ""
        self.yes.disabled = self.keep.disabled = True
        if args is None:
            return None
        out = self.end_form.run(lambda _a: self.ctx.call("kg_invalidate", args),
                                self.end_note, "kg-end-note")
        if out is None:
            return None
        fact = out["ended"][0]
        self.ended = fact
        self.undo.disabled = False
        self.ctx.changed()
        self.ctx.confirm(self.end_note, f"Ended “{fact_text(fact)}” on "
                         f"{fact['valid_to'][:10]}.", "kg-end-note")
        return fact

    def undo_end(self) -> dict[str, Any] | None:
        """Make the fact just ended current again (kg_reopen clears its end date and its
        invalidation time; nothing else about it changed). Returns it, or None."""
        fact, self.ended = self.ended, None
        self.undo.disabled = True
        if fact is None:
            return None
        out = self.ctx.attempt(self.end_note, lambda: self.ctx.call(
            "kg_reopen", {"triple_id": fact["id"]}), testid="kg-end-note")
        if out is None:
            return None
        self.ctx.changed()
        self.ctx.confirm(self.end_note, f"Undone: “{fact_text(fact)}” is current again.",
                         "kg-end-note")
        return out["reopened"]

    # -- adding ---------------------------------------------------------------------------
    def _add_args(self) -> dict[str, Any]:
        args = {k: typed(f.widget) for k, f in self.add_form.fields.items()
                if k != "valid_from"}
        when = typed(self.valid_from)
        if when:
            args["valid_from"] = when
        return args

    def _add(self) -> dict[str, Any] | None:
        out = self.add_form.run(lambda a: self.ctx.call("kg_add", a), self.add_note,
                                "kg-add-note")
        if out is None:
            return None
        self.ctx.confirm(self.add_note, "Fact added." if out["created"] else
                         "Fact already known (kept the higher confidence).", "kg-add-note")
        if self.opened is None:
            self.opened = out["triple"]["subject"]
        self.ctx.changed()
        return out
