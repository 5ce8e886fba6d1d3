"""OpenAI Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``): the
reader of one session file (``chats`` recognises the file and plans the import).

A rollout is JSONL, one record a line: ``{timestamp, type, payload}`` (0.171.0 adds
``ordinal``). The first record is ``session_meta`` (``payload.id`` is the session id); a
resumed session (``codex exec resume``) appends its turns to the same file. Record types:

- ``response_item``: what went to and came from the model, in order: ``message`` (roles
  ``user``, ``assistant``, ``developer``; ``content`` a list of ``input_text``/``output_text``
  parts), ``reasoning`` (``summary`` parts, ``encrypted_content``), ``function_call``
  (``name``, ``arguments`` JSON text), ``function_call_output`` (``output``), and in some
  versions ``local_shell_call``, ``custom_tool_call(_output)``, ``web_search_call``,
  ``ghost_snapshot``;
- ``event_msg``: the event stream the terminal UI shows (``item_completed`` with
  ``UserMessage``/``AgentMessage``/``Reasoning``/``CommandExecution`` items in 0.171.0;
  ``user_message``/``agent_message``/``agent_reasoning`` in older versions), plus
  ``task_started``, ``token_count`` and such;
- ``compacted``: a summary Codex wrote when it shrank the context;
- ``session_meta``, ``turn_context``, ``world_state``, ``token_usage_record``: settings and
  accounting, no conversation.

What is read: the ``response_item`` records only, as a linear chat in file order. Every
user and assistant message in ``event_msg`` repeats a ``response_item`` (the same text, a
few milliseconds apart), so reading both would double every turn; the ``response_item``
copy is kept because it is the one the model saw, in the order it saw it, and it carries
tool calls and instructions the events leave out or reshape. Only a rollout with no
``response_item`` messages at all is read from its ``event_msg`` user and agent messages.

Kinds: the user's and the assistant's words are ``text``; AGENTS.md and user instructions
Codex injects as a user message are ``instructions`` (role user); a tool call is one
``tool_use`` line (``[exec_command] ls``, at most 200 characters, role assistant); a tool's
output is ``code_output`` (role ``tool``, the exec header cut, at most 2,000 characters: the
command line says what ran, and a ``cat`` of a large file would otherwise bury the chat);
a plain reasoning summary is ``reasoning`` (role assistant). Left out with a reason:
environment context and other context Codex injects, developer messages (Codex's own
instructions to the model), reasoning with only encrypted content, compaction summaries,
ghost snapshots and unknown item types.
"""

from __future__ import annotations

import json
import re
from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers.transcript import Message, Transcript, epoch, json_objects

__all__ = ["read_codex", "sniff"]

TITLE_CHARS = 60
TOOL_LINE_CHARS = 200
OUTPUT_CHARS = 2_000
TOOL_CALLS = {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
TOOL_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
# Text Codex injects as a user message, recognised by its opening (versions before 0.171.0
# carry no provenance metadata): instructions from the user's files, or context.
INSTRUCTIONS_OPENINGS = ("# AGENTS.md instructions for ", "<user_instructions>", "<INSTRUCTIONS>")
INJECTED_TAG = re.compile(r"\s*<([a-z_]+)>")
INJECTED_TAGS = {"environment_context", "turn_aborted", "user_shell_command",
                 "subagent_notification", "skill", "permissions", "collaboration_mode"}
# 0.171.0's content_item_metadata provenance of a user message's parts
USER_PROVENANCE = "user"
INSTRUCTIONS_PROVENANCE = "agents_md"
EXEC_HEADER = re.compile(r"(?:[A-Z][A-Za-z ]*: [^\n]*\n|Process exited with code -?\d+\n)+"
                         r"Output:\n")
EXIT_CODE = re.compile(r"Process exited with code (-?\d+)")


def sniff(first: list[Any]) -> bool:
    """Return whether the first (up to five) parsed JSON objects of a JSONL file are a Codex
    session rollout: every one a ``{type, payload}`` record (types a later version adds
    allowed), one of them ``session_meta`` naming the session ``id``. Cost: O(1)."""
    if not first or not all(isinstance(o, dict) and isinstance(o.get("type"), str)
                            and isinstance(o.get("payload"), dict) for o in first):
        return False
    return any(o["type"] == "session_meta" and "id" in o["payload"] for o in first)


def read_codex(lines: list[str], where: str) -> list[Transcript]:
    """Return the session of one rollout file's ``lines`` (blank lines allowed) as a
    one-element list: ``Transcript`` named ``codex:<session id>``, titled by the first words
    of the user, its messages linear in file order (each one's parent the one before).
    ``where`` names the file in messages. Raises ImportRejected naming ``where line N`` for a
    line that is not a JSON object or a record of the wrong shape, and for a file without a
    ``session_meta`` record. Cost: one pass over the lines; memory proportional to the text.
    """
    records = list(_records(lines, where))
    meta = next((p for _, t, p, _ in records if t == "session_meta"), None)
    if meta is None:
        raise ImportRejected(f"{where}: no session_meta record (is it a Codex rollout?)")
    sid = meta.get("id") or meta.get("session_id")
    if not isinstance(sid, str) or not sid:
        raise ImportRejected(f"{where}: session_meta has no session id")
    conv = Transcript(f"codex:{sid}", "", where)
    items = any(t == "response_item" and p.get("type") == "message"
                for _, t, p, _ in records)
    for n, rtype, payload, stamp in records:
        at = f"{where} line {n}"
        if rtype == "response_item":
            found = _item(n, payload, stamp, at)
        elif rtype == "compacted":
            found = [Message(f"line {n}", None, "assistant", "", stamp, at,
                             skip="context compaction summary (written by Codex)")]
        elif rtype == "event_msg" and not items:
            found = _event(n, payload, stamp, at)
        else:
            continue
        for message in found:
            message.parent = conv.nodes[-1].key if conv.nodes else None
            conv.nodes.append(message)
    conv.title = _title(conv.nodes)
    return [conv]


def _records(lines: list[str], where: str) -> list[tuple[int, str, dict[str, Any], float | None]]:
    """Return (line number, type, payload, timestamp) of every non-blank line."""
    out = []
    for n, record in json_objects(lines, where, "a rollout record"):
        at = f"{where} line {n}"
        rtype, payload = record.get("type"), record.get("payload")
        if not isinstance(rtype, str) or not isinstance(payload, dict):
            raise ImportRejected(f"{at}: a rollout record needs a 'type' string and a "
                                 "'payload' object")
        out.append((n, rtype, payload, epoch(record.get("timestamp"), at)))
    return out


def _item(n: int, p: dict[str, Any], stamp: float | None, at: str) -> list[Message]:
    """Return the messages of one ``response_item`` payload (several for a user message
    holding both the user's words and injected instructions)."""
    kind = p.get("type")
    key = f"line {n}"
    if kind == "message":
        return _message(key, p, stamp, at)
    if kind == "reasoning":
        return [_reasoning(key, p, stamp, at)]
    if kind in TOOL_CALLS:
        return [Message(key, None, "assistant", _tool_line(p, at), stamp, at, kind="tool_use")]
    if kind in TOOL_OUTPUTS:
        return [Message(key, None, "tool", _output(p.get("output"), at), stamp, at,
                        kind="code_output")]
    if kind == "ghost_snapshot":
        return [Message(key, None, "assistant", "", stamp, at,
                        skip="ghost snapshot (Codex's undo point, no text)")]
    return [Message(key, None, "assistant", "", stamp, at, skip=f"Codex item type {kind!r}")]


def _parts(content: Any, at: str) -> list[str]:
    """Return the texts of a message's content (a string or a list of text parts); raise
    ImportRejected for anything else. Images and other non-text parts are not texts."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise ImportRejected(f"{at}: message content must be a list of parts")
    texts = []
    for part in content:
        if not isinstance(part, dict):
            raise ImportRejected(f"{at}: a content part must be an object")
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
    return texts


def _message(key: str, p: dict[str, Any], stamp: float | None, at: str) -> list[Message]:
    """Return the messages of a ``message`` item: the user's split by what each part is,
    a developer message left out, any other role's text as it is (roles judged later)."""
    role = p.get("role")
    if not isinstance(role, str):
        raise ImportRejected(f"{at}: message role must be a string")
    if role == "user":
        return _user(key, p, stamp, at)
    texts = _parts(p.get("content"), at)
    if role == "developer":
        return [Message(key, None, role, "\n\n".join(texts), stamp, at,
                        skip="developer message (Codex's instructions to the model)")]
    return [Message(key, None, role, "\n\n".join(texts), stamp, at)]


def _user(key: str, p: dict[str, Any], stamp: float | None, at: str) -> list[Message]:
    """Split a user message into the user's words, injected instructions and injected
    context (each its own message; the two latter never counted as the user's words)."""
    meta = p.get("internal_chat_message_metadata_passthrough")
    provenance = meta.get("content_item_metadata") if isinstance(meta, dict) else None
    words: list[str] = []
    instructions: list[str] = []
    injected: dict[str, list[str]] = {}
    content = p.get("content")
    for i, part in enumerate(content if isinstance(content, list) else [content]):
        texts = _parts([part] if isinstance(part, dict) else part, at)
        if not texts:
            continue  # an image or other non-text part
        text = texts[0]
        source = _provenance(provenance, i)
        tag = INJECTED_TAG.match(text)
        if source == INSTRUCTIONS_PROVENANCE or text.lstrip().startswith(INSTRUCTIONS_OPENINGS):
            instructions.append(text)
        elif tag and tag.group(1) in INJECTED_TAGS:
            injected.setdefault(tag.group(1), []).append(text)
        elif source not in (None, USER_PROVENANCE):
            injected.setdefault(f"{source} context", []).append(text)
        else:
            words.append(text)
    out = []
    if words or not (instructions or injected):
        out.append(Message(key, None, "user", "\n\n".join(words), stamp, at))
        if not words and content:
            out[0].skip = "no text (images or other non-text parts only)"
    if instructions:
        out.append(Message(f"{key} instructions", None, "user", "\n\n".join(instructions),
                           stamp, at, kind="instructions"))
    for name, parts in injected.items():
        out.append(Message(f"{key} {name}", None, "user", "\n\n".join(parts), stamp, at,
                           skip=f"{name.replace('_', ' ')} (injected by Codex)"))
    return out


def _provenance(items: Any, i: int) -> str | None:
    """Return the provenance type of part ``i`` from 0.171.0's metadata; None if absent."""
    item = items[i] if isinstance(items, list) and i < len(items) else None
    source = item.get("provenance") if isinstance(item, dict) else None
    kind = source.get("type") if isinstance(source, dict) else None
    return kind if isinstance(kind, str) else None


def _reasoning(key: str, p: dict[str, Any], stamp: float | None, at: str) -> Message:
    """Return the plain reasoning summary (else plain reasoning content) as kind reasoning;
    encrypted-only reasoning is left out, as it cannot be read without OpenAI's key."""
    summary = p.get("summary") or []
    content = p.get("content") or []
    if not isinstance(summary, list) or not isinstance(content, list):
        raise ImportRejected(f"{at}: reasoning summary and content must be lists")
    texts = _parts(summary, at) or _parts(content, at)
    text = "\n\n".join(t for t in texts if t.strip())
    if text:
        return Message(key, None, "assistant", text, stamp, at, kind="reasoning")
    reason = "reasoning (encrypted)" if p.get("encrypted_content") else "reasoning (empty)"
    return Message(key, None, "assistant", "", stamp, at, skip=reason)


def _tool_line(p: dict[str, Any], at: str) -> str:
    """Return a tool call as one line ``[tool] what`` of at most 200 characters: the
    command for shell tools, the query for web search, else the arguments as given."""
    kind = p["type"]
    if kind == "local_shell_call":
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        name, what = "shell", _command(action.get("command"))
    elif kind == "web_search_call":
        action = p.get("action") if isinstance(p.get("action"), dict) else {}
        name, what = "web_search", str(action.get("query") or action.get("type") or "")
    else:
        name = p.get("name")
        if not isinstance(name, str):
            raise ImportRejected(f"{at}: a tool call needs a 'name' string")
        raw = p.get("input") if kind == "custom_tool_call" else p.get("arguments")
        what = _arguments(raw)
    line = " ".join(f"[{name}] {what}".split())
    return line if len(line) <= TOOL_LINE_CHARS else line[:TOOL_LINE_CHARS - 1] + "…"


def _arguments(raw: Any) -> str:
    """Return a call's arguments for its line: the shell command when the JSON arguments
    hold one (``cmd``, ``command``), else the arguments text itself."""
    if not isinstance(raw, str):
        return json.dumps(raw, ensure_ascii=False) if raw is not None else ""
    try:
        args = json.loads(raw)
    except ValueError:
        return raw
    if isinstance(args, dict):
        for field in ("cmd", "command"):
            if args.get(field):
                return _command(args[field])
    return raw


def _command(command: Any) -> str:
    """Return a shell command as typed: an argv list, with a ``bash -lc`` wrapper cut."""
    if isinstance(command, list) and all(isinstance(c, str) for c in command):
        if len(command) == 3 and command[1] in ("-lc", "-c") and command[0].endswith("sh"):
            return command[2]
        return " ".join(command)
    return str(command) if command is not None else ""


def _output(output: Any, at: str) -> str:
    """Return a tool's output text: exec_command's header (chunk id, wall time, token count)
    cut, a non-zero exit code kept as ``[exit N]``, and at most 2,000 characters."""
    if isinstance(output, list):
        text = "\n".join(_parts(output, at))
    elif isinstance(output, dict):
        text = str(output.get("content") or output.get("output") or "")
    elif isinstance(output, str):
        text = output
        try:  # versions before 0.171.0: {"output": …, "metadata": {"exit_code": …}}
            wrapped = json.loads(output)
        except ValueError:
            wrapped = None
        if isinstance(wrapped, dict) and isinstance(wrapped.get("output"), str):
            text = wrapped["output"]
            meta = wrapped.get("metadata") if isinstance(wrapped.get("metadata"), dict) else {}
            if meta.get("exit_code") not in (None, 0):
                text = f"[exit {meta['exit_code']}] {text}"
    elif output is None:
        text = ""
    else:
        raise ImportRejected(f"{at}: tool output must be text or a list of parts")
    header = EXEC_HEADER.match(text)
    if header:
        code = EXIT_CODE.search(header.group(0))
        text = text[header.end():]
        if code and code.group(1) != "0":
            text = f"[exit {code.group(1)}] {text}"
    text = text.strip("\n")
    if len(text) > OUTPUT_CHARS:
        text = f"{text[:OUTPUT_CHARS]}… [{len(text) - OUTPUT_CHARS} more characters]"
    return text


def _event(n: int, p: dict[str, Any], stamp: float | None, at: str) -> list[Message]:
    """Return the user or agent message of one ``event_msg`` payload (read only when the
    rollout has no ``response_item`` messages); other events hold no conversation."""
    kind = p.get("type")
    key = f"line {n}"
    if kind in ("user_message", "agent_message") and isinstance(p.get("message"), str):
        role = "user" if kind == "user_message" else "assistant"
        return [Message(key, None, role, p["message"], stamp, at)]
    item = p.get("item") if kind == "item_completed" else None
    if isinstance(item, dict) and item.get("type") in ("UserMessage", "AgentMessage"):
        role = "user" if item["type"] == "UserMessage" else "assistant"
        return [Message(key, None, role, "\n\n".join(_parts(item.get("content"), at)),
                        stamp, at)]
    return []


def _title(nodes: list[Message]) -> str:
    """Return the first words of the user (at most 60 characters, whitespace collapsed)."""
    for node in nodes:
        if node.role == "user" and node.kind == "text" and node.skip is None \
                and node.text.strip():
            text = " ".join(node.text.split())
            return text if len(text) <= TITLE_CHARS else text[:TITLE_CHARS - 1] + "…"
    return ""
