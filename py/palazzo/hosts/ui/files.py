"""Palaces and files: download the palace JSON (named after the palace and the day), open the
import dialog, open, create or delete palaces, and check and repair the open palace's files.

A palace whose files are damaged opens read-only with everything that still verifies
(:mod:`palazzo.persist.recovery`); this view says what is damaged (the files, the records
lost, the records set aside with their text, the older generation it fell back on), checks
every file on request (``check_palace``) and repairs after a confirmation that says damaged
files are kept aside, never deleted (``repair_palace``). All of it is text from files and
records, so every piece is escaped.

Importing happens in the page's import dialog (``web/importer.js``), which the worker runs in
batches (:mod:`palazzo.hosts.importing`); this view only offers the button that opens it.
"""

from __future__ import annotations

from typing import Any

import panel as pn

from palazzo.errors import PalazzoError
from palazzo.formats.palacefile import export_filename
from palazzo.hosts.ui.common import Context, esc, html_pane, message, plural, table, verb

IMPORT_BUTTON = ('<p class="pz-import-lead">Drop files or a folder anywhere on the page, or '
                 '<button type="button" class="pz-import-open" data-action="import">choose '
                 'what to import…</button> Notes, chat exports, OpenCode and MemPalace '
                 'palaces, palace files.</p>')


# What a file is for, in words (roles from ``check_palace``).
ROLES = {"current": "current generation", "previous": "previous generation (for a fallback)",
         "newer": "newer generation", "tip": "journal tip", "keys": "signing keys",
         "embedder": "fitted embedder", "set aside": "set aside by a repair"}
REPAIR_QUESTION = (
    "Repair keeps everything that still verifies and writes it again as a new generation, "
    "and the palace can be written again. Damaged files are kept aside beside the palace "
    "(renamed damaged-…), never deleted, and records that no longer apply are kept in a "
    "rejected-… file and listed here with their text. Repair this palace now?")


def _seqs(ranges: list[list[int]]) -> str:
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges)


def _set_aside_table(records: list[dict[str, Any]], testid: str) -> str:
    rows = [(r.get("seq"), r.get("op"), r.get("why"), r.get("text") or "(no text)")
            for r in records]
    return table(["Record", "Operation", "Why it was set aside", "Its text"], rows, testid)


def damage_html(status: dict[str, Any] | None) -> str:
    """Return what is damaged in the open palace, from its storage status (``status`` of
    ``storage_status``): the files and what is wrong with each, the older generation it fell
    back on, the records no file holds any more, the records set aside (with their text),
    and whether signing is off; "" when nothing is damaged. All text escaped."""
    if not status or not status.get("damaged"):
        return ""
    parts = [message("This palace is damaged: it opened read-only with everything that "
                     "still verifies, and nothing is written until it is repaired (Check "
                     "files and Repair… are below).", "error", "damage-lead")]
    if status.get("fallback") is not None:
        parts.append(message(
            f"Its newest snapshot does not verify: it was read from generation "
            f"{status['fallback']} (the snapshot before it and the journals since).",
            "info", "damage-fallback"))
    if status.get("damage"):
        parts.append(table(["File", "What is wrong"],
                           [(d.get("file"), d.get("what")) for d in status["damage"]],
                           "damage-files"))
    if status.get("missing"):
        parts.append(message(f"Records no file holds any more: {_seqs(status['missing'])}.",
                             "error", "damage-missing"))
    if status.get("set_aside"):
        parts.append(message("Records that verify but could not be applied (repair keeps "
                             "them in a rejected-… file):", "info", "damage-set-aside-lead"))
        parts.append(_set_aside_table(status["set_aside"], "damage-set-aside"))
    if status.get("signing") is False:
        parts.append(message("Signing is off until the repair: the signing keys are damaged.",
                             "info", "damage-signing"))
    return '<div class="pz-damage" data-testid="damage-report">' + "".join(parts) + "</div>"


def check_html(out: dict[str, Any]) -> str:
    """Return the result of ``check_palace`` as a summary line and a table of every file
    (its role in words, size and what was found), the damaged ones first. Text escaped."""
    check = out["check"]
    # A file the boot found damaged is damaged here too, even when it reads whole by itself
    # (a journal cut at a record boundary is whole; the tip says what it lacks).
    boot: dict[str, list[str]] = {}
    for d in check.get("damage") or []:
        boot.setdefault(str(d.get("file")), []).append(str(d.get("what")))
    files = []
    for f in check["files"]:
        extra = [w for w in boot.get(f["file"], []) if w not in f["found"]]
        files.append({**f, "ok": bool(f["ok"]) and f["file"] not in boot,
                      "found": "; ".join([f["found"], *extra])})
    files.sort(key=lambda f: (f["ok"], f["file"]))
    bad = [f for f in files if not f["ok"]]
    if check["ok"] and not bad:
        lead = message(f"Every file of {out['palace']} verifies "
                       f"({plural(len(files), 'file')}).", "ok", "check-summary")
    elif check["ok"]:
        lead = message(f"{out['palace']} is whole; {plural(len(bad), 'file')} it does not need "
                       f"{verb(len(bad), 'does', 'do')} not verify.", "info", "check-summary")
    else:
        n = len(bad) or len(check.get("damage") or [])
        lead = message(f"{out['palace']} is damaged: {plural(n, 'problem')} found. Repair… keeps "
                       "what verifies and moves damaged files aside.", "error",
                       "check-summary")
    rows = [("damaged" if not f["ok"] else "ok", f["file"], ROLES.get(f["role"], f["role"]),
             f"{f['bytes']:,}", f["found"]) for f in files]
    return lead + table(["State", "File", "Role", "Bytes", "What was found"], rows, "check-files")


def repair_html(out: dict[str, Any]) -> str:
    """Return the result of ``repair_palace``: what was moved aside and where, the records
    set aside (with their text) and the file that keeps them, what was lost, and the
    palace's state now. Text escaped."""
    rep = out["repair"]
    if not rep["repaired"]:
        return message(f"Nothing to repair: every file of {out['palace']} verifies.", "ok",
                       "repair-note")
    writable = not (rep.get("status") or {}).get("read_only")
    parts = [message(f"Repaired {out['palace']}"
                     + (": it can be written again." if writable else "."), "ok",
                     "repair-note")]
    if rep.get("moved"):
        parts.append(message("Damaged files kept aside (not deleted):", "info",
                             "repair-moved-lead"))
        parts.append(table(["File", "Now kept as"],
                           [(m.get("file"), m.get("to")) for m in rep["moved"]],
                           "repair-moved"))
    if rep.get("set_aside"):
        where = f" in {rep['rejected']}" if rep.get("rejected") else ""
        parts.append(message(f"Records set aside{where}:", "info", "repair-set-aside-lead"))
        parts.append(_set_aside_table(rep["set_aside"], "repair-set-aside"))
    lost = []
    if rep.get("missing"):
        many = sum(b - a + 1 for a, b in rep["missing"]) > 1
        lost.append(f"record{'s' if many else ''} {_seqs(rep['missing'])} (no file held "
                    f"{'them' if many else 'it'} any more)")
    if rep.get("keys_dropped"):
        lost.append(f"{plural(rep['keys_dropped'], 'signing key')} that did not verify")
    if lost:
        parts.append(message("Lost: " + "; ".join(lost) + ".", "error", "repair-lost"))
    if rep.get("damage"):
        parts.append(message("What was damaged:", "info", "repair-damage-lead"))
        parts.append(table(["File", "What was wrong"],
                           [(d.get("file"), d.get("what")) for d in rep["damage"]],
                           "repair-damage"))
    return '<div class="pz-repair" data-testid="repair-report">' + "".join(parts) + "</div>"


class FilesView:
    """Export, the import dialog's button, the palace list, and checking and repairing the
    open palace's files."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # The page saves the file: a click on .pz-export sends the worker "export-file", and
        # the worker streams the palace's JSON to the page in pieces (web/main.js), never
        # holding its whole text (a download widget base64-encodes it through the document).
        self.download = pn.widgets.Button(name="Download palace JSON", button_type="primary",
                                          css_classes=["pz-export"])
        self.download.on_click(lambda _e: self._exporting())
        self.filename = "palace.json"  # what the file will be called (see export_filename)
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
        # Check and repair: the repair's confirmation buttons are there from the start and
        # usable only while it asks (parts shown later do not reach the worker's page).
        self.damage = html_pane("damage")
        self.check = pn.widgets.Button(name="Check files", css_classes=["pz-palace-check"])
        self.repair = pn.widgets.Button(name="Repair…", button_type="warning", disabled=True,
                                        css_classes=["pz-palace-repair"])
        self.repair_yes = pn.widgets.Button(name="Yes, repair", button_type="danger",
                                            disabled=True,
                                            css_classes=["pz-palace-repair-yes"])
        self.repair_no = pn.widgets.Button(name="Cancel", disabled=True,
                                           css_classes=["pz-palace-repair-no"])
        self.repair_note = html_pane("repair-note")
        self.check_report = html_pane("check-report")
        self.open.on_click(self._open)
        self.new.on_click(self._new)
        self.delete.on_click(self._delete)
        self.check.on_click(self._check)
        self.repair.on_click(lambda _e: self._asking(True))
        self.repair_no.on_click(lambda _e: self._asking(False, ""))
        self.repair_yes.on_click(self._repair)
        self.damaged = False  # the open palace's files are damaged (storage_status)
        self.shown_for: str | None = None  # the palace the check and repair notes are about
        library = getattr(ctx.bridge, "library", None) is not None
        self.view = pn.Column(
            self.damage,
            pn.pane.HTML("<h3>Import</h3>"), pn.pane.HTML(IMPORT_BUTTON,
                                                          sizing_mode="stretch_width"),
            pn.pane.HTML("<h3>Export</h3><p>The whole palace as one JSON file, to keep or to "
                         "open in another browser or with the palazzo command line.</p>"),
            self.download, self.note,
            pn.pane.HTML("<h3>Palaces</h3>"), pn.Row(self.palaces, self.open),
            pn.Row(self.new_name, self.new), pn.Row(self.confirm, self.delete),
            self.palace_note,
            pn.pane.HTML("<h3>Check and repair</h3><p>Read every file of the open palace "
                         "and verify it (nothing is changed); when files are damaged, "
                         "repair keeps what still verifies and moves the damaged files "
                         "aside.</p>", visible=library),
            pn.Row(self.check, self.repair, self.repair_yes, self.repair_no),
            self.repair_note, self.check_report, sizing_mode="stretch_width")
        for w in (self.palaces, self.open, self.new_name, self.new, self.confirm, self.delete,
                  self.check, self.repair, self.repair_yes, self.repair_no):
            w.visible = library
        ctx.on_refresh(self.refresh)
        self.refresh()

    def refresh(self) -> None:
        """Reload the palace list and the export's file name."""
        self.filename = export_filename(self.ctx.call("palace_status")["name"])
        if getattr(self.ctx.bridge, "library", None) is None:
            return
        out = self.ctx.call("list_palaces")
        self.palaces.options = out["palaces"]
        if out["open"] in out["palaces"]:
            self.palaces.value = out["open"]
        self.filename = export_filename(out["open"] or "palace")
        status = self.ctx.call("storage_status")["status"]
        self.damage.object = damage_html(status)
        self.damaged = bool(status and status.get("damaged"))
        if out["open"] != self.shown_for:
            # Another palace: what was checked or asked was about the one before.
            self.shown_for = out["open"]
            self.check_report.object = ""
            self._asking(False, "")
        elif self.repair_yes.disabled:  # (while asking, the answer decides)
            self.repair.disabled = not self.damaged

    def _asking(self, on: bool, note: str | None = None) -> None:
        """Ask whether to repair (on: "Yes, repair" and "Cancel" usable, the question shown)
        or stop asking (``note`` replaces the question). Returns None."""
        self.repair_yes.disabled = self.repair_no.disabled = not on
        self.repair.disabled = on or not self.damaged
        if on:
            self.repair_note.object = (
                f'<p class="pz-msg pz-info" data-testid="repair-question">'
                f"{esc(REPAIR_QUESTION)}</p>")
        elif note is not None:
            self.repair_note.object = note

    async def _check(self, _event: Any = None) -> None:
        """Check every file of the open palace and show what was found."""
        self.check_report.object = message("Reading every file…", "info", "check-summary")
        try:
            out = await self.ctx.library_call("check_palace", {})
        except PalazzoError as err:
            self.check_report.object = message(str(err), "error", "check-summary")
            return
        self.check_report.object = check_html(out)

    async def _repair(self, _event: Any = None) -> None:
        """Repair the open palace (after "Yes, repair") and show what was done."""
        self.repair_yes.disabled = self.repair_no.disabled = True
        self.repair_note.object = message("Repairing…", "info", "repair-note")
        try:
            out = await self.ctx.library_call("repair_palace", {})
        except PalazzoError as err:
            self._asking(False, message(str(err), "error", "repair-note"))
            return
        self.check_report.object = ""
        self.ctx.changed()
        self._asking(False, repair_html(out))

    def _exporting(self) -> None:
        """Say the file is being written (the page saves it when the worker has sent it)."""
        self.note.object = message(f"Writing {self.filename}…", "info", "files-note")

    def exported(self, name: str, size: int, error: str | None = None) -> None:
        """Say the page saved palace file ``name`` of ``size`` bytes, or why it could not
        (``error``). Returns None."""
        if error:
            self.note.object = message(f"The palace file was not saved: {error}", "error",
                                       "files-note")
        else:
            self.note.object = message(f"Saved {name} ({size / 1e6:,.1f} MB) to your "
                                       "downloads.", "ok", "files-note")

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
        self.palace_note.object = message(f"Opened {out['palace']}{_why_read_only(out)}.",
                                          "ok", "palace-note")
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
        if not name:  # said in words, not the schema's "name is empty"
            self.palace_note.object = message(
                "Type a name for the new palace in “New palace name” first.", "error",
                "palace-note")
            return
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
        if not name:
            self.palace_note.object = message("Choose the palace to delete in “Palaces” "
                                              "first.", "error", "palace-note")
            return
        if self.confirm.value != name:  # the schema's "Confirm is empty", in words
            said = ("To delete it, type" if not self.confirm.value.strip() else
                    f"“{self.confirm.value}” is not its name: type")
            self.palace_note.object = message(
                f"{name} is not deleted. {said} the palace's name, {name}, exactly, in "
                "“Type the palace's name to delete it”, then press Delete palace.", "error",
                "palace-note")
            return
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
        self.palace_note.object = message(f"Deleted {name}; opened {nxt}{_why_read_only(out)}.",
                                          "ok", "palace-note")


def _why_read_only(out: dict[str, Any]) -> str:
    """Return " (read-only: …)" for an opened palace's status saying why, or ""."""
    st = out["status"]
    if st.get("damaged"):
        return " (read-only: its files are damaged; see below)"
    return " (read-only: open in another tab)" if st["read_only"] else ""
