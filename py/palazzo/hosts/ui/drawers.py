"""Search, open, edit, delete and add drawers.

Search results show escaped snippets with their scores; opening one shows the whole drawer
as text, which can be edited (saved with ``update_drawer``) or deleted (after a confirmation
tick). Adding a drawer warns about exact and near duplicates (``check_duplicate``) before it
writes, and a second click adds anyway.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from palazzo.hosts.ui.common import Context, esc, html_pane, message, set_options

ALL = "(all)"
SNIPPET = 240


def _fmt(score: Any) -> str:
    return "–" if score is None else f"{score:.3f}"


def results_html(results: list[dict[str, Any]]) -> str:
    """Return the result list: place, snippet and scores, all escaped."""
    if not results:
        return message("No drawer matches.", "info", "search-empty")
    items = []
    for i, r in enumerate(results, 1):
        s = r["scores"]
        text = r["content"][:SNIPPET] + ("…" if len(r["content"]) > SNIPPET else "")
        items.append(
            f'<li data-testid="search-result"><b>{i}. {esc(r["wing"])} / {esc(r["room"])}</b>'
            f' <small>score {_fmt(r["score"])} · vector {_fmt(s["vector"])} · '
            f'bm25 {_fmt(s["bm25"])}</small><div class="pz-snippet">{esc(text)}</div></li>')
    return f'<ol class="pz-results" data-testid="search-results">{"".join(items)}</ol>'


class SearchView:
    """Query, wing/room filters, results, and the opened drawer."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.query = pn.widgets.TextInput(name="Search", placeholder="What do you remember?",
                                          css_classes=["pz-search-query"])
        self.wing = pn.widgets.Select(name="Wing", options=[ALL], css_classes=["pz-search-wing"])
        self.room = pn.widgets.Select(name="Room", options=[ALL], css_classes=["pz-search-room"])
        self.go = pn.widgets.Button(name="Search", button_type="primary",
                                    css_classes=["pz-search-go"])
        self.results = html_pane("search-results")
        self.pick = pn.widgets.Select(name="Open result", options={}, css_classes=["pz-open"])
        self.text = pn.widgets.TextAreaInput(name="Drawer text", height=180,
                                             css_classes=["pz-drawer-edit"])
        self.meta = html_pane("drawer-meta")
        self.save = pn.widgets.Button(name="Save changes", css_classes=["pz-drawer-save"])
        self.confirm = pn.widgets.Checkbox(name="Yes, delete this drawer",
                                           css_classes=["pz-drawer-confirm"])
        self.delete = pn.widgets.Button(name="Delete drawer", button_type="danger",
                                        css_classes=["pz-drawer-delete"])
        self.note = html_pane("drawer-note")
        self.opened: str | None = None
        self.go.on_click(lambda _e: self.run())
        self.query.param.watch(lambda _e: self.run(), "value")
        self.wing.param.watch(lambda _e: self._rooms(), "value")
        self.pick.param.watch(lambda e: self.open(e.new), "value")
        self.save.on_click(lambda _e: self._save())
        self.delete.on_click(lambda _e: self._delete())
        self.detail = pn.Column(self.meta, self.text, pn.Row(self.save, self.confirm,
                                                             self.delete), self.note,
                                sizing_mode="stretch_width")
        self._editable(False)
        self.view = pn.Column(pn.Row(self.query, self.wing, self.room, self.go),
                              self.results, self.pick, self.detail,
                              sizing_mode="stretch_width")
        ctx.on_refresh(self._filters)
        self._filters()

    def _filters(self) -> None:
        set_options(self.wing, [ALL, *self.ctx.wings()])
        self._rooms()

    def _rooms(self) -> None:
        rooms = [r["name"] for r in self.ctx.rooms() if r["wing"] == self.wing.value]
        set_options(self.room, [ALL, *rooms])

    def run(self) -> None:
        """Search with the current query and filters; list the hits."""
        q = self.query.value.strip()
        if not q:
            return
        args: dict[str, Any] = {"query": q, "limit": 10}
        if self.wing.value != ALL:
            args["wing"] = self.wing.value
            if self.room.value != ALL:
                args["room"] = self.room.value
        out = self.ctx.attempt(self.results, lambda: self.ctx.call("search", args),
                               testid="search-error")
        if out is None:
            return
        self.results.object = results_html(out["results"])
        self.pick.options = {"(choose a result to open it)": "",
                             **{f'{i}. {r["wing"]} / {r["room"]}: {r["content"][:60]}':
                                r["drawer_id"] for i, r in enumerate(out["results"], 1)}}
        self.pick.value = ""

    def open(self, drawer_id: str | None) -> None:
        """Show the whole drawer ``drawer_id`` for reading and editing."""
        if not drawer_id:
            return
        out = self.ctx.attempt(self.note, lambda: self.ctx.call("get_drawer",
                                                                {"drawer_id": drawer_id}))
        if out is None:
            return
        d = out["drawer"]
        self.opened = drawer_id
        self.meta.object = (f'<h3 data-testid="drawer-title">{esc(d["wing"])} / '
                            f'{esc(d["room"])}</h3><div class="pz-drawer-text" '
                            f'data-testid="drawer-text">{esc(d["content"])}</div>'
                            f'<small>{esc(d["id"])} · importance {d["importance"]}</small>')
        self.text.value = d["content"]
        self.confirm.value = False
        self.note.object = ""
        self._editable(True)

    def _editable(self, on: bool) -> None:
        # The editor stays in place (hiding and showing it again is fragile in BokehJS);
        # it is disabled until a drawer is open.
        for w in (self.text, self.save, self.confirm, self.delete):
            w.disabled = not on

    def _save(self) -> None:
        if self.opened is None:
            return
        done = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "update_drawer", {"drawer_id": self.opened, "content": self.text.value}),
            ok="Saved.", testid="drawer-note")
        if done is not None:
            self.ctx.changed()
            self.open(done["drawer"]["id"])  # new text, new id (the old one is an alias)
            self.ctx.confirm(self.note, "Saved.", "drawer-note")

    def _delete(self) -> None:
        if self.opened is None:
            return
        if not self.confirm.value:
            self.note.object = message("Tick the box to confirm the deletion.", "error",
                                       "drawer-note")
            return
        done = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "delete_drawer", {"drawer_id": self.opened}), testid="drawer-note")
        if done is not None:
            self.opened = None
            self.meta.object = ""
            self.text.value = ""
            self._editable(False)
            self.ctx.changed()
            self.run()
            self.ctx.confirm(self.note, "Drawer deleted.", "drawer-note")


class AddView:
    """Add a drawer to a chosen or new wing/room, with a duplicate warning first."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.wing = pn.widgets.TextInput(name="Wing", placeholder="a wing (new or existing)",
                                         css_classes=["pz-add-wing"])
        self.room = pn.widgets.TextInput(name="Room", placeholder="a room (new or existing)",
                                         css_classes=["pz-add-room"])
        self.wing_pick = pn.widgets.Select(name="…or choose a wing", options=[""],
                                           css_classes=["pz-add-wing-pick"])
        self.room_pick = pn.widgets.Select(name="…or choose a room", options=[""],
                                           css_classes=["pz-add-room-pick"])
        self.wing_pick.param.watch(lambda e: self._take(self.wing, e.new), "value")
        self.room_pick.param.watch(lambda e: self._take(self.room, e.new), "value")
        self.text = pn.widgets.TextAreaInput(name="Text (kept verbatim)", height=160,
                                             css_classes=["pz-add-text"])
        self.add = pn.widgets.Button(name="Add drawer", button_type="primary",
                                     css_classes=["pz-add-go"])
        self.note = html_pane("add-note")
        self._warned: tuple[str, str, str] | None = None
        self.add.on_click(lambda _e: self.submit())
        self.view = pn.Column(pn.Row(self.wing, self.wing_pick),
                              pn.Row(self.room, self.room_pick), self.text, self.add, self.note,
                              sizing_mode="stretch_width")
        ctx.on_refresh(self._options)
        self._options()

    def _options(self) -> None:
        set_options(self.wing_pick, ["", *self.ctx.wings()])
        set_options(self.room_pick, ["", *sorted({r["name"] for r in self.ctx.rooms()})])

    @staticmethod
    def _take(field: Any, value: str) -> None:
        if value:
            field.value = value

    def submit(self) -> None:
        """Add the drawer, or warn once about a duplicate (a second click adds anyway)."""
        wing, room, text = self.wing.value.strip(), self.room.value.strip(), self.text.value
        key = (wing, room, text)
        if not text.strip():
            self.note.object = message("Write something to keep first.", "error", "add-note")
            return
        if self._warned != key:
            dup = self.ctx.attempt(self.note, lambda: self.ctx.call(
                "check_duplicate", {"content": text}), testid="add-note")
            if dup is None:
                return
            if dup["is_duplicate"]:
                first = dup.get("exact") or (dup.get("near") or [{}])[0].get("drawer_id")
                d = self.ctx.call("get_drawer", {"drawer_id": first})["drawer"]
                where = f'{d["wing"]} / {d["room"]}'
                self._warned = key
                self.note.object = message(
                    f"This looks like a drawer you already have in {where}. "
                    "Click Add drawer again to keep it anyway.", "error", "add-duplicate")
                return
        out = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "add_drawer", {"wing": wing, "room": room, "content": text}), testid="add-note")
        self._warned = None
        if out is None:
            return
        self.ctx.confirm(
            self.note,
            "Added." if out["created"] else "That exact drawer is already in this room.",
            "add-note")
        if out["created"]:
            self.text.value = ""
        self.ctx.changed()
