"""claude.ai's ``conversations.json`` (the data export): the reader of its conversations
(``chats`` recognises the file and plans the import).

A conversation is ``{uuid, name, created_at, chat_messages}``; a message is ``{uuid, sender
(human|assistant), text, content, attachments, files, created_at, parent_message_uuid}``.
Newer exports give ``content`` as blocks: ``text``, ``thinking``, ``tool_use``,
``tool_result`` (web search, code runs, artifacts); ``text`` then repeats the text blocks.

Every block is kept, each as a message of its own kind, chained before the message's own
text (which keeps the message's uuid, so replies and branches hang off it): an attachment
with its extracted text (``attachments``: ``[attachment: name]`` and the text), thinking
(``reasoning``), a tool call (``tool_use``, one line of at most 200 characters), its result
(``code_output``, role ``tool``, at most 2,000 characters: titles and links of search
results, or the text). The text blocks are joined into the message's text, in order, and the
names of files (and of attachments without text) end it as one ``[attachments: …]`` line.
So an assistant message that said something, searched and answered becomes: the search,
its results, then the whole text. Left out, with the reason: blocks of other types, empty
thinking. When messages name their parents, edits and regenerations are kept as branches
(parents are put before children whatever the list order); an export without parent links
is read in list order.
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers.claudecode import one_line, tool_line
from palazzo.importers.transcript import Message, Transcript, epoch, parents_first

__all__ = ["read_claude"]

OUTPUT_CHARS = 2_000


def read_claude(items: list[Any], where: str) -> list[Transcript]:
    """Return the conversations of a claude.ai ``conversations.json`` (its parsed list;
    ``where`` names the file in messages), as the module docstring describes. Raises
    ImportRejected naming the conversation and message for anything malformed, a uuid
    repeated with other content, or parent links that form a cycle. Cost: one pass over the
    messages and their blocks."""
    return [_conversation(c, f"{where} conversation {n}") for n, c in enumerate(items)]


def _conversation(c: Any, at: str) -> Transcript:
    if not isinstance(c, dict) or not isinstance(c.get("chat_messages"), list):
        raise ImportRejected(f"{at}: a Claude conversation needs a 'chat_messages' list")
    uuid = c.get("uuid")
    if not isinstance(uuid, str) or not uuid:
        raise ImportRejected(f"{at}: a Claude conversation needs a 'uuid'")
    title = c.get("name") if isinstance(c.get("name"), str) else ""
    conv = Transcript(f"claude:{uuid}", title, at)
    messages: list[dict[str, Any]] = []
    keys: list[str] = []
    first: dict[str, tuple[int, dict[str, Any]]] = {}  # key -> (index, message) seen first
    for i, m in enumerate(c["chat_messages"]):
        if not isinstance(m, dict) or "sender" not in m:
            raise ImportRejected(f"{at} message {i}: a Claude message needs 'sender'")
        uid = m.get("uuid")
        if uid is not None and not isinstance(uid, str):
            raise ImportRejected(f"{at} message {i}: uuid must be text")
        parent = m.get("parent_message_uuid")
        if parent is not None and not isinstance(parent, str):
            raise ImportRejected(f"{at} message {i}: parent_message_uuid must be text")
        key = f"u:{uid}" if uid else f"#{i}"
        if key in first:
            j, earlier = first[key]
            if earlier != m:
                raise ImportRejected(f"{at} message {i}: repeats the uuid {uid!r} of "
                                     f"message {j} with different content")
            conv.skipped.append((f"{at} message {i}", f"repeats message {j} (same uuid "
                                                        "and content)"))
            continue
        first[key] = (i, m)
        messages.append(m)
        keys.append(key)
    # Edits and regenerations are branches: every message names its parent (the root ones
    # a sentinel uuid). Older exports have no parents: the list order is the chat.
    known = set(keys)
    parents = [f"u:{m['parent_message_uuid']}" if m.get("parent_message_uuid") else None
               for m in messages]
    tree = any(p in known for p in parents)
    previous: str | None = None
    for key, m, parent in zip(keys, messages, parents, strict=True):
        up = (parent if parent in known else None) if tree else previous
        conv.nodes.extend(_nodes(key, up, m, f"{at} message {first[key][0]}"))
        previous = key
    conv.nodes = parents_first(conv.nodes, at)
    return conv


def _nodes(key: str, parent: str | None, m: dict[str, Any], at: str) -> list[Message]:
    """Return the messages one claude.ai message becomes, chained from ``parent``: its
    attachments' texts and its non-text blocks in order, then its own text (keyed ``key``)."""
    role, stamp = m["sender"], epoch(m.get("created_at"), at)
    parts: list[Message] = []
    names: list[str] = []
    for i, att in enumerate(_list(m, "attachments", at)):
        name, text = _attachment(att, f"{at} attachment {i}")
        if text.strip():
            parts.append(Message(f"{key}#a{i}", None, role, f"[attachment: {name}]\n{text}",
                                 stamp, at, kind="attachments"))
        elif name:
            names.append(name)
    for i, f in enumerate(_list(m, "files", at)):
        name = f.get("file_name") if isinstance(f, dict) else None
        if not isinstance(name, str):
            raise ImportRejected(f"{at} file {i}: a file needs a 'file_name' string")
        names.append(name)
    texts: list[str] = []
    content = m.get("content")
    if content is not None and not isinstance(content, list):
        raise ImportRejected(f"{at}: content must be a list of blocks")
    for i, block in enumerate(content or []):
        bat = f"{at} block {i}"
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            raise ImportRejected(f"{bat}: a block needs a 'type' string")
        part = _block(f"{key}#b{i}", block, stamp, bat, texts)
        if part is not None:
            parts.append(part)
    text = "\n".join(texts) if texts else m.get("text")
    if text is not None and not isinstance(text, str):
        raise ImportRejected(f"{at}: text must be a string")
    text = text or ""
    if names:
        line = f"[attachments: {', '.join(names)}]"
        text = f"{text}\n{line}" if text.strip() else line
    own = Message(key, None, role, text, stamp, at,
                  kind="text" if text.strip() and not text.startswith("[attachments:")
                  else "attachments")
    if not text.strip() and any(p.skip is None for p in parts):
        own.skip, own.silent = "its parts are kept", True  # only where replies hang
    chain = [*parts, own]
    for node in chain:
        node.parent = parent
        parent = node.key
    return chain


def _list(m: dict[str, Any], field: str, at: str) -> list[Any]:
    value = m.get(field)
    if value is None:
        return []
    if not isinstance(value, list):
        raise ImportRejected(f"{at}: {field} must be a list")
    return value


def _attachment(att: Any, at: str) -> tuple[str, str]:
    """Return (file name, extracted text) of an attachment."""
    if not isinstance(att, dict):
        raise ImportRejected(f"{at}: an attachment must be an object")
    name, text = att.get("file_name", ""), att.get("extracted_content", "")
    if not isinstance(name, str) or not isinstance(text or "", str):
        raise ImportRejected(f"{at}: file_name and extracted_content must be strings")
    return name, text or ""


def _block(key: str, block: dict[str, Any], stamp: float | None, at: str,
           texts: list[str]) -> Message | None:
    """Return the message a non-text block becomes (text blocks go to ``texts``; None)."""
    kind = block["type"]
    if kind == "text":
        if not isinstance(block.get("text"), str):
            raise ImportRejected(f"{at}: a text block needs a 'text' string")
        texts.append(block["text"])
        return None
    if kind == "thinking":
        thought = block.get("thinking")
        if thought is not None and not isinstance(thought, str):
            raise ImportRejected(f"{at}: thinking must be a string")
        if not (thought or "").strip():
            return Message(key, None, "assistant", "", stamp, at, skip="reasoning (empty)")
        return Message(key, None, "assistant", thought, stamp, at, kind="reasoning")
    if kind == "tool_use":
        return Message(key, None, "assistant", tool_line(block, at), stamp, at,
                       kind="tool_use")
    if kind == "tool_result":
        return Message(key, None, "tool", _result(block, at), stamp, at, kind="code_output")
    return Message(key, None, "assistant", "", stamp, at, skip=f"{kind} block")


def _result(block: dict[str, Any], at: str) -> str:
    """Return a tool result as text (≤ 2,000 characters): search results as their titles
    and links, text as it is, an error marked."""
    content = block.get("content")
    lines: list[str] = []
    for item in content if isinstance(content, list) else [content]:
        if isinstance(item, str):
            lines.append(item)
        elif isinstance(item, dict):
            title, url = item.get("title"), item.get("url")
            if isinstance(title, str) or isinstance(url, str):
                lines.append(" — ".join(x for x in (title, url) if isinstance(x, str)))
            elif isinstance(item.get("text"), str):
                lines.append(item["text"])
    name = block.get("name") if isinstance(block.get("name"), str) else "tool"
    text = "\n".join(lines).strip() or f"[{name}: no text]"
    if block.get("is_error"):
        text = f"[error] {text}"
    if len(text) > OUTPUT_CHARS:
        text = f"{one_line(text[:OUTPUT_CHARS], OUTPUT_CHARS)}… [{len(text) - OUTPUT_CHARS} more]"
    return text
