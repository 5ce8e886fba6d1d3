"""Palaces and files: download the palace JSON, upload one (validated; a bad file changes
nothing), embed in steps with progress, and open, create or delete palaces."""

from __future__ import annotations

import asyncio
import io
import json
from typing import Any

import panel as pn

from palazzo.errors import PalazzoError
from palazzo.hosts.embedding import embedding_steps
from palazzo.hosts.ui.common import Context, html_pane, message

EMBED_STEP = 16
# Between steps the interface sleeps on a real timer: a zero-length sleep is rescheduled
# before the worker's queued messages (clicks, the page's calls) get their turn.
YIELD_S = 0.01


async def embed_missing(ctx: Context, progress: pn.widgets.Progress, note: pn.pane.HTML,
                        ) -> int:
    """Embed drawers that lack a vector, a step at a time, moving ``progress``; return how
    many were embedded (0 without an embedder)."""
    done = 0
    try:
        for done, missing, _name in embedding_steps(ctx.call, EMBED_STEP):
            progress.max, progress.value = missing, done
            note.object = message(f"Embedding: {done} of {missing} drawers", "info",
                                  "embed-progress")
            await asyncio.sleep(YIELD_S)
    except PalazzoError as err:
        note.object = message(str(err), "error", "files-note")
    return done


class FilesView:
    """Export, import, embedding progress, and the palace list."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.download = pn.widgets.FileDownload(callback=self._export, filename="palace.json",
                                                label="Download palace JSON",
                                                button_type="primary",
                                                css_classes=["pz-export"])
        self.upload = pn.widgets.FileInput(accept=".json,application/json",
                                           css_classes=["pz-import"])
        self.progress = pn.widgets.Progress(name="Embedding", value=0, max=1,
                                            sizing_mode="stretch_width",
                                            css_classes=["pz-embed-progress"])
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
        self.upload.param.watch(self._uploaded, "value")
        self.open.on_click(self._open)
        self.new.on_click(self._new)
        self.delete.on_click(self._delete)
        library = getattr(ctx.bridge, "library", None) is not None
        self.view = pn.Column(
            pn.pane.HTML("<h3>Export and import</h3>"), self.download,
            pn.pane.HTML("<p>Import replaces the open palace with the file's, after checking "
                         "the whole file.</p>"), self.upload, self.progress, self.note,
            pn.pane.HTML("<h3>Palaces</h3>"), pn.Row(self.palaces, self.open),
            pn.Row(self.new_name, self.new), pn.Row(self.confirm, self.delete),
            self.palace_note, sizing_mode="stretch_width")
        for w in (self.palaces, self.open, self.new_name, self.new, self.confirm, self.delete):
            w.visible = library
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the palace list."""
        if getattr(self.ctx.bridge, "library", None) is None:
            return
        out = self.ctx.call("list_palaces")
        self.palaces.options = out["palaces"]
        if out["open"] in out["palaces"]:
            self.palaces.value = out["open"]

    def _export(self) -> io.BytesIO:
        doc = self.ctx.call("export", {"vectors": "float16"})["document"]
        return io.BytesIO(json.dumps(doc, ensure_ascii=False).encode("utf-8"))

    async def _uploaded(self, event: Any) -> None:
        await self.import_bytes(event.new)

    async def import_bytes(self, data: bytes | None) -> bool:
        """Import a palace JSON file's bytes; show the error and change nothing if it is bad;
        then embed its drawers with progress. Returns whether the import happened."""
        if not data:
            return False
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError:
            self.note.object = message("That file is not UTF-8 text, so not a palace file. "
                                       "Nothing was changed.", "error", "files-note")
            return False
        out = self.ctx.attempt(self.note, lambda: self.ctx.call(
            "import", {"text": text, "reindex": False}), testid="files-note")
        if out is None:
            self.note.object = str(self.note.object).replace(
                "</p>", " Nothing was changed.</p>")
            return False
        counts = out["imported"]
        self.ctx.changed()
        try:
            await self.ctx.saved()
        except PalazzoError as err:
            self.note.object = message(str(err), "error", "files-note")
            return False
        self.note.object = message(f"Imported {counts['drawers']} drawers in "
                                   f"{counts['wings']} wings.", "ok", "files-note")
        embedded = await embed_missing(self.ctx, self.progress, self.note)
        self.note.object = message(f"Imported {counts['drawers']} drawers in "
                                   f"{counts['wings']} wings; embedded {embedded}.", "ok",
                                   "files-note")
        self.ctx.changed()
        return True

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
