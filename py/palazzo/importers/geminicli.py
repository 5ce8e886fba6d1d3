"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/session-<time>-<short id>.jsonl``):
the reader of one session file (``chats`` recognises the file and plans the import).

Gemini CLI (npm ``@google/gemini-cli``; 0.61.0 checked) records every chat, interactive or
``gemini -p``, in the project's temporary folder. ``<project>`` is a short name for the
project folder (``~/.gemini/projects.json`` maps folders to names; older versions used the
sha256 of the path). The session file is read because it is the only complete record of a
conversation: ids, times, thoughts, tool calls with their results. The folder's other files
are not read: ``logs.json`` holds only the lines the user typed (slash commands included;
the prompt history), ``checkpoint-<tag>.json`` (``/chat save``) the bare API history without
ids, times or thoughts (a copy of what the session holds), ``tool-outputs/`` large outputs.
A subagent's session is ``chats/<parent session id>/<agent id>.jsonl``, the same shape,
read on its own.

A session file is JSONL, appended to as the chat goes (a resumed session, ``gemini
--resume``, appends to the same file). Each line is one of:

- **metadata**: ``{sessionId, projectHash, startTime, lastUpdated, kind}`` (first line, and
  again at each resume);
- **a message**: ``{id, timestamp, type, content, …}``; ``type`` is ``user`` (``content`` a
  list of API parts: text, or the ``functionResponse`` parts that carry a tool's result back
  to the model; ``displayContent`` what the user typed when it differs), ``gemini``
  (``content`` the answer's text, ``thoughts`` ``[{subject, description, timestamp}]``,
  ``toolCalls`` ``[{id, name, args, result, status, resultDisplay, timestamp}]``, ``tokens``,
  ``model``), or the CLI's notes ``info``/``error``/``warning``. A message is written again
  (same ``id``, whole) when it changes (tokens, tool calls): the last version counts;
- ``{"$set": {…}}``: a metadata update (``lastUpdated``, ``sessionId``, ``summary``: a
  one-line summary the model wrote, added when the next interactive session starts); with
  ``messages`` it replaces the history with that list (in API shape: thoughts and tool calls
  as ``thought``/``functionCall`` parts). 0.61.0 writes one at each start (the injected
  ``<session_context>`` message) and, on resume, re-lists the whole history with new times
  and, for each tool call, a second copy of its result (``<id>_response``);
- ``{"$rewindTo": id}``: the history from that message on was rewound (``/rewind``).

Older versions (0.26.0 checked) wrote one JSON document a session (``session-*.json``,
rewritten whole at each change, in a folder named by the sha256 of the project's path): the
metadata with a ``messages`` list of the same message records, the user's ``content`` a
plain string, tool results only in their call's ``result``. It is read the same way
(``sniff_json``), as 0.61.0 reads it (a metadata record's ``messages``, even on a JSONL line,
are whole message records).

What is read: every message once, in the order it first appears, from its last whole record
(a message known only from a ``$set`` list is read from its first listing). The history is
linear (each message's parent the one before it), except that a rewound part stays in the
file and is kept as a branch: what follows a rewind hangs below the message before the
rewound one.

Kinds: the user's words are ``text`` (``displayContent`` when present: the typed words,
without the files an ``@path`` pulled in); the GEMINI.md context the CLI injects (the
``<loaded_context>`` of the ``<session_context>`` message) is ``instructions`` (role user);
thoughts are ``reasoning`` (``**subject**`` then the description; role assistant); a tool
call is one ``tool_use`` line (``[run_shell_command] ls``, at most 200 characters, role
assistant); its result is ``code_output`` (role ``tool``: the ``functionResponse``'s
``output``, else ``[error] …``, with the CLI's ``<untrusted_context>`` wrapper cut; at most
2,000 characters, as the tool line says what ran and a read of a large file would otherwise
bury the chat). Left out with a reason: the rest of the session context (date, OS, folder
listing), hook context, a tool result repeated (the copy in the next user message, and the
``<id>_response`` copies of a resume: each result is kept once, the first time), ``info``/
``error``/``warning`` notes, messages of unknown types, images and other parts without text,
and records of unknown shape (in ``Transcript.skipped``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.importers import check_unicode
from palazzo.importers.transcript import Message, Transcript, epoch, parents_first

__all__ = ["read_gemini_cli", "sniff", "sniff_json"]

TITLE_CHARS = 60
TOOL_LINE_CHARS = 200
OUTPUT_CHARS = 2_000
NOTE_TYPES = {"info", "error", "warning"}
# The argument that says what a tool call does, first found wins; else the args as JSON.
TOOL_FIELDS = ("command", "file_path", "absolute_path", "dir_path", "path", "pattern", "url",
               "query", "prompt", "description")
SESSION_CONTEXT = "<session_context>"
HOOK_CONTEXT = "<hook_context>"
LOADED_CONTEXT = re.compile(r"<loaded_context>\n?(.*?)\n?</loaded_context>", re.DOTALL)
UNTRUSTED = re.compile(r"\A\s*<untrusted_context>\n?(.*?)\n?</untrusted_context>\s*\Z",
                       re.DOTALL)


@dataclass(slots=True)
class _Entry:
    """One message of the session as replayed: its last whole record (or first listing)."""

    doc: dict[str, Any]
    at: str  # "<where> line N" (or "… messages[i]" for a listed one)
    parent: str | None  # id of the message before it when it first appeared


@dataclass(slots=True)
class _Replay:
    """The state of a session file read record by record, as the CLI loads it, except that
    nothing is forgotten: rewound and replaced messages stay in ``entries``."""

    entries: dict[str, _Entry] = field(default_factory=dict)  # by id, first appearance order
    live: list[str] = field(default_factory=list)  # the history as the CLI holds it now
    in_live: set[str] = field(default_factory=set)  # the ids of ``live``
    meta: dict[str, Any] = field(default_factory=dict)
    unknown: list[tuple[str, str]] = field(default_factory=list)  # (where, reason)


def sniff(first: list[Any]) -> bool:
    """Return whether the first (up to five) parsed JSON objects of a JSONL file are a Gemini
    CLI session: every one a metadata record, a message (``id`` and ``type``), a ``$set`` or
    a ``$rewindTo`` record, and one of them the metadata naming ``sessionId`` and
    ``projectHash``. Cost: O(1)."""
    if not first or not all(isinstance(o, dict) and (
            isinstance(o.get("$set"), dict) or isinstance(o.get("$rewindTo"), str)
            or (isinstance(o.get("id"), str) and isinstance(o.get("type"), str))
            or isinstance(o.get("sessionId"), str)) for o in first):
        return False
    return any(_is_meta(o) for o in first)


def sniff_json(doc: Any) -> bool:
    """Return whether a parsed JSON document is a Gemini CLI session of the one-document
    shape (``session-*.json``, versions before JSONL): an object with ``sessionId`` and
    ``projectHash`` strings and a ``messages`` list. Cost: O(1)."""
    return _is_meta(doc) and isinstance(doc.get("messages"), list)


def _is_meta(o: Any) -> bool:
    return isinstance(o, dict) and isinstance(o.get("sessionId"), str) and bool(o["sessionId"]) \
        and isinstance(o.get("projectHash"), str)


def read_gemini_cli(source: list[str] | dict[str, Any], where: str) -> list[Transcript]:
    """Return the session of one session file as a one-element list: a ``Transcript`` named
    ``gemini-cli:<session id>``, titled by the session's ``summary`` when it has one (the
    CLI's one-line summary, at most 80 characters), else by the user's first words (about 60
    characters); its messages parents first (linear, with rewound parts as branches).

    ``source`` is the file's lines (JSONL, blank lines allowed) or, for the older one-document
    shape, the parsed document. ``where`` names the file in messages. Raises ImportRejected
    naming ``where line N`` (or ``where messages[i]``) for a line that is not a JSON object,
    a record or message of the wrong shape or a bad timestamp, and for a file with no
    metadata naming the session. Cost: one pass over the records and one over the messages
    (a ``$set`` list or a rewind costs its length); memory proportional to the text.
    """
    replay = _Replay()
    if isinstance(source, dict):
        check_unicode(source, where)
        if not sniff_json(source):
            raise ImportRejected(f"{where}: not a Gemini CLI session (no sessionId, "
                                 "projectHash and messages list)")
        replay.meta = {k: v for k, v in source.items() if k != "messages"}
        for i, doc in enumerate(source["messages"]):
            _message_record(replay, doc, f"{where} messages[{i}]")
    else:
        for n, line in enumerate(source, 1):
            if line.strip():
                _record(replay, line, f"{where} line {n}")
    if not _is_meta(replay.meta):
        raise ImportRejected(f"{where}: no metadata naming the sessionId and projectHash "
                             "(is it a Gemini CLI session?)")
    conv = Transcript(f"gemini-cli:{replay.meta['sessionId']}", "", where,
                      skipped=list(replay.unknown))
    conv.nodes = parents_first(_messages(replay), where)
    summary = replay.meta.get("summary")
    conv.title = " ".join(summary.split()) if isinstance(summary, str) and summary.strip() \
        else _title(conv.nodes)
    return [conv]


# -- records ------------------------------------------------------------------------------------

def _record(replay: _Replay, line: str, at: str) -> None:
    """Replay one JSONL line."""
    doc = jsontext.loads(line, at, ImportRejected)
    if not isinstance(doc, dict):
        raise ImportRejected(f"{at}: a session record must be a JSON object")
    check_unicode(doc, at)
    if "$rewindTo" in doc:
        target = doc["$rewindTo"]
        if not isinstance(target, str):
            raise ImportRejected(f"{at}: $rewindTo must be a message id string")
        live = replay.live
        replay.live = live[:live.index(target)] if target in replay.in_live else []
        replay.in_live = set(replay.live)
    elif "$set" in doc:
        update = doc["$set"]
        if not isinstance(update, dict):
            raise ImportRejected(f"{at}: $set must be an object")
        if "messages" in update:
            _listing(replay, update["messages"], at)
        replay.meta.update({k: v for k, v in update.items() if k != "messages"})
    elif "id" in doc:
        _message_record(replay, doc, at)
    elif "sessionId" in doc:
        if not _is_meta(doc):
            raise ImportRejected(f"{at}: session metadata needs 'sessionId' and 'projectHash' "
                                 "strings")
        replay.meta.update({k: v for k, v in doc.items() if k != "messages"})
        listed = doc.get("messages")  # the older one-document shape, written on one line
        if listed is not None and not isinstance(listed, list):
            raise ImportRejected(f"{at}: messages must be a list")
        for i, message in enumerate(listed or []):
            _message_record(replay, message, f"{at} messages[{i}]")
    else:
        keys = ", ".join(sorted(doc)[:5]) or "none"
        replay.unknown.append((at, f"unknown Gemini CLI record (keys: {keys})"))


def _check_message(doc: Any, at: str) -> str:
    """Return a message record's id; raise ImportRejected when it is not one."""
    if not isinstance(doc, dict):
        raise ImportRejected(f"{at}: a message must be a JSON object")
    mid, kind = doc.get("id"), doc.get("type")
    if not isinstance(mid, str) or not mid:
        raise ImportRejected(f"{at}: a message needs an 'id' string")
    if not isinstance(kind, str):
        raise ImportRejected(f"{at}: a message needs a 'type' string")
    epoch(doc.get("timestamp"), at)
    return mid


def _message_record(replay: _Replay, doc: Any, at: str) -> None:
    """Replay a whole message record: a new message joins the history; a known one is
    replaced by this later version (where it first appeared)."""
    mid = _check_message(doc, at)
    entry = replay.entries.get(mid)
    if entry is None:
        parent = replay.live[-1] if replay.live else None
        replay.entries[mid] = _Entry(doc, at, parent)
    else:
        entry.doc, entry.at = doc, at
    if mid not in replay.in_live:
        replay.live.append(mid)
        replay.in_live.add(mid)


def _listing(replay: _Replay, messages: Any, at: str) -> None:
    """Replay a ``$set`` messages list: it becomes the history; a message first seen here is
    read from this listing (a whole record of it, later, replaces it)."""
    if not isinstance(messages, list):
        raise ImportRejected(f"{at}: $set.messages must be a list")
    live: list[str] = []
    in_live: set[str] = set()
    for i, doc in enumerate(messages):
        where = f"{at} messages[{i}]"
        mid = _check_message(doc, where)
        if mid not in replay.entries:
            parent = live[-1] if live else (replay.live[-1] if replay.live else None)
            replay.entries[mid] = _Entry(doc, where, parent)
        if mid not in in_live:
            live.append(mid)
            in_live.add(mid)
    replay.live, replay.in_live = live, in_live


# -- messages -----------------------------------------------------------------------------------

def _messages(replay: _Replay) -> list[Message]:
    """Return the messages of every entry in first-appearance order, each entry's parts
    chained (the last part keyed by the id, so the next entry hangs below it)."""
    shown: set[str] = set()  # tool results already kept, by call id
    out: list[Message] = []
    for mid, entry in replay.entries.items():
        parts = _parts(entry, shown)
        parent = entry.parent
        for i, part in enumerate(parts):
            part.key = mid if i == len(parts) - 1 else f"{mid}#{i}"
            part.parent = parent
            parent = part.key
            out.append(part)
    return out


def _parts(entry: _Entry, shown: set[str]) -> list[Message]:
    """Return the message(s) of one entry, by its type."""
    doc, at = entry.doc, entry.at
    stamp = epoch(doc.get("timestamp"), at)
    kind = doc["type"]
    if kind == "user":
        return _user(doc, stamp, at, shown)
    if kind == "gemini":
        return _gemini(doc, stamp, at, shown)
    if kind in NOTE_TYPES:
        text = _content_text(doc.get("content"), at)[0]
        return [Message("", None, "system", text, stamp, at,
                        skip=f"Gemini CLI {kind} note (not sent to the model)")]
    return [Message("", None, kind, "", stamp, at, skip=f"Gemini CLI message type {kind!r}")]


def _content_parts(content: Any, at: str) -> list[dict[str, Any]]:
    """Return a message's content as a list of part objects (a string is one text part)."""
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}] if content else []
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        raise ImportRejected(f"{at}: message content must be text or a list of parts")
    out = []
    for part in content:
        if isinstance(part, str):
            out.append({"text": part})
        elif isinstance(part, dict):
            out.append(part)
        else:
            raise ImportRejected(f"{at}: a content part must be an object or text")
    return out


def _content_text(content: Any, at: str) -> tuple[str, int]:
    """Return (the text of the non-thought text parts, joined as the CLI joins them; the
    number of parts that are neither text, thought, function call nor response)."""
    texts: list[str] = []
    other = 0
    for part in _content_parts(content, at):
        if isinstance(part.get("text"), str):
            if not part.get("thought"):
                texts.append(part["text"])
        elif "functionCall" not in part and "functionResponse" not in part:
            other += 1
    return "".join(texts), other


def _user(doc: dict[str, Any], stamp: float | None, at: str, shown: set[str]) -> list[Message]:
    """Return a user message's parts: the user's words (or the context the CLI injected)
    and the tool results it carries back to the model."""
    parts = _content_parts(doc.get("content"), at)
    text, other = _content_text(parts, at)
    if doc.get("displayContent") is not None and not text.lstrip().startswith(SESSION_CONTEXT):
        shown_text, _ = _content_text(doc["displayContent"], at)
        text = shown_text or text
    out: list[Message] = []
    opening = text.lstrip()
    if opening.startswith(SESSION_CONTEXT):
        loaded = LOADED_CONTEXT.search(text)
        if loaded and loaded.group(1).strip():
            out.append(Message("", None, "user", loaded.group(1), stamp, at,
                               kind="instructions"))
        out.append(Message("", None, "user", text, stamp, at,
                           skip="session context (injected by Gemini CLI: date, system, "
                                "folder listing)"))
    elif opening.startswith(HOOK_CONTEXT):
        out.append(Message("", None, "user", text, stamp, at,
                           skip="hook context (injected by Gemini CLI)"))
    elif text or not any("functionResponse" in p for p in parts):
        message = Message("", None, "user", text, stamp, at)
        if not text.strip() and other:
            message.skip = "no text (images or other non-text parts only)"
        out.append(message)
    for part in parts:
        if "functionResponse" in part:
            out.append(_result(part["functionResponse"], None, stamp, at, shown))
    return out


def _gemini(doc: dict[str, Any], stamp: float | None, at: str,
            shown: set[str]) -> list[Message]:
    """Return an answer's parts in the order they came: thoughts, text, then each tool call
    and its result."""
    parts = _content_parts(doc.get("content"), at)
    calls = [] if doc.get("toolCalls") is None else doc["toolCalls"]
    thoughts = [] if doc.get("thoughts") is None else doc["thoughts"]
    if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
        raise ImportRejected(f"{at}: toolCalls must be a list of objects")
    if not isinstance(thoughts, list) or not all(isinstance(t, dict) for t in thoughts):
        raise ImportRejected(f"{at}: thoughts must be a list of objects")
    out: list[Message] = []
    reasoning = [_thought(t, at) for t in thoughts]
    reasoning += [p["text"] for p in parts if p.get("thought") and isinstance(p.get("text"), str)]
    reasoning = [r for r in reasoning if r.strip()]
    if reasoning:
        first = epoch(thoughts[0].get("timestamp"), at) if thoughts else None
        out.append(Message("", None, "assistant", "\n\n".join(reasoning),
                           stamp if first is None else first, at, kind="reasoning"))
    text, other = _content_text(parts, at)
    if text or not (out or calls or any("functionCall" in p for p in parts)):
        message = Message("", None, "assistant", text, stamp, at)
        if not text.strip() and other:
            message.skip = "no text (images or other non-text parts only)"
        out.append(message)
    called = set()
    for call in calls:
        out.append(Message("", None, "assistant", _tool_line(call, at), stamp, at,
                           kind="tool_use"))
        if isinstance(call.get("id"), str):
            called.add(call["id"])
        result = _call_result(call, stamp, at, shown)
        if result is not None:
            out.append(result)
    for part in parts:  # an answer known only from a $set list: calls in API shape
        fcall = part.get("functionCall")
        if isinstance(fcall, dict) and fcall.get("id") not in called:
            out.append(Message("", None, "assistant", _tool_line(fcall, at), stamp, at,
                               kind="tool_use"))
    return out


def _thought(thought: dict[str, Any], at: str) -> str:
    """Return a recorded thought as the model wrote it: ``**subject**`` then the text."""
    subject, description = thought.get("subject") or "", thought.get("description") or ""
    if not isinstance(subject, str) or not isinstance(description, str):
        raise ImportRejected(f"{at}: a thought's subject and description must be text")
    epoch(thought.get("timestamp"), at)
    return f"**{subject}**\n\n{description}".strip() if subject else description


def _tool_line(call: dict[str, Any], at: str) -> str:
    """Return a tool call as one line ``[name] what`` of at most 200 characters: the
    command, path, pattern, URL or query it names, else its arguments as JSON."""
    name = call.get("name")
    if not isinstance(name, str) or not name:
        raise ImportRejected(f"{at}: a tool call needs a 'name' string")
    args = call.get("args")
    if not isinstance(args, dict):
        args = {}
    what = next((args[k] for k in TOOL_FIELDS if isinstance(args.get(k), str) and args[k]),
                None)
    if what is None:
        what = json.dumps(args, ensure_ascii=False) if args else ""
    return _one_line(f"[{name}] {what}" if what else f"[{name}]", TOOL_LINE_CHARS)


def _call_result(call: dict[str, Any], stamp: float | None, at: str,
                 shown: set[str]) -> Message | None:
    """Return the result recorded with a tool call (its ``functionResponse``, else its
    display text), or None when the call has none (cancelled before it ran)."""
    when = epoch(call.get("timestamp"), at)
    when = stamp if when is None else when
    result = call.get("result")
    responses = [p["functionResponse"] for p in _content_parts(result, at)
                 if isinstance(p.get("functionResponse"), dict)] if result else []
    if responses:
        message = _result(responses[0], call, when, at, shown)
        return message
    display = call.get("resultDisplay")
    if isinstance(display, str) and display.strip():
        return Message("", None, "tool", _cap(display), when, at, kind="code_output")
    return None


def _result(response: Any, call: dict[str, Any] | None, stamp: float | None, at: str,
            shown: set[str]) -> Message:
    """Return a tool result (a ``functionResponse``) as code_output, or left out when the
    same call's result was kept before."""
    if not isinstance(response, dict):
        raise ImportRejected(f"{at}: a functionResponse must be an object")
    cid = response.get("id") or (call or {}).get("id")
    body = response.get("response")
    if isinstance(body, dict) and isinstance(body.get("output"), str):
        text = body["output"]
    elif isinstance(body, dict) and isinstance(body.get("error"), str):
        text = f"[error] {body['error']}"
    elif isinstance(body, str):
        text = body
    else:
        text = json.dumps(body, ensure_ascii=False) if body is not None else ""
    wrapped = UNTRUSTED.match(text)
    if wrapped:
        text = wrapped.group(1)
    status = (call or {}).get("status")
    if status in ("error", "cancelled") and not text.startswith("["):
        text = f"[{status}] {text}"
    key = cid if isinstance(cid, str) and cid else f"{response.get('name')}\x1f{text}"
    message = Message("", None, "tool", _cap(text), stamp, at, kind="code_output")
    if key in shown:
        message.skip = "tool result (repeats a result kept before)"
    shown.add(key)
    return message


def _cap(text: str) -> str:
    """Return a tool output with blank edges cut, at most 2,000 characters."""
    text = text.strip("\n")
    if len(text) > OUTPUT_CHARS:
        text = f"{text[:OUTPUT_CHARS]}… [{len(text) - OUTPUT_CHARS} more characters]"
    return text


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def _title(nodes: list[Message]) -> str:
    """Return the user's first kept words, whitespace collapsed, at most 60 characters."""
    for node in nodes:
        if node.role == "user" and node.kind == "text" and node.skip is None \
                and node.text.strip():
            return _one_line(node.text, TITLE_CHARS)
    return ""
