"""Import conversation exports as conversation DAGs (operation ``import_conversation``).

Shapes, detected from the content (not the file name):

- **plain JSON**: a list of ``{role, content, timestamp?}`` messages, or an object with such
  a ``messages`` list (and optionally ``conversation``/``id`` and ``title``);
- **JSONL**: one ``{role, content, timestamp?}`` object a line;
- **ChatGPT** ``conversations.json`` (the file, the unzipped export folder or the export
  ``.zip``): a list of conversations with ``title``, ``create_time`` and a ``mapping`` of
  nodes ``{message: {author: {role}, content: {content_type, parts}, create_time,
  recipient}, parent, children}``. The node tree is kept: regenerated and edited answers
  become branches of the DAG (``parents``), not a flattened list;
- **Claude** ``conversations.json``: a list of ``{uuid, name, chat_messages: [{uuid,
  sender: human|assistant, text, content?, created_at, parent_message_uuid?}]}``. The text is
  the ``content`` text blocks when there are any (``thinking`` and tool blocks left out),
  else ``text``. When messages name their parents, edits and regenerations are kept as
  branches (parents are put before children whatever the list order); an export without
  parent links is read in list order;
- **OpenCode** session database (``opencode.db``, SQLite): tables ``session`` (``id``,
  ``title``), ``message`` (``id``, ``session_id``, ``time_created``, ``data`` JSON with
  ``role`` and ``time.created`` in ms) and ``part`` (``id``, ``message_id``, ``data`` JSON
  with ``type``/``text``); a message's text is its ``text`` parts in part-id order.

Kept: user and assistant text (``human``→user; ``model``/``ai``/``bot``→assistant). Left
out, and counted in the summary with the reason: system, developer and tool messages, tool
calls, hidden and synthetic text, non-text content (images, reasoning, code runs) and
messages left with no text. A conversation with nothing left is skipped.

Conversation names are ``chatgpt:<conversation id>``, ``claude:<uuid>``,
``opencode:<session id>``, or for plain JSON/JSONL the ``conversation`` field, else the file
name without its extension; the title goes to the room's description (an ``add_room`` call
before the import, which never changes an existing room). So importing the same export again
adds nothing, even after a conversation was renamed.
"""

from __future__ import annotations

import os
import re
import unicodedata
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.importers import (
    Plan,
    PlanBuilder,
    check_unicode,
    is_sqlite,
    open_sqlite,
    require_columns,
    rows,
    table_columns,
)
from palazzo.importers._files import irregular, read_regular, regular_files
from palazzo.importers._zip import inflation
from palazzo.importers.chatgpt import read_chatgpt
from palazzo.importers.claude import read_claude
from palazzo.importers.opencodejson import message_nodes
from palazzo.importers.transcript import (
    Message,
    Transcript,
    epoch,
    json_document,
    message_text,
    parents_first,
)
from palazzo.memory.conversation import WING, normalise_text

ROLE_MAP = {"user": "user", "human": "user", "assistant": "assistant", "model": "assistant",
            "ai": "assistant", "bot": "assistant"}
SKIPPED_ROLES = {"system", "developer", "tool", "function", "ipython"}
# Tool messages are left out unless the reader kept them as one of these kinds: what code
# the assistant ran printed (ChatGPT's code interpreter, Codex's shell).
TOOL_KINDS = {"code_output"}
EXPORT_FILE = "conversations.json"
MAX_EXPORT_BYTES = 1 << 30  # an export (or its zip member, inflated) may hold at most 1 GiB

__all__ = ["plan_chats", "plan_transcripts", "room_names", "slug"]


def _role(raw: Any, where: str) -> tuple[str | None, str | None]:
    """Return (palazzo role, None) or (None, reason to skip)."""
    if not isinstance(raw, str):
        raise ImportRejected(f"{where}: role must be a string, got {raw!r}")
    key = raw.strip().lower()
    if key in ROLE_MAP:
        return ROLE_MAP[key], None
    if key in SKIPPED_ROLES:
        return None, f"{key} message"
    return None, f"unknown role {raw!r}"


# -- readers: each returns the conversations it found ------------------------------------------

def _plain(messages: list[Any], name: str, title: str, where: str) -> Transcript:
    conv = Transcript(name, title, where)
    previous: str | None = None
    for i, m in enumerate(messages):
        at = f"{where} message {i}"
        if not isinstance(m, dict) or "role" not in m or "content" not in m:
            raise ImportRejected(f"{at}: a message must be an object with role and content")
        text, other = message_text(m["content"], at)
        node = Message(str(i), previous, m["role"], text, epoch(m.get("timestamp"), at), at)
        if not text.strip() and other:
            node.skip = "no text (non-text content only)"
        conv.nodes.append(node)
        previous = node.key
    return conv


def _opencode(path: Path, skipped: list[tuple[str, str]]) -> Iterator[Transcript]:
    """Yield the sessions of an OpenCode database; tables the driver cannot read are
    appended to ``skipped`` as (item, reason)."""
    conn = open_sqlite(path)
    try:
        unreadable: list[tuple[str, str]] = []
        tables = table_columns(conn, unreadable)
        skipped.extend((f"{path} table {t!r}", reason) for t, reason in unreadable)
        require_columns(path, tables, "message", ("id", "session_id", "time_created", "data"))
        require_columns(path, tables, "part", ("id", "message_id", "data"))
        titles: dict[str, str] = {}
        if "session" in tables and {"id", "title"} <= tables["session"]:
            titles = {r["id"]: r["title"] or "" for r in
                      rows(conn, path, "SELECT id, title FROM session")}
        parts: dict[str, list[tuple[str, Any]]] = {}
        for r in rows(conn, path, "SELECT id, message_id, data FROM part ORDER BY message_id, id"):
            parts.setdefault(r["message_id"], []).append(
                (r["id"], _json(r["data"], f"{path} part {r['id']!r}")))
        messages = rows(conn, path, "SELECT id, session_id, time_created, data FROM message "
                                    "ORDER BY session_id, time_created, id")
    finally:
        conn.close()
    conv: Transcript | None = None
    for r in messages:
        at = f"{path} message {r['id']!r}"
        if conv is None or conv.name != f"opencode:{r['session_id']}":
            if conv is not None:
                yield conv
            sid = r["session_id"]
            conv = Transcript(f"opencode:{sid}", titles.get(sid, ""), f"{path} session {sid!r}")
        data = _json(r["data"], at)
        if not isinstance(data, dict):
            raise ImportRejected(f"{at}: data must be a JSON object")
        created = data.get("time", {}).get("created") if isinstance(data.get("time"), dict) \
            else None
        stamp = epoch(created if created is not None else r["time_created"], at, millis=True)
        message = {**data, "id": r["id"]}
        for pid, part in parts.get(r["id"], []):
            if not isinstance(part, dict):
                raise ImportRejected(f"{path} part {pid!r}: data must be a JSON object")
        listed = [(f"{path} part {pid!r}", {"id": pid, **part})
                  for pid, part in parts.get(r["id"], [])]
        # The same records as OpenCode 1.1's JSON storage: read the same way.
        for node in message_nodes(message, listed, stamp, at):
            node.parent = conv.nodes[-1].key if conv.nodes else None
            conv.nodes.append(node)
    if conv is not None:
        yield conv


def _json(value: Any, where: str) -> Any:
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    if not isinstance(value, str):
        raise ImportRejected(f"{where}: data must be JSON text")
    doc = jsontext.loads(value, f"{where}: data", ImportRejected)
    check_unicode(doc, f"{where}: data")
    return doc


# -- detection ----------------------------------------------------------------------------------

def _load_text(path: Path, limit: int) -> tuple[str, str]:
    """Return (JSON or JSONL text, where it came from) of a file, folder or export zip.

    At most ``limit`` bytes are read: a larger file, or a zip member that inflates past it
    (counted while inflating, not taken from the archive's header), raises ImportRejected
    naming the member and the limit, as does any archive the zip reader refuses (bad CRC,
    encrypted member, unknown compression method, truncated data).
    """
    if path.is_dir():
        inner = path / EXPORT_FILE
        if inner.is_file():
            return _load_text(inner, limit)
        db = path / "opencode.db"
        if db.is_file():
            raise _Sqlite(db)
        raise ImportRejected(f"{path}: no {EXPORT_FILE} or opencode.db in this folder")
    if not path.is_file():
        try:
            special = irregular(path)
        except OSError:
            special = None
        raise ImportRejected(f"{path}: {special}; only files and folders are read" if special
                             else f"{path}: no such file")
    if is_sqlite(path):
        raise _Sqlite(path)
    if zipfile.is_zipfile(path):
        data, where = _read_zip(path, limit)
    else:
        where = str(path)
        try:
            size = path.stat().st_size
            if size > limit:
                raise ImportRejected(f"{where}: {size} bytes is more than the {limit} bytes an "
                                     "export may have")
            data = read_regular(path)
        except OSError as err:
            raise ImportRejected(f"{where}: cannot read: {err.strerror}") from None
        _no_nul(data, 0, where)
    try:
        return data.decode("utf-8-sig"), where
    except UnicodeDecodeError as err:
        raise ImportRejected(f"{where}: not UTF-8 text (byte {err.start})") from None


def _no_nul(block: bytes | bytearray, offset: int, where: str) -> None:
    """Raise ImportRejected when ``block`` (read at ``offset``) holds a NUL byte: JSON text
    never does (inside a string it must be escaped), so a file of zeros — the usual zip
    bomb — is refused at its first block instead of after inflating and parsing it."""
    at = block.find(b"\x00")
    if at >= 0:
        raise ImportRejected(f"{where}: not JSON text (a NUL byte at offset {offset + at})")


def _zip_errors() -> tuple[type[BaseException], ...]:
    """The exceptions the standard zip reader raises on a damaged or unsupported archive."""
    errors: list[type[BaseException]] = [
        zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, NotImplementedError, EOFError,
        OSError, ValueError, zlib.error]
    try:
        import lzma
    except ImportError:  # Pyodide ships without lzma
        pass
    else:
        errors.append(lzma.LZMAError)
    return tuple(errors)


def _read_zip(path: Path, limit: int, file: str = EXPORT_FILE,
              required: bool = True) -> Any:
    """Return (bytes of the archive's ``file``, where) inflating at most ``limit`` bytes and
    no more than a zip bomb's bound (:func:`palazzo.importers._zip.inflation`: the sizes
    the archive declares are checked first, the bytes as they inflate); a file other than
    ``conversations.json`` is looked for beside that one. None when it is missing and not
    ``required``. Cost: one pass over the member, 1 MiB at a time; memory its size."""
    where = str(path)
    try:
        with zipfile.ZipFile(path) as z:
            names = sorted((n for n in z.namelist() if n.rsplit("/", 1)[-1] == file),
                           key=len)
            if file != EXPORT_FILE:
                export = sorted((n for n in z.namelist()
                                 if n.rsplit("/", 1)[-1] == EXPORT_FILE), key=len)
                folder = export[0][: -len(EXPORT_FILE)] if export else ""
                names = [n for n in names if n == folder + file]
            if not names:
                if not required:
                    return None
                raise ImportRejected(f"{path}: the archive has no {file}")
            where = f"{path}!{names[0]}"
            info = z.getinfo(names[0])
            bound = inflation(info, path.stat().st_size, where, limit)
            data = bytearray()
            with z.open(info) as member:
                while block := member.read(1 << 20):
                    _no_nul(block, len(data), where)
                    data += block
                    if len(data) > limit:
                        raise ImportRejected(f"{where}: inflates to more than {limit} bytes, "
                                             "the most an export may have; refusing to read "
                                             "further")
                    bound.check(len(data))
    except _zip_errors() as err:
        raise ImportRejected(f"{where}: cannot read the archive: {err}") from None
    return data, where


class _Sqlite(Exception):  # noqa: N818 - control flow, never leaves this module
    def __init__(self, path: Path) -> None:
        self.path = path


def _conversations(path: Path, name: str | None, limit: int,
                   skipped: list[tuple[str, str]]) -> tuple[str, list[Transcript]]:
    """Return (format, conversations) of the source at ``path``; parts of the source left
    out as a whole (unreadable tables) are appended to ``skipped``."""
    from palazzo.importers import opencodejson, slack

    if path.is_dir() and not (path / EXPORT_FILE).is_file() \
            and not (path / "opencode.db").is_file():
        if slack.is_slack_export(path):
            return "slack", slack.read_slack(path, limit, skipped)
        if opencodejson.is_storage(path):
            return "opencode-json", opencodejson.read_storage(path, limit, skipped)
        return _session_folder(path, limit, skipped)
    if path.is_file() and zipfile.is_zipfile(path) and slack.is_slack_export(path):
        return "slack", slack.read_slack(path, limit)
    try:
        text, where = _load_text(path, limit)
    except _Sqlite as db:
        return "opencode", list(_opencode(db.path, skipped))
    stem = name or Path(where.rsplit("!", 1)[-1]).stem
    # The first non-blank lines tell JSONL from JSON; the text is not split into lines to
    # find them (a line a string: 25 bytes a byte for a run of blank lines).
    lines = _first_lines(text, 5)
    if where.endswith(".jsonl") or (len(lines) > 1 and not lines[0].startswith("[")
                                    and _all_objects(lines)):
        session_file = path if path.is_file() and not zipfile.is_zipfile(path) else None
        return _jsonl(text, where, stem, session_file, limit)
    doc = jsontext.loads(text, where, ImportRejected)
    check_unicode(doc, where)
    fmt, convs = _document(doc, where, stem)
    if path.is_dir() or zipfile.is_zipfile(path):  # a whole export: the files beside it too
        for extra_fmt, extra in _companions(path, limit):
            fmt = f"{fmt}+{extra_fmt}"
            convs.extend(extra)
    return fmt, convs


def _document(doc: Any, where: str, stem: str) -> tuple[str, list[Transcript]]:
    """Return (format, conversations) of one parsed JSON document, told by its shape."""
    from palazzo.importers import chatgptshared, claudeai, geminicli

    if isinstance(doc, dict):
        if isinstance(doc.get("mapping"), dict):
            return "chatgpt", list(read_chatgpt([doc], where))
        if isinstance(doc.get("chat_messages"), list):
            return "claude", read_claude([doc], where)
        if geminicli.sniff_json(doc):
            return "gemini-cli", geminicli.read_gemini_cli(doc, where)
        if claudeai.sniff_memories(doc):
            return "claude-memories", claudeai.read_memories(doc, where)
        if isinstance(doc.get("messages"), list):
            conv_name = doc.get("conversation") or doc.get("id") or stem
            title = doc.get("title") if isinstance(doc.get("title"), str) else ""
            return "json", [_plain(doc["messages"], str(conv_name), title, where)]
        raise ImportRejected(f"{where}: an object export needs 'messages', 'mapping' "
                             "(ChatGPT) or 'chat_messages' (Claude)")
    if not isinstance(doc, list):
        raise ImportRejected(f"{where}: expected a list of messages or conversations")
    if not doc:
        return "json", []
    first = doc[0]
    if isinstance(first, dict) and "mapping" in first:
        return "chatgpt", list(read_chatgpt(doc, where))
    if isinstance(first, dict) and "chat_messages" in first:
        return "claude", read_claude(doc, where)
    for fmt, sniff, read in ((
            "chatgpt-shared", chatgptshared.sniff_shared, chatgptshared.read_shared),
            ("claude-projects", claudeai.sniff_projects, claudeai.read_projects),
            ("claude-memories", claudeai.sniff_memories, claudeai.read_memories)):
        if sniff(doc):
            return fmt, read(doc, where)
    if isinstance(first, dict) and "role" in first:
        return "json", [_plain(doc, stem, "", where)]
    raise ImportRejected(f"{where} item 0: not a message ({{role, content}}), a ChatGPT "
                         "conversation (mapping) or a Claude conversation (chat_messages)")


# Files a ChatGPT or claude.ai export holds beside conversations.json, read with it.
COMPANIONS = ("shared_conversations.json", "projects.json", "memories.json")


def _companions(path: Path, limit: int) -> list[tuple[str, list[Transcript]]]:
    """Return (format, conversations) of each :data:`COMPANIONS` file beside the export's
    ``conversations.json`` (in the folder ``path``, or in the zip ``path`` next to that
    member); a file of another shape is read as what it is. Cost: one read of each."""
    out = []
    for file in COMPANIONS:
        if path.is_dir():
            found = path / file
            if not found.is_file():
                continue
            text, where = _load_text(found, limit)
        else:
            member = _read_zip(path, limit, file, required=False)
            if member is None:
                continue
            text, where = member
        out.append(_document(json_document(text, where), where, Path(file).stem))
    return out


def _session_formats() -> list[tuple[str, Any]]:
    """Return the JSONL session formats as (format, sniff): each ``sniff`` looks at a file's
    first records (Claude Code, Codex CLI, Gemini CLI)."""
    from palazzo.importers import claudecode, codex, geminicli

    return [("claude-code", claudecode.sniff), ("codex", codex.sniff),
            ("gemini-cli", geminicli.sniff)]


def _read_session(fmt: str, lines: list[str], where: str, path: Path | None,
                  limit: int) -> list[Transcript]:
    """Return the transcripts of a session file of format ``fmt``; a Claude Code session
    read from ``path`` brings its subagents' files (``<session>/subagents/``) as branches."""
    if fmt == "codex":
        from palazzo.importers.codex import read_codex

        return read_codex(lines, where)
    if fmt == "gemini-cli":
        from palazzo.importers.geminicli import read_gemini_cli

        return read_gemini_cli(lines, where)
    from palazzo.importers.claudecode import read_claude_code, subagent_files

    agents = {}
    left_out: list[tuple[str, str]] = []
    for agent, file in (subagent_files(path, left_out) if path is not None else {}).items():
        text, at = _load_text(file, limit)
        agents[agent] = (text.split("\n"), at)
    out = read_claude_code(lines, where, agents)
    out[0].skipped.extend(left_out)
    return out


def _jsonl(text: str, where: str, stem: str, path: Path | None = None,
           limit: int = MAX_EXPORT_BYTES) -> tuple[str, list[Transcript]]:
    """Return (format, conversations) of JSONL text (read from ``path`` when it is a file): a
    program's session file when its first records say which (Claude Code, Codex CLI), else
    one plain message a line."""
    lines = text.splitlines()
    first: list[Any] = []
    for line in lines:
        if len(first) == 5:
            break
        if line.strip():
            try:
                first.append(jsontext.loads(line, "line", ImportRejected))
            except ImportRejected:
                break  # the reader below names the line
    for fmt, sniff in _session_formats():
        if sniff(first):
            return fmt, _read_session(fmt, lines, where, path, limit)
    messages = [jsontext.loads(ln, f"{where} line {i + 1}", ImportRejected)
                for i, ln in enumerate(lines) if ln.strip()]
    check_unicode(messages, where)
    return "jsonl", [_plain(messages, stem, "", where)]


def _session_folder(path: Path, limit: int, skipped: list[tuple[str, str]]
                    ) -> tuple[str, list[Transcript]]:
    """Return (format, conversations) of a folder of JSONL session files, as Claude Code
    (``~/.claude/projects``) and Codex (``~/.codex/sessions``) keep them: every ``*.jsonl``
    under it, in path order. A session split over several files (a resumed session, a
    subagent's sidechain) is joined into one conversation by its name; a message repeated
    in a later file is counted, not added twice. At most ``limit`` bytes in all. A session
    file that is not a regular file (a FIFO, a socket, a device) is never opened: it is
    appended to ``skipped`` as (item, reason). Cost: one read of every file."""
    files, left = regular_files(sorted(p for p in path.rglob("*") if session_file(p)
                                       and not p.is_dir() and not _subagent(p)))
    skipped.extend((str(p), why) for p, why in left)
    if not files:
        raise ImportRejected(f"{path}: no {EXPORT_FILE}, opencode.db or .jsonl session files "
                             "in this folder")
    total = 0
    formats: set[str] = set()
    joined: dict[str, Transcript] = {}
    for file in files:
        total += file.stat().st_size
        if total > limit:
            raise ImportRejected(f"{path}: more than the {limit} bytes an import may read")
        text, where = _load_text(file, limit)
        if file.suffix.lower() == ".jsonl":
            fmt, convs = _jsonl(text, where, file.stem, file, limit)
        else:  # Gemini CLI before 0.30 wrote one JSON document a session
            doc = jsontext.loads(text, where, ImportRejected)
            check_unicode(doc, where)
            fmt, convs = _document(doc, where, file.stem)
        formats.add(fmt)
        for conv in convs:
            into = joined.get(conv.name)
            if into is None:
                joined[conv.name] = conv
                continue
            seen = {n.key for n in into.nodes}
            for node in conv.nodes:
                if node.key in seen:
                    into.skipped.append((node.where, "repeated in another file of the session"))
                else:
                    into.nodes.append(node)
            into.skipped.extend(conv.skipped)
            into.title = into.title or conv.title
    for conv in joined.values():
        conv.nodes = parents_first(conv.nodes, conv.where)
    return "+".join(sorted(formats)), list(joined.values())


def session_file(file: Path) -> bool:
    """Whether ``file`` is a chat program's session file by its name: ``*.jsonl`` (Claude
    Code, Codex, Gemini CLI), or Gemini CLI's older ``chats/session-*.json``."""
    name = file.name.lower()
    return name.endswith(".jsonl") or (file.parent.name == "chats"
                                       and name.startswith("session-") and name.endswith(".json"))


def session_aside(file: Path) -> bool:
    """Whether ``file`` is one a program keeps beside its session files that holds no
    conversation of its own: Claude Code's subagent notes, Gemini CLI's ``logs.json`` (the
    lines typed) and ``checkpoint-*.json`` (a copy of a session's history)."""
    name = file.name
    return (name == "logs.json" or (name.startswith("checkpoint-") and name.endswith(".json"))
            or (file.parent.name == "subagents" and name.endswith(".meta.json")))


def _subagent(file: Path) -> bool:
    """Whether ``file`` is a Claude Code subagent's file next to its session's file (read
    with that session, as a branch)."""
    return (file.parent.name == "subagents" and file.name.startswith("agent-")
            and file.parent.parent.with_suffix(".jsonl").is_file())


_NOT_SPACE = re.compile(r"\S")
# Where str.splitlines cuts a line.
_LINE_END = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def _first_lines(text: str, count: int) -> list[str]:
    """Return the first ``count`` lines of ``text`` that are not blank, each from its first
    character that is not whitespace, without splitting the rest of the text. Cost: one
    scan of the text up to the last line returned; no object for a skipped blank line."""
    out: list[str] = []
    at = 0
    while len(out) < count and (start := _NOT_SPACE.search(text, at)) is not None:
        end = _LINE_END.search(text, start.start())
        at = end.start() if end is not None else len(text)
        out.append(text[start.start():at])
    return out


def _all_objects(lines: list[str]) -> bool:
    """Whether the first five lines each parse as a JSON object (the JSONL sniff; depth is
    checked before parsing, so a deeply nested line is simply "not JSONL")."""
    for line in lines[:5]:
        try:
            if not isinstance(jsontext.loads(line, "line", ImportRejected), dict):
                return False
        except ImportRejected:
            return False
    return True


# -- planning -----------------------------------------------------------------------------------

def _messages(conv: Transcript, builder: PlanBuilder) -> list[dict[str, Any]]:
    """Return the kept messages of ``conv`` with ``parents`` where the default (the previous
    message) would be wrong; record every left-out message in the builder."""
    index: dict[str, int] = {}  # source key -> position among kept messages
    nearest: dict[str, str | None] = {}  # source key -> key of the nearest kept ancestor
    out: list[dict[str, Any]] = []
    for node in conv.nodes:
        up = nearest.get(node.parent) if node.parent is not None else None
        role, reason = (None, node.skip) if node.skip else _role(node.role, node.where)
        if role is None and not node.skip and node.kind in TOOL_KINDS \
                and str(node.role).strip().lower() == "tool":
            role, reason = "tool", None  # a tool's output the reader chose to keep
        text = normalise_text(node.text)
        if role is not None and not text:
            reason = "empty message"
        if reason is not None:
            if not node.silent:
                builder.skip(node.where, reason)
            nearest[node.key] = up
            continue
        msg: dict[str, Any] = {"role": role, "content": text}
        if node.timestamp is not None:
            msg["timestamp"] = node.timestamp
        if node.kind != "text":
            msg["kind"] = node.kind
        parents = [index[up]] if up is not None else []
        if parents != ([len(out) - 1] if out else []):
            msg["parents"] = parents
        index[node.key] = len(out)
        nearest[node.key] = node.key
        out.append(msg)
    return out


def plan_chats(path: str | os.PathLike[str], name: str | None = None,
               max_bytes: int = MAX_EXPORT_BYTES, palace: Any = None,
               check: bool = True) -> Plan:
    """Return the plan importing every conversation of the export at ``path``.

    One ``import_conversation`` call a conversation, after an ``add_room`` naming its room
    (see :func:`room_names`: the title, slugged, with the source's id kept as the room's
    ``source``). ``name`` names the conversation of a plain JSON/JSONL file (default: the
    file name without extension). ``palace`` (a Palace or PalaceStore, or None for a new
    palace) is the palace the plan goes into: a conversation imported before keeps its
    room whatever it is titled now, so importing again adds nothing. ``max_bytes`` caps
    what is read (1 GiB; for a zip, what its ``conversations.json`` inflates to). The whole
    export is read and checked first; a malformed one raises ImportRejected naming the file
    and the conversation or message. Cost: one pass over the export; memory proportional
    to its text. ``check`` False: the calls are not checked here (:class:`PlanBuilder`).
    """
    source = Path(path)
    left_out: list[tuple[str, str]] = []
    fmt, conversations = _conversations(source, name, max_bytes, left_out)
    return plan_transcripts(conversations, str(source), fmt, palace, left_out, check)


def plan_transcripts(conversations: list[Transcript], source: str, fmt: str,
                     palace: Any = None, left_out: list[tuple[str, str]] | None = None,
                     check: bool = True) -> Plan:
    """Return the plan importing ``conversations`` (as a reader returned them) into
    ``palace``, as :func:`plan_chats` does after reading: roles judged, text normalised,
    left-out messages counted by reason (with the source-level ``left_out`` items), rooms
    named by :func:`room_names`. ``source`` and ``fmt`` go into the summary. Raises
    ImportRejected when a conversation name repeats. Cost: one pass over the messages."""
    builder = PlanBuilder(source, fmt, check=check)
    for item, reason in left_out or []:
        builder.skip(item, reason)
    planned: list[tuple[Transcript, list[dict[str, Any]]]] = []
    seen: dict[str, str] = {}
    for conv in conversations:
        for item, reason in conv.skipped:
            builder.skip(item, reason)
        messages = _messages(conv, builder)
        if not messages:
            builder.skip(conv.where, "no user or assistant text")
            continue
        if conv.name in seen:
            raise ImportRejected(f"{conv.where}: conversation {conv.name!r} appears twice "
                                 f"(also {seen[conv.name]})")
        seen[conv.name] = conv.where
        planned.append((conv, messages))
    rooms = room_names([c for c, _ in planned], palace)
    titles: dict[str, str] = {}
    for conv, messages in planned:
        room = rooms[conv.name]
        if room != conv.name or conv.title:
            builder.add("add_room", {"wing": WING, "name": room, "description": conv.title,
                                     **({"source": conv.name} if room != conv.name else {})},
                        conv.where)
        if conv.title:
            titles[room] = conv.title
        builder.add("import_conversation", {"conversation": room, "messages": messages},
                    conv.where)
    kept = [c for c in builder.calls if c.name == "import_conversation"]
    kinds = Counter(m.get("kind", "text") for c in kept for m in c.args["messages"])
    return builder.finish(
        conversations=len(kept),
        messages=sum(len(c.args["messages"]) for c in kept),
        messages_by_kind=dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
        branched=sum(any("parents" in m for m in c.args["messages"]) for c in kept),
        titles=titles,
        rooms={c.name: rooms[c.name] for c, _ in planned if rooms[c.name] != c.name},
    )


# -- room names ------------------------------------------------------------------------------

SLUG_CHARS = 60  # a title's slug is cut to this many characters (at a hyphen when it can)


def slug(title: str) -> str:
    """Return ``title`` as a room name: lowercase words (letters and digits of any script)
    joined by hyphens, at most :data:`SLUG_CHARS` characters; "untitled" when nothing is
    left. Cost: one pass over the title."""
    text = unicodedata.normalize("NFKC", title).lower()
    words = "".join(ch if ch.isalnum() else " " for ch in text).split()
    out = "-".join(words)
    if len(out) > SLUG_CHARS:
        cut = out[:SLUG_CHARS]
        out = cut.rsplit("-", 1)[0] if "-" in cut[SLUG_CHARS // 2:] else cut
    return out or "untitled"


def room_names(conversations: list[Transcript], palace: Any = None) -> dict[str, str]:
    """Return {conversation name: room name} for the conversations of one import.

    A conversation read from a program's export is named by its id there
    (``chatgpt:<id>``); its room is named by its title, slugged (:func:`slug`), made unique
    with ``-2``, ``-3``… against the rooms of the palace's conversations wing and the names
    given before it in this import (in source order, so the same export gets the same
    names). A conversation the palace has already keeps its room: the one whose ``source``
    is its id, or (imported before rooms were named by title) the room named by the id
    itself. Conversations named by the user or the file (plain JSON/JSONL, no ``:``) keep
    their names. Cost: one pass over the palace's rooms and the conversations.
    """
    rooms = getattr(getattr(palace, "palace", palace), "rooms", None) or {}
    existing = {r.name for (wing, _), r in rooms.items() if wing == WING}
    by_source = {r.source: r.name for (wing, _), r in rooms.items()
                 if wing == WING and r.source}
    taken = set(existing)
    out: dict[str, str] = {}
    for conv in conversations:
        if conv.name in by_source:
            out[conv.name] = by_source[conv.name]
        elif conv.name in existing or ":" not in conv.name:
            out[conv.name] = conv.name
        else:
            base = slug(conv.title or conv.name.split(":", 1)[1])
            room, n = base, 1
            while room in taken:
                n += 1
                room = f"{base}-{n}"
            out[conv.name] = room
        taken.add(out[conv.name])
    return out
