"""ChatGPT's ``conversations.json``: the reader of its conversations (``chats`` recognises the
file and plans the import).

A conversation is ``{title, create_time, conversation_id, mapping}``; ``mapping`` holds the
nodes ``{message: {author: {role, name}, content: {content_type, …}, create_time, recipient,
channel, metadata}, parent, children}``. The node tree is kept: regenerated and edited answers
become branches of the DAG, not a flattened list.

What a node becomes (its ``kind``, see ``transcript.KINDS``):

- ``text`` / ``multimodal_text`` to everyone: the turn's words; spoken turns
  (``audio_transcription`` parts) are kind ``voice``; attachment and image names are noted in
  one ``[attachments: …]`` line (a turn with nothing else is kind ``attachments``).
- ``user_editable_context``: the user's custom instructions (kind ``instructions``, role user).
- ``thoughts`` / ``reasoning_recap``: the reasoning summary ChatGPT shows (kind ``reasoning``).
- a call to ``python`` (kind ``code``) and its ``execution_output`` (kind ``code_output``), both
  fenced, both role assistant: the code ran for the user and its output was shown to them.
- ``canmore.create_textdoc`` / ``canmore.update_textdoc``: a canvas document; only its latest
  version is kept, as one message of kind ``canvas`` where that version was written.
- a message to ``bio``: a saved memory. It leaves its conversation (skipped there with a
  reason) and joins the extra transcript ``chatgpt:memories``, one message a memory in time
  order.

Everything else is left out with a reason. A node whose shape breaks the export's own schema
(``parts`` not a list, a thought that is not an object, …) raises ImportRejected naming the
file, conversation and node; what the model wrote badly (a canvas call that is not JSON, an
update whose pattern does not match) is only left out, counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.importers.transcript import Message, Transcript, epoch

__all__ = ["MEMORIES", "MEMORIES_TITLE", "SAVED_MEMORY", "read_chatgpt"]

CHATGPT_TEXT = {"text", "multimodal_text"}
MEMORIES = "chatgpt:memories"  # the transcript the saved memories of an export gather in
MEMORIES_TITLE = "ChatGPT saved memories"
# Where a saved memory is counted in its own conversation (the reason is cut at a colon
# when the summary groups reasons, so it has none).
SAVED_MEMORY = f"saved memory (kept in {MEMORIES_TITLE})"
CANVAS_CREATE = "canmore.create_textdoc"
CANVAS_UPDATE = "canmore.update_textdoc"
# Parts of a voice turn that are sound or video, not text: counted, never read.
MEDIA_PARTS = {"audio_asset_pointer", "real_time_user_audio_video_asset_pointer",
               "video_container_asset_pointer"}
_FENCE = re.compile(r"`{3,}")
_SPECIAL = frozenset(".^$*+?{}[]|()")  # what makes a canvas pattern more than text
# A tool an export names only by an internal id, digits in both parts ("t2uay3k.sj1i4kz":
# connectors and GPT actions are named so), not a name a person reads ("python",
# "browser.search", "dalle.text2im").
_TOOL_ID = re.compile(r"(?=[a-z]*\d)[a-z0-9]{5,}\.(?=[a-z]*\d)[a-z0-9]{5,}")


def tool_words(name: str | None) -> str:
    """Return how a skip reason names a tool: its name, "a tool" without one, and for an
    internal id "an unnamed tool (id <id>)". Cost: one regex match."""
    if not name:
        return "a tool"
    return f"an unnamed tool (id {name})" if _TOOL_ID.fullmatch(name) else name


def read_chatgpt(items: list[Any], where: str) -> Iterator[Transcript]:
    """Yield the conversations of a ChatGPT ``conversations.json`` (its parsed list of
    conversations; ``where`` names the file for messages), then, when any memory was saved,
    the transcript ``chatgpt:memories`` holding them. Raises ImportRejected naming the
    conversation and node for anything malformed. Cost: one pass over every node, plus
    one sort of the memories."""
    memories: list[Message] = []
    for n, c in enumerate(items):
        at = f"{where} conversation {n}"
        if not isinstance(c, dict) or not isinstance(c.get("mapping"), dict):
            raise ImportRejected(f"{at}: a ChatGPT conversation needs a 'mapping' object")
        cid = c.get("conversation_id") or c.get("id")
        title = c.get("title") if isinstance(c.get("title"), str) else ""
        if not isinstance(cid, str) or not cid:
            cid = f"{title or 'untitled'}@{c.get('create_time')}"
        conv = Transcript(f"chatgpt:{cid}", title, at)
        mapping: dict[str, Any] = c["mapping"]
        for key, node in mapping.items():
            if not isinstance(node, dict):
                raise ImportRejected(f"{at} node {key!r}: must be an object")
            if not isinstance(node.get("children", []), list) \
                    or not all(isinstance(k, str) for k in node.get("children", [])):
                raise ImportRejected(f"{at} node {key!r}: children must be a list of ids")
            if node.get("parent") is not None and not isinstance(node.get("parent"), str):
                raise ImportRejected(f"{at} node {key!r}: parent must be an id or null")
        roots = [k for k, v in mapping.items() if v.get("parent") not in mapping]
        seen: set[str] = set()
        stack = list(reversed(roots))
        canvas = _Canvas()
        while stack:
            key = stack.pop()
            if key in seen:
                raise ImportRejected(f"{at} node {key!r}: reached twice (the mapping has a "
                                     "cycle or shared children)")
            seen.add(key)
            node = mapping[key]
            msg = _chatgpt_node(key, node, mapping, f"{at} node {key!r}", canvas)
            if msg.kind == "memory" and msg.skip is None:
                memories.append(Message(f"{cid}/{key}", None, msg.role, msg.text,
                                        msg.timestamp, msg.where, kind="memory"))
                msg.skip = SAVED_MEMORY
            conv.nodes.append(msg)
            stack.extend(reversed([k for k in node.get("children", []) if k in mapping]))
        if len(seen) != len(mapping):
            raise ImportRejected(f"{at}: {len(mapping) - len(seen)} node(s) are not reachable "
                                 "from a root (the mapping has a cycle)")
        canvas.finish()
        yield conv
    if memories:
        yield _memories(memories, where)


def _memories(saved: list[Message], where: str) -> Transcript:
    """Return the saved memories as one transcript, oldest first (undated ones last, in the
    order read), each the reply to the one before."""
    out = Transcript(MEMORIES, MEMORIES_TITLE, f"{where} saved memories")
    ordered = sorted(saved, key=lambda m: (m.timestamp is None, m.timestamp or 0.0))
    previous: str | None = None
    for m in ordered:
        m.parent = previous
        out.nodes.append(m)
        previous = m.key
    return out


# -- canvas --------------------------------------------------------------------------------

@dataclass(slots=True)
class _Canvas:
    """The canvas documents of one conversation as its calls are read: each document's
    current text, title and the message holding its latest version."""

    text: dict[str, str] = field(default_factory=dict)
    title: dict[str, str] = field(default_factory=dict)
    latest: dict[str, Message] = field(default_factory=dict)
    current: str | None = None  # the document an update without an id applies to

    def write(self, doc: str, msg: Message) -> None:
        """Make ``msg`` hold ``doc``'s current version, and the one before it a skipped,
        earlier version."""
        before = self.latest.get(doc)
        if before is not None:
            before.skip = "earlier canvas version (the latest is kept)"
        msg.text = f"[canvas: {self.title[doc]}]\n{self.text[doc]}"
        msg.kind = "canvas"
        self.latest[doc] = msg
        self.current = doc

    def finish(self) -> None:
        """Leave out documents whose latest version is empty."""
        for doc, msg in self.latest.items():
            if not self.text[doc].strip():
                msg.skip = "empty canvas document"


def _canvas_id(key: str, mapping: dict[str, Any]) -> tuple[str | None, str | None]:
    """Return (textdoc id, title) from the tool's answer to the canvas call ``key`` (a child
    whose ``metadata.canvas`` names them), or Nones when it did not answer."""
    for child in mapping[key].get("children", []):
        msg = mapping[child].get("message") if child in mapping else None
        meta = msg.get("metadata") if isinstance(msg, dict) else None
        canvas = meta.get("canvas") if isinstance(meta, dict) else None
        if isinstance(canvas, dict):
            doc = canvas.get("textdoc_id")
            title = canvas.get("title")
            return (doc if isinstance(doc, str) and doc else None,
                    title if isinstance(title, str) and title else None)
    return None, None


def _canvas_call(out: Message, recipient: str, args_text: str, key: str,
                 mapping: dict[str, Any], canvas: _Canvas) -> None:
    """Apply one canvas call (its JSON arguments ``args_text``) to ``canvas``; ``out``
    becomes the document's latest version or is skipped with the reason it did not apply."""
    out.role = "assistant"
    try:
        args = jsontext.loads(args_text, out.where, ImportRejected)
    except ImportRejected:
        out.skip = "canvas call that is not valid JSON"
        return
    if not isinstance(args, dict):
        out.skip = "canvas call that is not valid JSON"
        return
    doc, title = _canvas_id(key, mapping)
    if recipient == CANVAS_CREATE:
        name, content = args.get("name"), args.get("content")
        if not isinstance(content, str):
            out.skip = "canvas document without content"
            return
        doc = doc or (name if isinstance(name, str) and name else f"canvas@{key}")
        canvas.text[doc] = content
        canvas.title[doc] = title or (name if isinstance(name, str) and name else "untitled")
        canvas.write(doc, out)
        return
    doc = doc if doc in canvas.text else canvas.current
    updates = args.get("updates")
    if doc is None or not isinstance(updates, list) or not updates:
        out.skip = "canvas update that did not apply"
        return
    text = canvas.text[doc]
    for u in updates:
        changed = _update(text, u)
        if changed is None:
            out.skip = "canvas update that did not apply"
            return
        text = changed
    canvas.text[doc] = text
    if title:
        canvas.title[doc] = title
    canvas.write(doc, out)


def _update(text: str, update: Any) -> str | None:
    """Return ``text`` after one canvas update ``{pattern, replacement, multiple}``, or None
    when it does not apply (not that shape, no match, or a pattern that is a real regular
    expression). The pattern ``.*`` rewrites the whole document, as ChatGPT's canvas tool
    does for most updates; a pattern of literal text (backslash escapes allowed) replaces
    that text. Other patterns are not run: a regular expression from an imported file could
    backtrack for minutes, and a browser tab would hang on it. The replacement is taken
    literally. Cost: one substring search over ``text``."""
    if not isinstance(update, dict) or not isinstance(update.get("pattern"), str) \
            or not isinstance(update.get("replacement"), str):
        return None
    pattern, replacement = update["pattern"], update["replacement"]
    if pattern in (".*", "^.*$", "(?s).*", "(?s)^.*$"):
        return replacement
    literal = _literal(pattern)
    if not literal or literal not in text:
        return None
    return text.replace(literal, replacement, -1 if update.get("multiple") else 1)


def _literal(pattern: str) -> str | None:
    """Return the text a regular expression ``pattern`` matches when it is plain text (its
    special characters backslash-escaped), else None."""
    out: list[str] = []
    escaped = False
    for ch in pattern:
        if escaped:
            if ch.isalnum():
                return None  # \d, \s, \b …: a class or an anchor, not a character
            out.append(ch)
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch in _SPECIAL:
            return None
        else:
            out.append(ch)
    return None if escaped else "".join(out)


# -- one node ------------------------------------------------------------------------------

def _chatgpt_node(key: str, node: dict[str, Any], mapping: dict[str, Any], at: str,
                  canvas: _Canvas | None = None) -> Message:
    """Return the message node ``key`` becomes: kept with its text and kind, or with the
    reason it is left out. Canvas calls update ``canvas`` (the conversation's documents).
    Cost: O(size of the node); a canvas update also O(size of its document)."""
    canvas = canvas if canvas is not None else _Canvas()
    parent = node.get("parent") if node.get("parent") in mapping else None
    msg = node.get("message")
    if msg is None:
        return Message(key, parent, "system", "", None, at, skip="empty node", silent=True)
    if not isinstance(msg, dict) or not isinstance(msg.get("author"), dict) \
            or not isinstance(msg.get("content"), dict):
        raise ImportRejected(f"{at}: message needs 'author' and 'content' objects")
    content = msg["content"]
    ctype = content.get("content_type")
    if not isinstance(ctype, str):
        raise ImportRejected(f"{at}: content.content_type must be a string")
    author = msg["author"]
    out = Message(key, parent, author.get("role"), "", epoch(msg.get("create_time"), at), at)
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    recipient = msg.get("recipient", "all")
    if recipient is None:
        recipient = "all"
    if not isinstance(recipient, str):
        raise ImportRejected(f"{at}: recipient must be a string")
    tool = author.get("name") if isinstance(author.get("name"), str) else None

    if ctype == "user_editable_context":
        return _instructions(out, content, meta)
    if ctype == "model_editable_context":
        out.skip = "memory snapshot (model_editable_context; memories come from bio calls)"
        return out
    if ctype in ("thoughts", "reasoning_recap"):
        return _reasoning(out, content, ctype)
    if ctype == "execution_output":
        return _code_output(out, content)
    if recipient in (CANVAS_CREATE, CANVAS_UPDATE):
        _canvas_call(out, recipient, _body(content, ctype, at), key, mapping, canvas)
        return out
    if recipient == "python":
        return _code(out, content, ctype, at, "python")
    if recipient == "bio":
        out.text, out.kind, out.role = _body(content, ctype, at).strip(), "memory", "assistant"
        if not out.text:
            out.skip = "empty saved memory"
        return out
    if out.role == "tool":  # a tool's answer to the assistant (its recipient)
        out.skip = f"tool output from {tool_words(tool)}"
        return out
    if recipient != "all":
        out.skip = f"tool call to {tool_words(recipient)}"
        return out
    if ctype == "code":  # code shown in the conversation itself, not run
        return _code(out, content, ctype, at)
    if ctype not in CHATGPT_TEXT:
        out.skip = f"content type {ctype}"
    elif meta.get("is_visually_hidden_from_conversation"):
        out.skip = "hidden message"
    elif "analysis" in (msg.get("channel"), meta.get("channel")):
        out.skip = "reasoning (analysis channel)"
    else:
        _turn(out, content, meta, at)
    return out


def _body(content: dict[str, Any], ctype: str, at: str) -> str:
    """Return the text of a call's content: ``text`` for ``code``, the string parts for
    ``text`` / ``multimodal_text``."""
    if ctype == "code" or "parts" not in content:
        text = content.get("text", "")
        if not isinstance(text, str):
            raise ImportRejected(f"{at}: content.text must be a string")
        return text
    parts = content["parts"]
    if not isinstance(parts, list):
        raise ImportRejected(f"{at}: content.parts must be a list")
    return "\n".join(p for p in parts if isinstance(p, str))


def _fenced(text: str, language: str = "") -> str:
    """Return ``text`` as a Markdown code block, its fence longer than any run of backticks
    inside."""
    longest = max((len(m.group()) for m in _FENCE.finditer(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.strip(chr(10))}\n{fence}"


def _code(out: Message, content: dict[str, Any], ctype: str, at: str,
          default: str = "") -> Message:
    """Code the assistant ran (or showed): kind code, fenced with its language (``default``
    when the export says none or "unknown")."""
    code = _body(content, ctype, at)
    language = content.get("language")
    if not isinstance(language, str) or language.strip() in ("", "unknown"):
        language = default
    out.role, out.kind = "assistant", "code"
    if not code.strip():
        out.skip = "empty code"
    else:
        out.text = _fenced(code, language)
    return out


def _code_output(out: Message, content: dict[str, Any]) -> Message:
    """What the code run printed: kind code_output, fenced, role tool (the palace keeps
    tool turns of these kinds; see ``chats``)."""
    text = content.get("text", "")
    if not isinstance(text, str):
        raise ImportRejected(f"{out.where}: execution_output text must be a string")
    out.role, out.kind = "tool", "code_output"
    if not text.strip():
        out.skip = "empty code output"
    else:
        out.text = _fenced(text)
    return out


def _reasoning(out: Message, content: dict[str, Any], ctype: str) -> Message:
    """The reasoning summary ChatGPT shows: each thought's summary and content
    (``thoughts``), or the one line ``reasoning_recap`` ("Thought for 15s"). Kind reasoning,
    marked ``[reasoning]``."""
    lines: list[str] = []
    if ctype == "thoughts":
        thoughts = content.get("thoughts", [])
        if not isinstance(thoughts, list):
            raise ImportRejected(f"{out.where}: content.thoughts must be a list")
        for i, t in enumerate(thoughts):
            if not isinstance(t, dict):
                raise ImportRejected(f"{out.where}: thought {i} must be an object")
            for name in ("summary", "content"):
                if t.get(name) is not None and not isinstance(t.get(name), str):
                    raise ImportRejected(f"{out.where}: thought {i} {name} must be text")
            summary, body = (t.get("summary") or "").strip(), (t.get("content") or "").strip()
            lines.append("\n".join(x for x in (f"**{summary}**" if summary else "", body)
                                   if x))
    else:
        recap = content.get("content", "")
        if not isinstance(recap, str):
            raise ImportRejected(f"{out.where}: reasoning_recap content must be text")
        lines.append(recap.strip())
    out.role, out.kind = "assistant", "reasoning"
    text = "\n\n".join(x for x in lines if x)
    if not text:
        out.skip = "empty reasoning"
    else:
        out.text = f"[reasoning]\n{text}"
    return out


_FENCED_BLOCK = re.compile(r"```(.*)```", re.DOTALL)


def _unwrap(text: str) -> str:
    """Return the user's own words from a custom-instructions field: ChatGPT wraps them in a
    preamble and a ``` block."""
    found = _FENCED_BLOCK.search(text)
    return (found.group(1) if found else text).strip()


def _instructions(out: Message, content: dict[str, Any], meta: dict[str, Any]) -> Message:
    """The user's custom instructions: "about me" and "how to respond", as the user wrote
    them (``metadata.user_context_message_data`` when present, else ``user_profile`` /
    ``user_instructions`` without ChatGPT's preamble). Kind instructions, role user."""
    fields = []
    for name in ("user_profile", "user_instructions"):
        value = content.get(name)
        if value is not None and not isinstance(value, str):
            raise ImportRejected(f"{out.where}: content.{name} must be text")
        fields.append(_unwrap(value or ""))
    plain = meta.get("user_context_message_data")
    if isinstance(plain, dict):
        for i, name in enumerate(("about_user_message", "about_model_message")):
            if isinstance(plain.get(name), str) and plain[name].strip():
                fields[i] = plain[name].strip()
    about, respond = fields
    out.role, out.kind = "user", "instructions"
    sections = [f"About me:\n{about}" if about else "",
                f"How to respond:\n{respond}" if respond else ""]
    text = "\n\n".join(s for s in sections if s)
    if not text:
        out.skip = "empty custom instructions"
    else:
        out.text = f"[custom instructions]\n{text}"
    return out


def _turn(out: Message, content: dict[str, Any], meta: dict[str, Any], at: str) -> None:
    """Fill ``out`` from a text or multimodal turn: its string parts and voice transcripts,
    then one line naming its attachments and images."""
    parts = content.get("parts", [])
    if not isinstance(parts, list):
        raise ImportRejected(f"{at}: content.parts must be a list")
    texts: list[str] = []
    voice = False
    images: list[str] = []  # file ids of the image parts
    media = other = 0
    for i, p in enumerate(parts):
        if isinstance(p, str):
            texts.append(p)
            continue
        if not isinstance(p, dict):
            raise ImportRejected(f"{at}: part {i} must be text or an object")
        kind = p.get("content_type")
        if kind == "audio_transcription":
            if not isinstance(p.get("text", ""), str):
                raise ImportRejected(f"{at}: part {i} (audio_transcription) text must be text")
            if p.get("text", "").strip():
                texts.append(p["text"])
                voice = True
        elif kind == "image_asset_pointer":
            pointer = p.get("asset_pointer")
            images.append(pointer.rsplit("/", 1)[-1] if isinstance(pointer, str) else "")
        elif kind in MEDIA_PARTS:
            media += 1
        else:
            other += 1
    names = _attachments(meta, at)
    named = {fid for fid, _ in names}
    listed = [name for _, name in names]
    unnamed = sum(1 for fid in images if not fid or fid not in named)
    if unnamed:
        listed.append("1 image" if unnamed == 1 else f"{unnamed} images")
    text = "\n".join(texts)
    out.kind = "voice" if voice else "text"
    if not text.strip():
        if names:
            out.kind = "attachments"
        elif unnamed:
            out.skip = "image only (no text or file name)"
            return
        elif media:
            out.skip = "audio only (no transcript)"
            return
        elif other:
            out.skip = "no text (non-text content only)"
            return
    note = f"[attachments: {', '.join(listed)}]" if listed and (names or text.strip()) else ""
    out.text = "\n".join(x for x in (text, note) if x)


def _attachments(meta: dict[str, Any], at: str) -> list[tuple[str, str]]:
    """Return (file id, name) of each named attachment in ``metadata.attachments``."""
    found = meta.get("attachments")
    if found is None:
        return []
    if not isinstance(found, list):
        raise ImportRejected(f"{at}: metadata.attachments must be a list")
    out = []
    for i, a in enumerate(found):
        if not isinstance(a, dict):
            raise ImportRejected(f"{at}: attachment {i} must be an object")
        name, fid = a.get("name"), a.get("id")
        if name is not None and not isinstance(name, str):
            raise ImportRejected(f"{at}: attachment {i} name must be text")
        if name and name.strip():
            out.append((fid if isinstance(fid, str) else "", name.strip()))
    return out
