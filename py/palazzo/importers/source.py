"""Recognising what a person dropped: which importer reads it, and what it is called.

A browser user drops a folder, a zip, a chat export, a database or a palace file without
saying what it is; :func:`recognise` looks at names and the first bytes (never the whole
source) and returns a :class:`Source` naming the importer, a sentence saying what was found,
and a name to suggest for the palace it may land in. :meth:`Source.plan` then reads and
checks the whole source with that importer (nothing is written while planning).

Kinds:

- ``palace`` — a palazzo palace JSON file (``{"format": "palazzo", …}``); it is not planned
  but loaded whole by the ``import`` operation.
- ``chats`` — ChatGPT or Claude ``conversations.json`` (bare, in its export folder or zip),
  an OpenCode ``opencode.db`` or its older JSON ``storage`` folder, a Slack export (folder or
  zip), a plain JSON/JSONL message list, a Claude Code, Codex CLI or Gemini CLI session file,
  a folder of only such ``.jsonl`` files, or one of the files an export holds beside its
  conversations (ChatGPT's ``shared_conversations.json``, claude.ai's ``projects.json`` and
  ``memories.json``).
- ``mempalace`` — a MemPalace palace folder (``chroma.sqlite3``, or a Rust ``palace.db``).
- ``graphpalace`` — a GraphPalace JSON export (``{"version", "exported_at", "data"}``).
- ``folder`` — anything else: the text files under a folder (or a zip of one, unpacked
  first by :func:`unpack_zip`), one wing, rooms by sub-folder.
"""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers import Plan, is_sqlite, usable_name
from palazzo.importers._files import irregular, open_regular
from palazzo.importers._zip import inflation

EXPORT_FILE = "conversations.json"
# What a zip of notes may inflate to, in all (a browser tab holds it in memory).
MAX_UNPACKED = 1 << 30
PEEK = 4096  # bytes read to tell JSON kinds apart

KINDS = ("palace", "chats", "mempalace", "graphpalace", "folder")
WHAT = {
    "palace": "a palazzo palace file",
    "chats": "a chat export",
    "mempalace": "a MemPalace palace",
    "graphpalace": "a GraphPalace export",
    "folder": "a folder of notes",
}


@dataclass(slots=True)
class Source:
    """One recognised source: ``kind`` (one of :data:`KINDS`), the ``path`` its importer
    reads, a ``label`` in words, and the palace ``name`` to suggest."""

    kind: str
    path: Path
    label: str
    name: str
    notes: list[str] = field(default_factory=list)

    def plan(self, palace: Any = None) -> Plan:
        """Return the checked plan importing this source (``palace``: the store a folder is
        compared with, so unchanged files are skipped); raises ImportRejected naming the
        problem, having written nothing. Not for ``palace`` files (one ``import`` call).
        Cost: one read of the whole source."""
        if self.kind == "chats":
            from palazzo.importers.chats import plan_chats

            return plan_chats(self.path, palace=palace)
        if self.kind == "mempalace":
            from palazzo.importers.mempalace import plan_mempalace

            return plan_mempalace(self.path)
        if self.kind == "graphpalace":
            from palazzo.importers.graphpalace import plan_graphpalace

            return plan_graphpalace(self.path)
        if self.kind == "folder":
            from palazzo.importers.folder import plan_index

            return plan_index(self.path, wing=self.name, palace=palace)
        raise ImportRejected(f"{self.path}: {WHAT[self.kind]} is loaded whole, not planned")


def _peek_json(path: Path) -> Any:
    """Return what the start of a JSON file says about its kind: "palace", "graphpalace",
    "chats" or None (not JSON we know). Reads :data:`PEEK` bytes; decides on the top-level
    keys seen there, so a huge file is never parsed to be recognised."""
    with open_regular(path) as f:
        head = f.read(PEEK).lstrip(b"\xef\xbb\xbf \t\r\n")
    if head.startswith(b"["):
        return "chats"
    if not head.startswith(b"{"):
        return None
    text = head.decode("utf-8", "replace")
    # Top-level keys come first in every exporter we know; a small file is parsed whole.
    if path.stat().st_size <= PEEK:
        try:
            doc = json.loads(text)
        except ValueError:
            doc = None
        if isinstance(doc, dict):
            if doc.get("format") == "palazzo":
                return "palace"
            if "data" in doc and "exported_at" in doc:
                return "graphpalace"
            return "chats"
    compact = text.replace(" ", "").replace("\n", "")
    if '"format":"palazzo"' in compact:
        return "palace"
    if '"exported_at"' in compact and '"data"' in compact:
        return "graphpalace"
    return "chats"


# What a binary file is, from its first bytes, for the one-line refusal of a file dropped
# alone that holds no text ("conversations.json: a PNG image, not JSON text"); the
# folder importer's rule (a NUL byte in the first 8 KiB) names the rest "a binary file".
MAGIC = ((b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"),
         (b"GIF8", "a GIF image"), (b"%PDF-", "a PDF document"),
         (b"RIFF", "a RIFF file (audio, video or a WebP image)"), (b"\x1f\x8b", "a gzip file"))
SNIFF = 8192


def binary_kind(path: Path) -> str | None:
    """Return what the file at ``path`` is when it is not text ("a PNG image", "a binary
    file"), else None. Cost: one read of :data:`SNIFF` bytes."""
    with open_regular(path) as f:
        head = f.read(SNIFF)
    for magic, what in MAGIC:
        if head.startswith(magic):
            return what
    return "a binary file" if b"\x00" in head else None


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def recognise(path: str | os.PathLike[str]) -> Source:
    """Return the :class:`Source` at ``path`` (a file or folder); raise ImportRejected when
    there is nothing to import (an empty folder, an unreadable file, a FIFO, socket or
    device: never opened, as opening a FIFO waits for a writer). Zips of notes are not
    unpacked here: their kind is ``folder`` with ``path`` the zip (see :func:`unpack_zip`).
    Cost: a listing of the folder and a few KB of its files."""
    root = Path(path)
    if not root.exists():
        raise ImportRejected(f"{root}: no such file or folder")
    try:
        special = None if root.is_dir() else irregular(root)
    except OSError as err:
        raise ImportRejected(f"{root.name}: cannot read: {err.strerror}") from None
    if special is not None:
        raise ImportRejected(f"{root.name}: {special}; only files and folders are imported")
    stem = usable_name(root.stem if root.is_file() else root.name) or "Imported"
    if root.is_dir():
        files = _files(root)
        if not files:
            raise ImportRejected(f"{root.name}: the folder is empty")
        names = {p.name for p in files}
        if "chroma.sqlite3" in names or "palace.db" in names:
            return Source("mempalace", root, WHAT["mempalace"], stem)
        if EXPORT_FILE in names or "opencode.db" in names:
            return Source("chats", root, WHAT["chats"], stem)
        from palazzo.importers import opencodejson, slack

        if slack.is_slack_export(root):
            return Source("chats", root, "a Slack export", stem)
        if opencodejson.is_storage(root):
            return Source("chats", root, "OpenCode's session storage", stem)
        # Claude Code's ~/.claude/projects, Codex's ~/.codex/sessions, Gemini CLI's
        # ~/.gemini/tmp: session files (and what those programs keep beside them).
        from palazzo.importers.chats import session_aside, session_file

        sessions = [p for p in files if session_file(p)]
        others = [p for p in files if not session_file(p) and not p.name.startswith(".")
                  and not session_aside(p)]
        if len(sessions) > 1 and not others:
            return Source("chats", root, f"{len(sessions)} chat session files", stem)
        if len(files) == 1 and files[0].suffix.lower() in (".json", ".jsonl", ".zip", ".db",
                                                          ".sqlite", ".sqlite3"):
            return recognise(files[0])
        return Source("folder", root, f"a folder of {len(files)} files", stem)
    if is_sqlite(root):
        if root.name in ("chroma.sqlite3", "palace.db", "knowledge_graph.sqlite3"):
            return Source("mempalace", root, WHAT["mempalace"], stem)
        return Source("chats", root, "an OpenCode database", stem)
    if zipfile.is_zipfile(root):
        try:
            with zipfile.ZipFile(root) as z:
                members = [PurePosixPath(n).name for n in z.namelist() if not n.endswith("/")]
        except (zipfile.BadZipFile, OSError, ValueError) as err:
            raise ImportRejected(f"{root.name}: cannot read the archive: {err}") from None
        if EXPORT_FILE in members:
            return Source("chats", root, "a chat export (zip)", stem)
        if {"channels.json", "users.json"} <= set(members):
            return Source("chats", root, "a Slack export (zip)", stem)
        if "chroma.sqlite3" in members:
            return Source("mempalace", root, "a MemPalace palace (zip)", stem)
        return Source("folder", root, f"a zip of {len(members)} files", stem)
    suffix = root.suffix.lower()
    json_named = suffix in (".json", ".jsonl")
    what = binary_kind(root)
    if what is not None:  # imported, it would make an empty palace: refused, nothing written
        raise ImportRejected(
            f"{root.name}: {what}, not {'JSON ' if json_named else ''}text, so there is "
            "nothing in it to import (chat exports, palace files and notes are text).")
    if root.name == EXPORT_FILE and _peek_json(root) is None:
        raise ImportRejected(f"{root.name}: not JSON, so not a chat export: a chat export's "
                             f"{EXPORT_FILE} starts with [ or {{.")
    if suffix == ".jsonl":
        return Source("chats", root, "a chat log (JSONL)", stem)
    if suffix == ".json":
        kind = _peek_json(root)
        if kind is not None:
            label = WHAT[kind] if kind != "chats" else (
                "a chat export" if root.name == EXPORT_FILE else "a chat file (JSON)")
            return Source(kind, root, label, stem)
    return Source("folder", root, "a text file", stem)


def unpack_zip(path: Path, dest: Path, limit: int = MAX_UNPACKED) -> Path:
    """Unpack the zip at ``path`` into folder ``dest`` and return the folder to import (the
    single top-level folder when the zip holds one, else ``dest``). Members that would land
    outside ``dest`` (absolute or ``..`` paths) are refused, and so is an archive whose
    members add up to more than ``limit`` bytes or one that passes a zip bomb's bound
    (:func:`palazzo.importers._zip.inflation`): first by the sizes its directory declares,
    before anything is written, then counted while inflating; either raises ImportRejected.
    Cost: one pass over the archive, 1 MiB at a time."""
    total = 0
    try:
        size = path.stat().st_size
        with zipfile.ZipFile(path) as z:
            members = [i for i in z.infolist() if not i.is_dir()]
            declared = sum(i.file_size for i in members)
            if declared > limit:
                raise ImportRejected(f"{path.name}: inflates to more than {limit} bytes (the "
                                     f"archive says {declared}); refusing to unpack it")
            bounds = [inflation(i, size, f"{path.name}!{i.filename}") for i in members]
            for info, bound in zip(members, bounds, strict=True):
                rel = PurePosixPath(info.filename)
                if rel.is_absolute() or ".." in rel.parts:
                    raise ImportRejected(f"{path.name}!{info.filename}: a path outside the "
                                         "archive; nothing was imported")
                target = dest.joinpath(*rel.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                done = 0
                with z.open(info) as src, target.open("wb") as out:
                    while block := src.read(1 << 20):
                        total += len(block)
                        done += len(block)
                        if total > limit:
                            raise ImportRejected(
                                f"{path.name}: inflates to more than {limit} bytes; refusing "
                                "to unpack further")
                        bound.check(done)
                        out.write(block)
    except (zipfile.BadZipFile, OSError, ValueError, NotImplementedError, RuntimeError) as err:
        raise ImportRejected(f"{path.name}: cannot read the archive: {err}") from None
    tops = list(dest.iterdir())
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else dest
