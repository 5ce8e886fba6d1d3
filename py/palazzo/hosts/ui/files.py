"""Palaces and files: download the palace JSON (named after the palace and the day), open the
import dialog, and open, create or delete palaces.

Importing happens in the page's import dialog (``web/importer.js``), which the worker runs in
batches (:mod:`palazzo.hosts.importing`); this view only offers the button that opens it.
"""

from __future__ import annotations

import io
import json
import time
from typing import Any

import panel as pn

from palazzo.errors import PalazzoError
from palazzo.hosts.ui.common import Context, html_pane, message

IMPORT_BUTTON = ('<p class="pz-import-lead">Drop files or a folder anywhere on the page, or '
                 '<button type="button" class="pz-import-open" data-action="import">choose '
                 'what to import…</button> Notes, chat exports, OpenCode and MemPalace '
                 'palaces, palace files.</p>')


def export_filename(palace: str, when: float | None = None) -> str:
    """Return the download name of palace ``palace``'s export: ``<palace>-<YYYY-MM-DD>.json``
    (local date), so exports of several palaces and days never overwrite each other."""
    day = time.strftime("%Y-%m-%d", time.localtime(time.time() if when is None else when))
    return f"{palace}-{day}.json"


class FilesView:
    """Export, the import dialog's button, and the palace list."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.download = pn.widgets.FileDownload(callback=self._export, filename="palace.json",
                                                label="Download palace JSON",
                                                button_type="primary",
                                                css_classes=["pz-export"])
        self.note = html_pane("files-note")
        self.palaces = pn.widgets.Select(name="Palaces", css_classes=["pz-palace-pick"])
        self.open = pn.widgets.Button(name="Open", css_classes=["pz-palace-open"])
        self.new_name = pn.widgets.TextInput(name="New palace name",
                                             css_classes=["pz-palace-new-name"])
        self.new = pn.widgets.Button(name="Start an empty palace",
                                     css_classes=["pz-palace-new"])
        self.confirm = pn.widgets.TextInput(name="Type the palace's name to delete it",
                                            css_classes=["pz-palace-confirm"])
        self.delete = pn.widgets.Button(name="Delete palace", button_type="danger",
                                        css_classes=["pz-palace-delete"])
        self.palace_note = html_pane("palace-note")
        self.open.on_click(self._open)
        self.new.on_click(self._new)
        self.delete.on_click(self._delete)
        library = getattr(ctx.bridge, "library", None) is not None
        self.view = pn.Column(
            pn.pane.HTML("<h3>Import</h3>"), pn.pane.HTML(IMPORT_BUTTON,
                                                          sizing_mode="stretch_width"),
            pn.pane.HTML("<h3>Export</h3><p>The whole palace as one JSON file, to keep or to "
                         "open in another browser or with the palazzo command line.</p>"),
            self.download, self.note,
            pn.pane.HTML("<h3>Palaces</h3>"), pn.Row(self.palaces, self.open),
            pn.Row(self.new_name, self.new), pn.Row(self.confirm, self.delete),
            self.palace_note, sizing_mode="stretch_width")
        for w in (self.palaces, self.open, self.new_name, self.new, self.confirm, self.delete):
            w.visible = library
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the palace list and the export's file name."""
        self.download.filename = export_filename(self.ctx.call("palace_status")["name"])
        if getattr(self.ctx.bridge, "library", None) is None:
            return
        out = self.ctx.call("list_palaces")
        self.palaces.options = out["palaces"]
        if out["open"] in out["palaces"]:
            self.palaces.value = out["open"]
        self.download.filename = export_filename(out["open"] or "palace")

    def _export(self) -> io.BytesIO:
        doc = self.ctx.call("export", {"vectors": "float16"})["document"]
        return io.BytesIO(json.dumps(doc, ensure_ascii=False).encode("utf-8"))

    async def _open(self, _event: Any = None) -> None:
        await self.open_palace(self.palaces.value)

    async def open_palace(self, name: str | None) -> None:
        """Open palace ``name``; opening the read-only open palace again takes over writing
        when its other writer has gone. Shows what happened, or the error."""
        if not name:
            return
        try:
            out = await self.ctx.library_call("open_palace", {"name": name})
        except PalazzoError as err:
            self.palace_note.object = message(str(err), "error", "palace-note")
            return
        ro = " (read-only: open in another tab)" if out["status"]["read_only"] else ""
        self.palace_note.object = message(f"Opened {out['palace']}{ro}.", "ok", "palace-note")
        self.ctx.changed()

    def lock_free(self, name: str) -> None:
        """Say that read-only palace ``name`` can now be written here (its other writer has
        gone) and how: Open it again. Returns None."""
        self.palaces.value = name
        self.palace_note.object = message(
            f"{name} is no longer open for writing elsewhere: press Open to take over "
            "writing here.", "info", "palace-note")

    async def _new(self, _event: Any = None) -> None:
        name = self.new_name.value.strip()
        try:
            await self.ctx.library_call("new_palace", {"name": name})
        except PalazzoError as err:
            self.palace_note.object = message(str(err), "error", "palace-note")
            return
        self.new_name.value = ""
        self.ctx.changed()
        self.palace_note.object = message(f"Started {name}.", "ok", "palace-note")

    async def _delete(self, _event: Any = None) -> None:
        name = self.palaces.value
        try:
            await self.ctx.library_call(
                "delete_palace", {"name": name or "", "confirm": self.confirm.value})
        except PalazzoError as err:
            self.palace_note.object = message(str(err), "error", "palace-note")
            return
        self.confirm.value = ""
        rest = self.ctx.call("list_palaces")["palaces"]
        nxt = rest[0] if rest else "My palace"
        try:
            out = await self.ctx.library_call("open_palace" if rest else "new_palace",
                                              {"name": nxt})
        except PalazzoError as err:
            self.palace_note.object = message(f"Deleted {name}; {nxt}: {err}", "error",
                                              "palace-note")
            return
        self.ctx.changed()
        ro = " (read-only: open in another tab)" if out["status"]["read_only"] else ""
        self.palace_note.object = message(f"Deleted {name}; opened {nxt}{ro}.", "ok",
                                          "palace-note")
