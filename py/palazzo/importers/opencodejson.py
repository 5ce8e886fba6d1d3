"""OpenCode's JSON session storage (OpenCode up to 1.1.x, before sessions moved into the
``opencode.db`` SQLite database that ``chats._opencode`` reads): the reader of a whole
``~/.local/share/opencode/storage`` folder (``chats`` recognises it and plans the import).

The storage is one JSON file per record, in folders named by the record's owner:

- ``session/<project id>/<session id>.json``: a session (``id``, ``title``, ``time.created``
  in ms, ``parentID`` for a subagent's session, ``projectID``, ``directory``, ``version``);
- ``message/<session id>/<message id>.json``: a message (``id``, ``sessionID``, ``role``
  ``user`` or ``assistant``, ``time.created`` in ms; an assistant message names its user
  message in ``parentID``, and ``summary: true`` marks a compaction summary);
- ``part/<message id>/<part id>.json``: a part of a message (``id``, ``messageID``,
  ``type``): ``text`` (``synthetic`` when OpenCode wrote it, e.g. the content of a file
  attached with ``--file``), ``reasoning``, ``tool`` (``tool``, ``callID``, ``state`` with
  ``status``, ``input``, ``output`` or ``error``), ``file``, ``step-start``/``step-finish``
  (a model call's snapshot hash, tokens and cost), ``patch``, ``snapshot``, ``agent``,
  ``subtask``, ``retry``, ``compaction``;
- ``project/``, ``session_diff/``, ``todo/``, ``migration``: the project's work tree, file
  diffs, to-do lists and the storage's format version: no conversation, not read.

What is read: every session with messages (a message folder without a session file is read
too, untitled), one ``Transcript`` each, named ``opencode:<session id>`` and titled by the
session's ``title``, exactly as the SQLite reader names and titles them, so storage read
before and after OpenCode 1.2 migrated it gives the same conversations. Messages come in
``(time.created, id)`` order, as the SQLite reader orders them (OpenCode 1.1 itself lists
them by id; its ids grow with time, so the two agree), linear (each one's parent the one
before); a message's parts in id order, as OpenCode 1.1 sorts them. Not read: the layout
before OpenCode's own storage migration 1 (``project/<id>/storage/session/{info,message,
part}``), which OpenCode 1.x rewrites into this one on start-up.

Kinds: a message's text parts are joined with a newline into one ``text`` message keyed by
the message id, placed where its first text part is (the SQLite reader keeps the same
text, so the two agree on keys, roles, texts and order); a ``reasoning`` part is
``reasoning`` (role assistant); a ``tool`` part is one ``tool_use`` line (``[read]
/home/user/project/notes.txt``, at most 200 characters, role assistant) and its output (or
``[error] …``) is ``code_output`` (role ``tool``, at most 2,000 characters). Left out with a
reason: synthetic and ignored text, attached files, step markers, patches, snapshots, agent
and subtask mentions, retries, compaction markers, compaction summaries, unknown part types
and messages with no parts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.importers import check_unicode
from palazzo.importers._files import read_regular, regular_files
from palazzo.importers.transcript import Message, Transcript, epoch

__all__ = ["is_storage", "message_nodes", "read_storage"]

TOOL_LINE_CHARS = 200
OUTPUT_CHARS = 2_000
# The argument that says what a tool call did, by OpenCode's tool input names; the first
# one present is the call's line, else the input as JSON.
MAIN_ARGUMENTS = ("command", "filePath", "path", "pattern", "url", "query", "description")
LEFT_OUT_PARTS = {
    "file": "attached file (its content went to the model as synthetic text)",
    "step-start": "step marker (a model call's start: snapshot hash, no text)",
    "step-finish": "step marker (a model call's end: tokens and cost, no text)",
    "patch": "patch (files changed in a step: hash and file names, no text)",
    "snapshot": "snapshot (a work-tree hash, no text)",
    "agent": "agent mention (no text)",
    "subtask": "subtask (a prompt handed to a subagent, read as its own session)",
    "retry": "retry (a failed model call)",
    "compaction": "compaction marker (no text)",
}


@dataclass(slots=True)
class _Budget:
    """Bytes still allowed to be read, so a huge storage folder fails early and clearly; and
    the (item, reason) pairs of what was left out unread (FIFOs, sockets, devices)."""

    left: int
    storage: Path
    limit: int = field(init=False)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.limit = self.left


def is_storage(path: Path) -> bool:
    """Return whether ``path`` is OpenCode's JSON ``storage`` folder, or the ``opencode`` data
    folder holding one: a folder with ``session`` and ``message`` subfolders. Exists so
    ``chats`` and the browser can tell it from other folders without reading a file.
    OpenCode 1.2 migrates the storage into ``opencode.db`` beside it and leaves the folder
    in place: where both are, the database is the one to read (it also holds the sessions
    held since). Cost: at most four stat calls."""
    return _storage(path) is not None


def _storage(path: Path) -> Path | None:
    """Return the storage folder ``path`` is or holds, else None."""
    for folder in (path, path / "storage"):
        if (folder / "session").is_dir() and (folder / "message").is_dir():
            return folder
    return None


def read_storage(path: Path, limit: int,
                 skipped: list[tuple[str, str]] | None = None) -> list[Transcript]:
    """Return every session of the OpenCode JSON storage at ``path`` (the ``storage`` folder
    or its parent ``opencode`` folder), sorted by session id, as described in the module
    docstring. At most ``limit`` bytes of JSON are read in all. A ``*.json`` entry that is
    not a regular file (a FIFO, a socket, a device) is never opened: it is appended to
    ``skipped`` as (item, reason). Raises ImportRejected naming the file (and the field) for
    a file that is not JSON or cannot be read, a record of the wrong shape, a timestamp out
    of range, or when the files add up past ``limit``; naming ``path`` when it is no such
    folder. Cost: one read of every session, message and part file; memory proportional to
    their text."""
    storage = _storage(path)
    if storage is None:
        raise ImportRejected(f"{path}: not OpenCode's JSON storage (no session and message "
                             "folders here or in storage/)")
    budget = _Budget(limit, storage)
    if skipped is not None:
        budget.skipped = skipped
    sessions = _sessions(storage, budget)
    ids = set(sessions)
    ids.update(d.name for d in (storage / "message").iterdir() if d.is_dir())
    out = []
    for sid in sorted(ids):
        info, where = sessions.get(sid, ({}, f"{storage / 'message' / sid}"))
        title = info.get("title") if isinstance(info.get("title"), str) else ""
        conv = Transcript(f"opencode:{sid}", title, where)
        for message, at, created in _messages(storage, sid, budget):
            for node in _nodes(storage, message, created, at, budget):
                node.parent = conv.nodes[-1].key if conv.nodes else None
                conv.nodes.append(node)
        out.append(conv)
    return out


def _load(file: Path, budget: _Budget) -> dict[str, Any]:
    """Return the JSON object in ``file``, charged to ``budget``; ImportRejected naming the
    file when it is not one, or cannot be read (also when it stopped being a regular file
    since it was listed)."""
    where = str(file)
    try:
        budget.left -= file.stat().st_size
        if budget.left < 0:
            raise ImportRejected(f"{budget.storage}: the storage's JSON files add up to more "
                                 f"than {budget.limit} bytes (the limit), at {file}")
        data = read_regular(file)
    except OSError as err:
        raise ImportRejected(f"{where}: cannot read: {err.strerror}") from None
    doc = jsontext.loads(data, where, ImportRejected)
    check_unicode(doc, where)
    if not isinstance(doc, dict):
        raise ImportRejected(f"{where}: must hold a JSON object")
    return doc


def _files(folder: Path, budget: _Budget) -> list[Path]:
    """Return the ``*.json`` files of ``folder`` sorted by name (empty if it is missing);
    entries that are not regular files are recorded in ``budget.skipped``, never opened."""
    if not folder.is_dir():
        return []
    files, left = regular_files(sorted(folder.glob("*.json")))
    budget.skipped.extend((str(p), why) for p, why in left)
    return files


def _sessions(storage: Path, budget: _Budget) -> dict[str, tuple[dict[str, Any], str]]:
    """Return {session id: (session record, its file)} of ``session/<project>/*.json``."""
    out: dict[str, tuple[dict[str, Any], str]] = {}
    for project in sorted(p for p in (storage / "session").iterdir() if p.is_dir()):
        for file in _files(project, budget):
            doc = _load(file, budget)
            sid = doc.get("id")
            if not isinstance(sid, str) or not sid:
                raise ImportRejected(f"{file}: a session needs an 'id' string")
            if doc.get("title") is not None and not isinstance(doc["title"], str):
                raise ImportRejected(f"{file}: title must be a string")
            if sid in out:
                raise ImportRejected(f"{file}: session {sid!r} appears twice (also "
                                     f"{out[sid][1]})")
            out[sid] = (doc, str(file))
    return out


def _messages(storage: Path, sid: str, budget: _Budget
              ) -> list[tuple[dict[str, Any], str, float | None]]:
    """Return (message record, its file, time.created in epoch seconds) of one session in
    (time.created, id) order, each record's ``id`` and ``role`` checked."""
    out = []
    for file in _files(storage / "message" / sid, budget):
        at = str(file)
        doc = _load(file, budget)
        if not isinstance(doc.get("id"), str) or not doc["id"]:
            raise ImportRejected(f"{at}: a message needs an 'id' string")
        if not isinstance(doc.get("role"), str):
            raise ImportRejected(f"{at}: a message needs a 'role' string")
        time = doc.get("time")
        if time is not None and not isinstance(time, dict):
            raise ImportRejected(f"{at}: time must be an object")
        out.append((doc, at, epoch((time or {}).get("created"), f"{at} time.created",
                                   millis=True)))
    ids = [d["id"] for d, _, _ in out]
    if len(set(ids)) != len(ids):
        raise ImportRejected(f"{storage / 'message' / sid}: two messages have the same id")
    out.sort(key=lambda m: (m[2] is None, m[2] or 0.0, m[0]["id"]))
    return out


def _nodes(storage: Path, message: dict[str, Any], stamp: float | None, at: str,
           budget: _Budget) -> list[Message]:
    """Return the messages one OpenCode message of the storage becomes (its part files
    read, then :func:`message_nodes`)."""
    parts = [(str(file), _load(file, budget))
             for file in _files(storage / "part" / message["id"], budget)]
    parts.sort(key=lambda p: str(p[1].get("id") or Path(p[0]).stem))
    return message_nodes(message, parts, stamp, at)


def message_nodes(message: dict[str, Any], parts: list[tuple[str, dict[str, Any]]],
                  stamp: float | None, at: str) -> list[Message]:
    """Return the messages one OpenCode message becomes, whether read from the JSON storage
    or from ``opencode.db`` (the same records): its joined text keyed by the message id
    where its first text part is, and one message a reasoning, tool call, tool output or
    left-out part, keyed ``<message id>/<part id>``, in the order of ``parts`` ((where,
    part) pairs, in part-id order). Parents are left to the caller. Cost: one pass over
    the parts."""
    mid, role = message["id"], message["role"]
    if role == "assistant" and message.get("summary") is True:
        return [Message(mid, None, role, "", stamp, at,
                        skip="context compaction summary (written by OpenCode)")]
    if not parts:
        return [Message(mid, None, role, "", stamp, at, skip="no parts")]
    out: list[Message] = []
    text: Message | None = None
    for where, part in parts:
        kind = part.get("type")
        if not isinstance(kind, str):
            raise ImportRejected(f"{where}: a part needs a 'type' string")
        key = f"{mid}/{part.get('id') or Path(where).stem}"
        if kind == "text":
            body = part.get("text")
            if not isinstance(body, str):
                raise ImportRejected(f"{where}: a text part needs a 'text' string")
            if part.get("synthetic") or part.get("ignored"):
                reason = ("synthetic text (written by OpenCode, e.g. an attached file's "
                          "content)" if part.get("synthetic") else "ignored text")
                out.append(Message(key, None, role, body, stamp, where, skip=reason))
            elif text is None:
                text = Message(mid, None, role, body, stamp, at)
                out.append(text)
            else:
                text.text += "\n" + body
        elif kind == "reasoning":
            out.append(_reasoning(key, part, stamp, where))
        elif kind == "tool":
            out.extend(_tool(key, part, stamp, where))
        else:
            reason = LEFT_OUT_PARTS.get(kind, f"OpenCode part type {kind!r}")
            out.append(Message(key, None, role, "", stamp, where, skip=reason))
    return out


def _reasoning(key: str, part: dict[str, Any], stamp: float | None, where: str) -> Message:
    """Return a reasoning part as kind reasoning; an empty one left out."""
    body = part.get("text")
    if body is not None and not isinstance(body, str):
        raise ImportRejected(f"{where}: a reasoning part's text must be a string")
    if body and body.strip():
        return Message(key, None, "assistant", body, stamp, where, kind="reasoning")
    return Message(key, None, "assistant", "", stamp, where, skip="reasoning (empty)")


def _tool(key: str, part: dict[str, Any], stamp: float | None, where: str) -> list[Message]:
    """Return a tool part as its call line (tool_use) and its output or error
    (code_output); a call that never finished has its missing output left out."""
    name = part.get("tool")
    state = part.get("state")
    if not isinstance(name, str) or not isinstance(state, dict):
        raise ImportRejected(f"{where}: a tool part needs a 'tool' string and a 'state' "
                             "object")
    status = state.get("status")
    call = Message(key, None, "assistant", _tool_line(name, state.get("input")), stamp, where,
                   kind="tool_use")
    if status == "completed":
        output = state.get("output")
        if output is not None and not isinstance(output, str):
            raise ImportRejected(f"{where}: state.output must be a string")
        text = output or ""
    elif status == "error":
        error = state.get("error")
        text = f"[error] {error if isinstance(error, str) else json.dumps(error)}"
    else:
        return [call, Message(f"{key} output", None, "tool", "", stamp, where,
                              skip=f"tool call never finished (status {status!r})")]
    text = text.strip("\n")
    if len(text) > OUTPUT_CHARS:
        text = f"{text[:OUTPUT_CHARS]}… [{len(text) - OUTPUT_CHARS} more characters]"
    return [call, Message(f"{key} output", None, "tool", text, stamp, where,
                          kind="code_output")]


def _tool_line(name: str, given: Any) -> str:
    """Return a tool call as one line ``[tool] what`` of at most 200 characters: its main
    argument (a command, a file path, a pattern, …) when it has one, else its input as
    JSON."""
    what = ""
    if isinstance(given, dict):
        main = next((given[a] for a in MAIN_ARGUMENTS if isinstance(given.get(a), str)), None)
        what = main if main is not None else json.dumps(given, ensure_ascii=False)
    elif given is not None:
        what = json.dumps(given, ensure_ascii=False)
    line = " ".join(f"[{name}] {what}".split())
    return line if len(line) <= TOOL_LINE_CHARS else line[:TOOL_LINE_CHARS - 1] + "…"
