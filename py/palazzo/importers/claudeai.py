"""claude.ai's data export beside ``conversations.json``: ``projects.json`` (the user's
projects) and ``memories.json`` (what Claude remembers about the user). Newer exports split
both into one object a file (``projects/<uuid>.json``, ``memories/<account uuid>.json``);
the readers take the list or the single object alike.

A project is ``{uuid, name, description, is_private, is_starter_project, prompt_template,
created_at, updated_at, creator: {uuid, full_name}, docs: [{uuid, filename, content,
created_at}]}``. Each becomes the transcript ``claude-project:<uuid>`` titled by its name,
every message role user (the user wrote or uploaded it), each the reply to the one before:

- the description, kind text, marked ``[project description]``;
- ``prompt_template``, the project's instructions, kind instructions;
- each knowledge file (``docs``: always text, extracted from PDFs and the like by claude.ai)
  as its own message, kind text, headed ``[knowledge file: <filename>]``.

An empty description or instructions is no message at all (most projects have none); an
empty knowledge file is left out with a reason, and so is all of Anthropic's example
project (``is_starter_project``), which holds no word of the user's.

A memories record is ``{account_uuid, conversations_memory, project_memories, memory_files}``,
any key may be missing: ``conversations_memory`` is Markdown (bold lines head sections,
italic lines sub-sections), ``project_memories`` maps a project uuid to Markdown,
``memory_files`` lists ``{path, content, updated_at}`` files whose content is front matter
(``name``, ``description``, …) and a bullet list of facts. All of it becomes the one
transcript ``claude:memories`` ("Claude memories"), kind memory, role assistant (Claude
wrote it), one message a paragraph or bullet, in file order, each headed by where it sits
(``[Work context › Recent months]``, ``[project memory claude-project:<uuid>]``,
``[memory file /people/bruno.md: Client for …]``; with several accounts in one file, also
the account). An empty ``conversations_memory`` is no message (memory was off); an empty
project memory or memory file is left out with a reason.

A record whose shape breaks this schema raises ImportRejected naming the file and the
project, document or memory.
"""

from __future__ import annotations

import re
from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers.transcript import Message, Transcript, epoch
from palazzo.memory.conversation import MAX_TURN_CHARS

__all__ = ["EMPTY_DOC", "EMPTY_MEMORY_FILE", "EMPTY_PROJECT_MEMORY", "MEMORIES",
           "MEMORIES_TITLE", "PROJECT", "STARTER", "front_matter", "markdown_items",
           "read_memories", "read_projects", "sniff_memories", "sniff_projects"]

PROJECT = "claude-project:"  # a project's transcript is this and its uuid
MEMORIES = "claude:memories"  # the transcript Claude's memories gather in
MEMORIES_TITLE = "Claude memories"
STARTER = "Anthropic's example project (is_starter_project)"
EMPTY_DOC = "empty knowledge file"
EMPTY_PROJECT_MEMORY = "empty project memory"
EMPTY_MEMORY_FILE = "empty memory file"
TOO_LONG = f"longer than {MAX_TURN_CHARS:,} characters"
MEMORY_KEYS = ("conversations_memory", "project_memories", "memory_files")

_ATX = re.compile(r"#{1,6}\s+(.*?)(?:\s+#+)?\s*")  # "## Heading", "## Heading ##"
_BOLD = re.compile(r"\*\*([^*]+)\*\*:?|__([^_]+)__:?")  # a line that is all bold
_ITALIC = re.compile(r"\*([^*\s][^*]*)\*:?|_([^_\s][^_]*)_:?")  # a line that is all italic
_BULLET = re.compile(r"\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+")
_BLANK_LINES = re.compile(r"\n[ \t]*\n")


# -- recognising the files -----------------------------------------------------------------

def _records(doc: Any) -> list[Any] | None:
    """Return the records of a file that is a list of them or one of them, else None."""
    if isinstance(doc, list):
        return doc
    return [doc] if isinstance(doc, dict) else None


def sniff_projects(doc: Any) -> bool:
    """Return whether the parsed JSON ``doc`` is claude.ai projects (``projects.json``, or a
    single ``projects/<uuid>.json``): objects with a ``uuid`` and ``prompt_template`` or
    ``docs``, and no ``chat_messages`` (those are conversations). Cost: one pass."""
    records = _records(doc)
    return bool(records) and all(
        isinstance(p, dict) and "uuid" in p and ("prompt_template" in p or "docs" in p)
        and "chat_messages" not in p for p in records or ())


def sniff_memories(doc: Any) -> bool:
    """Return whether the parsed JSON ``doc`` is claude.ai memories (``memories.json``, or a
    single ``memories/<account uuid>.json``): objects each holding one of
    ``conversations_memory``, ``project_memories``, ``memory_files``. Cost: one pass."""
    records = _records(doc)
    return bool(records) and all(
        isinstance(m, dict) and any(k in m for k in MEMORY_KEYS)
        and "chat_messages" not in m and "mapping" not in m for m in records or ())


def _text(record: dict[str, Any], key: str, at: str) -> str:
    """Return ``record[key]`` as text: "" when missing or null; ImportRejected otherwise."""
    value = record.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ImportRejected(f"{at}: {key} must be a string")
    return value


# -- projects -------------------------------------------------------------------------------

def read_projects(doc: Any, where: str) -> list[Transcript]:
    """Return one transcript a project of the parsed ``projects.json`` ``doc`` (``where`` names
    the file for messages), in file order. Raises ImportRejected naming the project or
    document for a record that breaks the schema, or a uuid used twice. Cost: one pass over
    the projects and their documents."""
    records = _records(doc)
    if records is None:
        raise ImportRejected(f"{where}: projects.json must be a list of projects")
    out: list[Transcript] = []
    first: dict[str, int] = {}
    for n, p in enumerate(records):
        at = f"{where} project {n}"
        if not isinstance(p, dict):
            raise ImportRejected(f"{at}: a project must be an object")
        uuid = p.get("uuid")
        if not isinstance(uuid, str) or not uuid.strip():
            raise ImportRejected(f"{at}: a project needs a 'uuid'")
        if uuid in first:
            raise ImportRejected(f"{at}: repeats the uuid {uuid!r} of project {first[uuid]}")
        first[uuid] = n
        out.append(_project(p, uuid, at))
    return out


def _project(p: dict[str, Any], uuid: str, at: str) -> Transcript:
    """Return the transcript of one project record (its uuid checked)."""
    starter = p.get("is_starter_project")
    if starter is not None and not isinstance(starter, bool):
        raise ImportRejected(f"{at}: is_starter_project must be true or false")
    docs = p.get("docs")
    if docs is None:
        docs = []
    if not isinstance(docs, list):
        raise ImportRejected(f"{at}: docs must be a list")
    name = _text(p, "name", at).strip()
    created = epoch(p.get("created_at"), at)
    conv = Transcript(PROJECT + uuid, name, at)
    description = _text(p, "description", at).strip()
    instructions = _text(p, "prompt_template", at).strip()
    if description:
        conv.nodes.append(Message("description", None, "user",
                                  f"[project description]\n{description}", created,
                                  f"{at} description"))
    if instructions:
        conv.nodes.append(Message("instructions", None, "user",
                                  f"[project instructions]\n{instructions}", created,
                                  f"{at} prompt_template", kind="instructions"))
    for i, d in enumerate(docs):
        conv.nodes.append(_doc(d, i, f"{at} doc {i}"))
    previous: str | None = None
    for node in conv.nodes:
        node.parent, previous = previous, node.key
        if starter:
            node.skip = STARTER
    return conv


def _doc(d: Any, i: int, at: str) -> Message:
    """Return the message one knowledge file becomes, or its reason to be left out."""
    if not isinstance(d, dict):
        raise ImportRejected(f"{at}: a knowledge file must be an object")
    filename = _text(d, "filename", at).strip() or "untitled"
    content = _text(d, "content", at)
    msg = Message(f"doc/{i}", None, "user", f"[knowledge file: {filename}]\n{content}",
                  epoch(d.get("created_at"), at), f"{at} ({filename})")
    if not content.strip():
        msg.skip = EMPTY_DOC
    elif len(msg.text) > MAX_TURN_CHARS:
        msg.skip = f"knowledge file {TOO_LONG}"
    return msg


# -- memories -------------------------------------------------------------------------------

def read_memories(doc: Any, where: str) -> list[Transcript]:
    """Return ``[claude:memories]`` for the parsed ``memories.json`` ``doc`` (``where`` names
    the file for messages), or [] when it remembers nothing. With several accounts in one
    file each message also names its account. Raises ImportRejected naming the account and
    the memory for a record that breaks the schema. Cost: one pass over the text."""
    records = _records(doc)
    if records is None:
        raise ImportRejected(f"{where}: memories.json must be a list of memory records")
    out = Transcript(MEMORIES, MEMORIES_TITLE, f"{where} memories")
    for n, record in enumerate(records):
        at = f"{where} account {n}"
        if not isinstance(record, dict):
            raise ImportRejected(f"{at}: a memory record must be an object")
        account = record.get("account_uuid")
        if account is not None and not isinstance(account, str):
            raise ImportRejected(f"{at}: account_uuid must be a string")
        scope = f"account {account or n}" if len(records) > 1 else ""
        out.nodes.extend(_account(record, f"{n}/", scope, at))
    previous: str | None = None
    for node in out.nodes:
        node.parent, previous = previous, node.key
    return [out] if out.nodes else []


def _account(record: dict[str, Any], key: str, scope: str, at: str) -> list[Message]:
    """Return the messages of one account's memories: its summary's items, each project's
    memory items, then each memory file's items (an empty project memory or file is one
    left-out message)."""
    out: list[Message] = []
    summary = _text(record, "conversations_memory", at)
    for i, (heads, item) in enumerate(markdown_items(summary)):
        out.append(_memory(f"{key}c{i}", (scope, *heads), item, None,
                           f"{at} conversations_memory item {i}"))
    projects = record.get("project_memories")
    if projects is None or projects == []:
        projects = {}
    if not isinstance(projects, dict):
        raise ImportRejected(f"{at}: project_memories must map project uuids to text")
    for uuid, text in projects.items():
        pat = f"{at} project_memories {uuid!r}"
        if not isinstance(text, str):
            raise ImportRejected(f"{pat}: a project memory must be a string")
        items = markdown_items(text)
        if not items:
            out.append(Message(f"{key}p/{uuid}", None, "assistant", "", None, pat,
                               skip=EMPTY_PROJECT_MEMORY, kind="memory"))
        for i, (heads, item) in enumerate(items):
            out.append(_memory(f"{key}p/{uuid}/{i}",
                               (scope, f"project memory {PROJECT}{uuid}", *heads), item,
                               None, f"{pat} item {i}"))
    files = record.get("memory_files")
    if files is None:
        files = []
    if not isinstance(files, list):
        raise ImportRejected(f"{at}: memory_files must be a list")
    for k, f in enumerate(files):
        out.extend(_memory_file(f, f"{key}f{k}", scope, f"{at} memory_files {k}"))
    return out


def _memory_file(f: Any, key: str, scope: str, at: str) -> list[Message]:
    """Return the messages of one memory file: a message a bullet or paragraph of its body,
    headed by its path and the description its front matter gives."""
    if not isinstance(f, dict):
        raise ImportRejected(f"{at}: a memory file must be an object")
    path = _text(f, "path", at).strip() or "untitled"
    meta, body = front_matter(_text(f, "content", at))
    when = epoch(f.get("updated_at"), at)
    about = meta.get("description", "").strip()
    head = f"memory file {path}" + (f": {about}" if about else "")
    items = markdown_items(body)
    if not items:
        return [Message(key, None, "assistant", "", when, f"{at} ({path})",
                        skip=EMPTY_MEMORY_FILE, kind="memory")]
    return [_memory(f"{key}/{i}", (scope, head, *heads), item, when,
                    f"{at} ({path}) item {i}") for i, (heads, item) in enumerate(items)]


def _memory(key: str, heads: tuple[str, ...], item: str, when: float | None,
            at: str) -> Message:
    """Return one memory message: ``[heading › …]`` over the item (no line without one)."""
    context = " › ".join(h for h in heads if h)
    text = f"[{context}]\n{item}" if context else item
    msg = Message(key, None, "assistant", text, when, at, kind="memory")
    if len(text) > MAX_TURN_CHARS:
        msg.skip = f"memory {TOO_LONG}"
    return msg


def front_matter(content: str) -> tuple[dict[str, str], str]:
    """Return (front matter fields, body) of a memory file: the ``key: value`` lines
    between a first line ``---`` and the next ``---``, read line by line (values can hold
    ": ", which strict YAML refuses), quotes around a value removed. Without front matter:
    ({}, content). Cost: one pass over the lines."""
    lines = content.replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, content
    for end in range(1, len(lines)):
        if lines[end].strip() == "---":
            meta: dict[str, str] = {}
            for line in lines[1:end]:
                name, sep, value = line.partition(":")
                if sep and name.strip():
                    meta[name.strip()] = value.strip().strip('"')
            return meta, "\n".join(lines[end + 1:])
    return {}, content


def _heading(line: str) -> tuple[int, str] | None:
    """Return (level, title) when ``line`` is a heading alone on its line: ``#``…``######``
    (levels 1–6), a line all bold (7) or all italic (8), as Claude's memory summaries head
    their sections and sub-sections; else None."""
    for level, pattern in ((0, _ATX), (7, _BOLD), (8, _ITALIC)):
        found = pattern.fullmatch(line)
        if found:
            title = next(g for g in found.groups() if g is not None).strip()
            if not title:
                return None
            return (len(line) - len(line.lstrip("#")) if level == 0 else level), title
    return None


def markdown_items(text: str) -> list[tuple[tuple[str, ...], str]]:
    """Return the items of Markdown ``text`` with the headings they sit under: each bullet
    of a list (its continuation lines joined to it) and each other paragraph is one item;
    a heading alone on a line (``#``, all-bold or all-italic) is no item but heads the items
    after it until a heading of its level or above. A heading nothing follows (a bold line
    that was a sentence, not a title) is kept as an item itself, so no text is lost. Items
    keep their own Markdown. Cost: one pass over the text."""
    heads: list[list[Any]] = []  # [level, title, whether an item sits under it]
    out: list[tuple[tuple[str, ...], str]] = []

    def close(level: int) -> None:
        """Drop the headings at ``level`` or below; one nothing followed becomes an item
        (the innermost first, so an outer heading over it counts as followed)."""
        kept = [h for h in heads if h[0] < level]
        dropped = heads[len(kept):]
        found: list[tuple[tuple[str, ...], str]] = []
        for i in reversed(range(len(dropped))):
            if not dropped[i][2]:
                above = kept + dropped[:i]
                found.append((tuple(t for _, t, _ in above), dropped[i][1]))
                for h in above:
                    h[2] = True
        out.extend(reversed(found))
        heads[:] = kept

    def add(items: list[str]) -> None:
        for h in heads:
            h[2] = True
        path = tuple(t for _, t, _ in heads)
        out.extend((path, item) for item in items)

    for block in _BLANK_LINES.split(text.replace("\r\n", "\n")):
        lines = [line.rstrip() for line in block.split("\n") if line.strip()]
        while lines and (found := _heading(lines[0].strip())):
            close(found[0])
            heads.append([found[0], found[1], False])
            lines.pop(0)
        if not lines:
            continue
        if _BULLET.match(lines[0]):
            bullets: list[str] = []
            for line in lines:
                start = _BULLET.match(line)
                if start:
                    bullets.append(line[start.end():].strip())
                else:
                    bullets[-1] += "\n" + line.strip()
            add([b for b in bullets if b.strip()])
        else:
            add(["\n".join(line.strip() for line in lines)])
    close(0)
    return out
