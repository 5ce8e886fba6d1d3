"""Slack workspace exports (Slack's "Export data": the ``.zip`` or the folder it unpacks to):
every channel becomes one conversation, its threads kept as branches.

An export holds ``users.json`` (the members), ``channels.json`` (public channels) and, in an
export that includes private conversations, ``groups.json`` (private channels), ``dms.json``
(direct messages) and ``mpims.json`` (group direct messages); then one folder per
conversation (named by the channel's ``name``; a direct message's folder by its ``id``)
holding a ``YYYY-MM-DD.json`` list of that day's messages. A message is ``{type: "message",
user, text, ts, …}`` with, as it applies: ``subtype`` (``channel_join``, ``bot_message``,
``thread_broadcast``, …), ``thread_ts`` (a thread's parent carries its own ``ts`` there, a reply
its parent's), ``reply_count``/``replies`` on a parent, ``files`` (``file`` in exports before
2019), ``blocks`` (rich text), ``attachments`` (legacy bot and unfurl cards), ``edited``,
``reactions``, ``bot_id``/``bot_profile``/``username`` for apps, and ``user_profile`` (the
author's names as they were).

What each message becomes (one ``transcript.Message``, keyed by its ``ts``, which Slack keeps
unique within a channel):

- a person's message: role ``user``, text ``**<name>**: <text>``; the name is the author's
  ``profile.display_name``, else ``profile.real_name``, ``real_name`` or ``name`` from
  ``users.json`` (else from a message's ``user_profile``; an unknown author by their id);
- an app's or bot's message (``bot_message``, or any message with a ``bot_id``): role
  ``assistant``, named by ``username``, ``bot_profile.name``, the bot user's name or the
  ``bot_id``; a bot's layout blocks (sections, context) are added below its ``text``;
- ``<@U…>`` becomes ``@<name>``, ``<#C…|name>`` ``#name``, ``<!channel>`` ``@channel``, a link
  ``<url|label>`` ``[label](url)``; Slack's ``&lt;``, ``&gt;`` and ``&amp;`` are unescaped;
- shared files add a line ``[attachments: name, …]``; a message with files and no text is of
  kind ``attachments``; a message with no ``text`` is read from its rich-text ``blocks``, then
  from its legacy ``attachments``;
- an edited message is exported with its final text, which is what is kept; reactions, stars
  and pins are not text and are left out (the message is kept).

Order and branches: a channel's messages are read in ``ts`` order over all its day files;
the top-level messages chain one after another; a thread's replies chain below their parent
(the first reply's parent is the thread's parent message, each later reply's the reply
before), so a thread is a branch off the channel. A reply whose parent is not in the export
(outside the exported dates) is read as a top-level message.

Left out with a reason: joins, leaves, topic, purpose and name changes, archiving, pins and
the other system subtypes; deleted messages (``tombstone``: their replies are kept); hidden
messages; subtypes this reader does not know; messages with no text, blocks or files; a
message repeated with the same ``ts`` and content; JSON files in a channel folder that are
not day files.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers._files import open_regular, regular_files
from palazzo.importers._zip import inflation
from palazzo.importers.transcript import Message, Transcript, epoch, json_document

__all__ = ["is_slack_export", "read_slack"]

USERS = "users.json"
# The conversation lists an export may hold, and what a conversation of each list is.
LISTS = (("channels.json", "channel"), ("groups.json", "private channel"),
         ("dms.json", "direct message"), ("mpims.json", "group direct message"))
DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}\.json")
TS = re.compile(r"\d{1,12}(\.\d{1,9})?")
BLOCK_BYTES = 1 << 20
# Subtypes that are somebody's words; every other subtype is left out with a reason.
SPOKEN = {"thread_broadcast", "reply_broadcast", "file_share", "me_message", "bot_message",
          "slackbot_response"}
SYSTEM = {
    "channel_join": "a member joined the channel",
    "channel_leave": "a member left the channel",
    "group_join": "a member joined the private channel",
    "group_leave": "a member left the private channel",
    "channel_topic": "the channel topic was changed",
    "channel_purpose": "the channel description was changed",
    "channel_name": "the channel was renamed",
    "group_topic": "the channel topic was changed",
    "group_purpose": "the channel description was changed",
    "group_name": "the channel was renamed",
    "channel_archive": "the channel was archived",
    "channel_unarchive": "the channel was unarchived",
    "group_archive": "the channel was archived",
    "group_unarchive": "the channel was unarchived",
    "channel_convert_to_private": "the channel was made private",
    "channel_convert_to_public": "the channel was made public",
    "pinned_item": "an item was pinned",
    "unpinned_item": "an item was unpinned",
    "bot_add": "an app was added",
    "bot_remove": "an app was removed",
    "bot_enable": "an app was enabled",
    "bot_disable": "an app was disabled",
    "tombstone": "a deleted message (its replies are kept)",
    "message_deleted": "a deletion record",
    "message_changed": "an edit record",
    "message_replied": "a reply notice",
    "reminder_add": "a reminder was set",
    "huddle_thread": "a huddle notice",
    "sh_room_created": "a call notice",
    "channel_canvas_updated": "a canvas update notice",
    "file_comment": "a comment on a file (legacy)",
    "file_mention": "a file mention (legacy)",
}
TOKEN = re.compile(r"<([^<>\n]*)>")
SPECIAL = {"channel": "@channel", "here": "@here", "everyone": "@everyone", "group": "@channel"}


@dataclass(slots=True)
class _Reader:
    """The files of an export (a folder or a zip), read under one byte budget."""

    path: Path
    archive: zipfile.ZipFile | None = None
    prefix: str = ""  # the zip folder holding channels.json ("" at the archive's root)
    limit: int = 0
    used: int = 0
    names: list[str] = field(default_factory=list)  # "users.json", "general/2020-01-01.json"
    # Entries of a folder export that are not regular files (FIFOs, sockets, devices):
    # never opened, left out with the reason.
    special: list[tuple[str, str]] = field(default_factory=list)

    def where(self, name: str) -> str:
        """Return how messages name the export file ``name``."""
        if self.archive is not None:
            return f"{self.path}!{self.prefix}{name}"
        return str(self.path / name)

    def load(self, name: str) -> Any:
        """Return the parsed JSON of the export file ``name``, counting its bytes against the
        budget while reading (1 MiB at a time); raise ImportRejected naming the file when the
        budget runs out, a zip member passes a zip bomb's bound
        (:func:`palazzo.importers._zip.inflation`), the bytes are not JSON text or the file
        cannot be read."""
        at = self.where(name)
        data = bytearray()
        try:
            if self.archive is not None:
                info = self.archive.getinfo(self.prefix + name)
                bound = inflation(info, self.path.stat().st_size, at)
                with self.archive.open(info) as member:
                    while block := member.read(self._next()):
                        self._count(block, len(data), at)
                        data += block
                        bound.check(len(data))
            else:
                with open_regular(self.path / name) as file:
                    while block := file.read(self._next()):
                        self._count(block, len(data), at)
                        data += block
        except _zip_errors() as err:
            raise ImportRejected(f"{at}: cannot read it: {err}") from None
        return json_document(data, at)

    def _next(self) -> int:
        """Return how many bytes to read next: 1 MiB, or one past what the budget has left
        (so an export over the budget is refused having read at most ``limit + 1`` bytes)."""
        return max(1, min(BLOCK_BYTES, self.limit - self.used + 1))

    def _count(self, block: bytes, offset: int, at: str) -> None:
        self.used += len(block)
        if self.used > self.limit:
            raise ImportRejected(f"{at}: the export holds more than the {self.limit} bytes an "
                                 "import may read; refusing to read further")
        nul = block.find(b"\x00")
        if nul >= 0:
            raise ImportRejected(f"{at}: not JSON text (a NUL byte at offset {offset + nul})")


def _zip_errors() -> tuple[type[BaseException], ...]:
    """The exceptions the standard zip reader raises on a damaged or unsupported archive."""
    errors: list[type[BaseException]] = [zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError,
                                         NotImplementedError, EOFError, OSError, zlib.error]
    try:
        import lzma
    except ImportError:  # Pyodide ships without lzma
        pass
    else:
        errors.append(lzma.LZMAError)
    return tuple(errors)


def _zip_prefix(names: list[str]) -> str | None:
    """Return the folder of a zip's names holding both ``channels.json`` and ``users.json``
    (``""`` at the root; the shallowest if several), or None."""
    found = set(names)
    heads = sorted((n[: -len("channels.json")] for n in names
                    if n == "channels.json" or n.endswith("/channels.json")), key=len)
    return next((h for h in heads if h + USERS in found), None)


def is_slack_export(path: Path) -> bool:
    """Return whether ``path`` is a Slack export: a folder holding ``channels.json`` and
    ``users.json``, or a zip holding both (at its root or in one folder). Reads no content;
    a zip's directory only. Cost: O(entries of the zip)."""
    try:
        if path.is_dir():
            return (path / "channels.json").is_file() and (path / USERS).is_file()
        if not path.is_file() or not zipfile.is_zipfile(path):
            return False
        with zipfile.ZipFile(path) as archive:
            return _zip_prefix(archive.namelist()) is not None
    except (OSError, *_zip_errors()):
        return False


def _open(path: Path, limit: int) -> _Reader:
    """Return the reader of the export at ``path`` with its file names (the top files and
    those one folder down); raise ImportRejected when it is not a Slack export."""
    if path.is_dir():
        if not (path / "channels.json").is_file() or not (path / USERS).is_file():
            raise ImportRejected(f"{path}: not a Slack export (no channels.json and users.json "
                                 "in this folder)")
        names: list[str] = []
        special: list[tuple[str, str]] = []
        for entry in sorted(path.iterdir()):
            if entry.is_dir():
                files, left = regular_files(sorted(entry.iterdir()))
                names.extend(f"{entry.name}/{f.name}" for f in files)
            else:
                files, left = regular_files([entry])
                names.extend(f.name for f in files)
            special.extend((str(p), why) for p, why in left if not p.is_dir())
        return _Reader(path, limit=limit, names=names, special=special)
    if not path.is_file():
        raise ImportRejected(f"{path}: no such file or folder")
    try:
        archive = zipfile.ZipFile(path)
    except (*_zip_errors(), ValueError) as err:
        raise ImportRejected(f"{path}: not a Slack export (not a readable zip: {err})") from None
    prefix = _zip_prefix(archive.namelist())
    if prefix is None:
        archive.close()
        raise ImportRejected(f"{path}: not a Slack export (the archive has no channels.json "
                             "with users.json beside it)")
    names = []
    for name in archive.namelist():
        rest = name[len(prefix):] if name.startswith(prefix) else None
        if rest and not rest.endswith("/") and rest.count("/") <= 1:
            names.append(rest)
    return _Reader(path, archive, prefix, limit, names=sorted(names))


# -- people and conversations -------------------------------------------------------------------

@dataclass(slots=True)
class _Person:
    name: str
    bot: bool = False


@dataclass(slots=True)
class _Conversation:
    id: str
    kind: str  # channel, private channel, direct message, group direct message
    name: str  # the channel's name ("" for a direct message)
    members: list[str]
    folder: str
    where: str


def _text_field(record: dict[str, Any], *keys: str) -> str:
    """Return the first of ``keys`` whose value is non-blank text, stripped; else ""."""
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def _people(doc: Any, where: str) -> dict[str, _Person]:
    """Return users.json as {id: person}: the name Slack shows (display name, else real
    name, else user name) and whether it is a bot."""
    if not isinstance(doc, list):
        raise ImportRejected(f"{where}: users.json must be a JSON list of users")
    people: dict[str, _Person] = {}
    for i, user in enumerate(doc):
        if not isinstance(user, dict) or not isinstance(user.get("id"), str) or not user["id"]:
            raise ImportRejected(f"{where} item {i}: a user must be an object with an 'id'")
        profile = user.get("profile") if isinstance(user.get("profile"), dict) else {}
        name = (_text_field(profile, "display_name", "real_name")
                or _text_field(user, "real_name", "name") or user["id"])
        people[user["id"]] = _Person(name, user.get("is_bot") is True)
    return people


def _conversations(reader: _Reader) -> list[_Conversation]:
    """Return the conversations the export's lists name, channels first, each once."""
    out: list[_Conversation] = []
    seen: set[str] = set()
    for file, kind in LISTS:
        if file not in reader.names:
            continue
        where = reader.where(file)
        doc = reader.load(file)
        if not isinstance(doc, list):
            raise ImportRejected(f"{where}: {file} must be a JSON list of conversations")
        for i, item in enumerate(doc):
            at = f"{where} item {i}"
            if not isinstance(item, dict) or not isinstance(item.get("id"), str) \
                    or not item["id"]:
                raise ImportRejected(f"{at}: a conversation must be an object with an 'id'")
            name = item.get("name")
            if name is not None and not isinstance(name, str):
                raise ImportRejected(f"{at}: the conversation's 'name' must be text")
            members = item.get("members")
            members = [m for m in members if isinstance(m, str)] \
                if isinstance(members, list) else []
            if item["id"] in seen:
                continue
            seen.add(item["id"])
            out.append(_Conversation(item["id"], kind, name or "", members,
                                     name or item["id"], at))
    return out


# -- one channel -------------------------------------------------------------------------------

@dataclass(slots=True)
class _Context:
    """What rendering needs: the names of people and of channels."""

    people: dict[str, _Person]
    channels: dict[str, str]  # id -> name


def _ts(value: Any, at: str, key: str) -> str:
    """Return a Slack timestamp (``"1516454537.000093"``) as given; raise ImportRejected
    for anything else."""
    if not isinstance(value, str) or not TS.fullmatch(value):
        shown = repr(value)[:40]
        raise ImportRejected(f"{at}: '{key}' must be a Slack timestamp like "
                             f"\"1516454537.000093\", got {shown}")
    return value


def _days(reader: _Reader, folder: str, conv: Transcript
          ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield (where, message) of every day file of ``folder`` in date order; other JSON files
    of the folder are recorded in ``conv.skipped``."""
    for name in reader.names:
        head, _, file = name.partition("/")
        if head != folder or not file:
            continue
        where = reader.where(name)
        if not DAY_FILE.fullmatch(file):
            if file.endswith(".json"):
                conv.skipped.append((where, "not a day file (YYYY-MM-DD.json)"))
            continue
        doc = reader.load(name)
        if not isinstance(doc, list):
            raise ImportRejected(f"{where}: a day file must be a JSON list of messages")
        for i, message in enumerate(doc):
            at = f"{where} message {i}"
            if not isinstance(message, dict):
                raise ImportRejected(f"{at}: a message must be a JSON object")
            yield at, message


def _channel(conv: Transcript, messages: list[tuple[str, dict[str, Any]]],
             context: _Context) -> None:
    """Fill ``conv.nodes`` from a channel's (where, message) list: ``ts`` order, top-level
    messages chained, each thread a chain below its parent. Cost: O(n log n)."""
    timed: list[tuple[float, str, str, dict[str, Any]]] = []
    for at, m in messages:
        ts = _ts(m.get("ts"), at, "ts")
        timed.append((float(ts), ts, at, m))
    timed.sort(key=lambda t: t[0])
    first: dict[str, tuple[str, dict[str, Any]]] = {}
    kept: list[tuple[float, str, str, dict[str, Any]]] = []
    for item in timed:
        _, ts, at, m = item
        if ts in first:
            earlier_at, earlier = first[ts]
            if earlier != m:
                raise ImportRejected(f"{at}: repeats the ts {ts} of {earlier_at} with different "
                                     "content")
            conv.skipped.append((at, f"repeats the message at {earlier_at}"))
            continue
        first[ts] = (at, m)
        kept.append(item)
    last_top: str | None = None
    last_reply: dict[str, str] = {}  # thread parent ts -> latest reply ts
    for seconds, ts, at, m in kept:
        thread = m.get("thread_ts")
        if thread is not None:
            thread = _ts(thread, at, "thread_ts")
        if thread is not None and thread != ts and thread in first and float(thread) < seconds:
            parent: str | None = last_reply.get(thread, thread)
            last_reply[thread] = ts
        else:
            parent, last_top = last_top, ts
        node = _message(m, at, context)
        node.key, node.parent, node.timestamp = ts, parent, epoch(seconds, at)
        conv.nodes.append(node)


def _message(m: dict[str, Any], at: str, context: _Context) -> Message:
    """Return one message as a ``Message`` (key, parent and time set by the caller): its
    speaker's name and its text, or the reason it is left out."""
    subtype = m.get("subtype")
    if subtype is not None and not isinstance(subtype, str):
        raise ImportRejected(f"{at}: 'subtype' must be text")
    text = m.get("text")
    if text is not None and not isinstance(text, str):
        raise ImportRejected(f"{at}: 'text' must be text")
    speaker, bot = _speaker(m, context)
    role = "assistant" if bot else "user"
    skip = None
    if subtype in SYSTEM:
        skip = f"Slack {subtype} message ({SYSTEM[subtype]})"
    elif subtype and subtype not in SPOKEN:
        skip = f"Slack {subtype} message (a subtype this reader does not keep)"
    elif m.get("hidden") is True:
        skip = "hidden message"
    if skip is not None:
        return Message("", None, role, text or "", None, at, skip=skip)
    body = _render(text or "", context)
    extra = _blocks(m.get("blocks"), at, context, rich=not body.strip())
    if extra and extra not in body:
        body = f"{body}\n{extra}" if body.strip() else extra
    if not body.strip():
        body = _legacy(m.get("attachments"), at, context)
    files = _files(m, at)
    kind = "text"
    if files:
        line = f"[attachments: {', '.join(files)}]"
        kind = "text" if body.strip() else "attachments"
        body = f"{body.rstrip()}\n{line}" if body.strip() else line
    if not body.strip():
        return Message("", None, role, "", None, at,
                       skip="empty message (no text, blocks or files)")
    return Message("", None, role, f"**{speaker}**: {body.strip()}", None, at, kind=kind)


def _speaker(m: dict[str, Any], context: _Context) -> tuple[str, bool]:
    """Return (name, is a bot) of a message's author."""
    user = m.get("user") if isinstance(m.get("user"), str) else ""
    person = context.people.get(user)
    bot_id = m.get("bot_id") if isinstance(m.get("bot_id"), str) else ""
    bot = m.get("subtype") == "bot_message" or bool(bot_id) or (person is not None and person.bot)
    if bot:
        profile = m.get("bot_profile") if isinstance(m.get("bot_profile"), dict) else {}
        name = (_text_field(m, "username") or _text_field(profile, "name")
                or (person.name if person else "") or bot_id or user or "a bot")
        return name, True
    return (person.name if person else user or "an unknown user"), False


def _render(text: str, context: _Context) -> str:
    """Return Slack mrkdwn ``text`` made readable: mentions and channel links by name,
    links as ``[label](url)``, ``&lt;`` ``&gt;`` ``&amp;`` unescaped. Cost: O(len(text))."""
    out: list[str] = []
    at = 0
    for token in TOKEN.finditer(text):
        out.append(_unescape(text[at:token.start()]))
        out.append(_token(token.group(1), context))
        at = token.end()
    out.append(_unescape(text[at:]))
    return "".join(out)


def _unescape(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def _token(inner: str, context: _Context) -> str:
    """Return one ``<…>`` token of Slack mrkdwn as text."""
    target, _, label = inner.partition("|")
    label = _unescape(label)
    if target.startswith("@"):
        person = context.people.get(target[1:])
        return "@" + (person.name if person else label or target[1:])
    if target.startswith("#"):
        return "#" + (context.channels.get(target[1:]) or label or target[1:])
    if target.startswith("!"):
        word = target[1:].split("^", 1)[0]
        if word in SPECIAL:
            return SPECIAL[word]
        return label or f"@{word}"
    url = _unescape(target)
    return f"[{label}]({url})" if label and label != url else url


def _blocks(blocks: Any, at: str, context: _Context, rich: bool) -> str:
    """Return the text of a message's ``blocks``: section, header and context blocks always
    (an app's layout), rich-text blocks only when ``rich`` (a person's rich text repeats
    their ``text``)."""
    if blocks is None:
        return ""
    if not isinstance(blocks, list):
        raise ImportRejected(f"{at}: 'blocks' must be a list")
    lines: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "rich_text" and rich:
            lines.append(_rich(block.get("elements"), context).strip("\n"))
        elif kind in ("section", "header"):
            lines.append(_composed(block.get("text"), context))
            fields = block.get("fields")
            if isinstance(fields, list):
                lines.extend(_composed(f, context) for f in fields)
        elif kind == "context" and isinstance(block.get("elements"), list):
            lines.append(" ".join(_composed(e, context) for e in block["elements"]))
    return "\n".join(line for line in lines if line.strip())


def _composed(obj: Any, context: _Context) -> str:
    """Return a block text object's text (``mrkdwn`` rendered, ``plain_text`` as is)."""
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        return ""
    return _render(obj["text"], context) if obj.get("type") == "mrkdwn" else obj["text"]


def _rich(elements: Any, context: _Context, depth: int = 0) -> str:
    """Return rich-text elements as text: sections, lists (``• item``), quotes (``> ``),
    preformatted text (fenced), and inline text, links, mentions and emoji."""
    if not isinstance(elements, list) or depth > 8:
        return ""
    out: list[str] = []
    for e in elements:
        if not isinstance(e, dict):
            continue
        kind = e.get("type")
        if kind == "rich_text_section":
            out.append(_rich(e.get("elements"), context, depth + 1))
        elif kind == "rich_text_list":
            items = e.get("elements") if isinstance(e.get("elements"), list) else []
            out.append("".join(f"• {_rich([i], context, depth + 1).strip()}\n" for i in items))
        elif kind == "rich_text_quote":
            out.append("> " + _rich(e.get("elements"), context, depth + 1) + "\n")
        elif kind == "rich_text_preformatted":
            out.append("```\n" + _rich(e.get("elements"), context, depth + 1) + "\n```\n")
        else:
            out.append(_inline(e, context))
    return "".join(out)


def _inline(e: dict[str, Any], context: _Context) -> str:
    """Return one inline rich-text element as text."""
    kind = e.get("type")
    if kind == "text":
        return e["text"] if isinstance(e.get("text"), str) else ""
    if kind == "link":
        url = e.get("url") if isinstance(e.get("url"), str) else ""
        label = e.get("text") if isinstance(e.get("text"), str) else ""
        return f"[{label}]({url})" if label and label != url else url
    if kind == "user":
        person = context.people.get(str(e.get("user_id")))
        return "@" + (person.name if person else str(e.get("user_id")))
    if kind == "channel":
        cid = str(e.get("channel_id"))
        return "#" + context.channels.get(cid, cid)
    if kind == "emoji":
        return f":{e.get('name')}:"
    if kind == "broadcast":
        return f"@{e.get('range')}"
    if kind == "usergroup":
        return f"@{e.get('usergroup_id')}"
    return e["fallback"] if isinstance(e.get("fallback"), str) else ""


def _legacy(attachments: Any, at: str, context: _Context) -> str:
    """Return the text of legacy ``attachments`` (an app's cards): each card's pretext,
    title and text, else its fallback."""
    if attachments is None:
        return ""
    if not isinstance(attachments, list):
        raise ImportRejected(f"{at}: 'attachments' must be a list")
    lines = []
    for card in attachments:
        if not isinstance(card, dict):
            continue
        parts = [_render(card[k], context) for k in ("pretext", "title", "text")
                 if isinstance(card.get(k), str) and card[k].strip()]
        if not parts and isinstance(card.get("fallback"), str):
            parts = [_render(card["fallback"], context)]
        lines.extend(parts)
    return "\n".join(lines)


def _files(m: dict[str, Any], at: str) -> list[str]:
    """Return the names of a message's shared files (``files``; ``file`` before 2019)."""
    files = m.get("files")
    if files is None:
        files = [m["file"]] if isinstance(m.get("file"), dict) else []
    if not isinstance(files, list):
        raise ImportRejected(f"{at}: 'files' must be a list")
    names = []
    for f in files:
        if not isinstance(f, dict):
            raise ImportRejected(f"{at}: a shared file must be an object")
        names.append(_text_field(f, "name", "title", "id") or "a file")
    return names


# -- the export --------------------------------------------------------------------------------

def _title(conv: _Conversation, people: dict[str, _Person]) -> str:
    """Return a conversation's title: ``#name`` for a channel, the members for a DM."""
    if conv.kind in ("channel", "private channel"):
        return f"#{conv.name}"
    names = [people[m].name if m in people else m for m in conv.members]
    label = "direct message" if conv.kind == "direct message" else "group direct message"
    return f"{label}: {', '.join(names)}" if names else f"{label} {conv.name or conv.id}"


def read_slack(path: Path, limit: int,
               skipped: list[tuple[str, str]] | None = None) -> list[Transcript]:
    """Return the conversations of the Slack export at ``path`` (its zip or its folder): one
    ``Transcript`` per conversation that has a folder, named ``slack:<channel id>``, titled
    ``#<channel name>`` (direct messages by their members), in the order of channels.json,
    groups.json, dms.json and mpims.json, then folders no list names (named by the folder).

    At most ``limit`` bytes are read in all, counted while reading (a zip's members as they
    inflate, each also under a zip bomb's bound). An entry of a folder export that is not a
    regular file (a FIFO, a socket, a device) is never opened: it is appended to ``skipped``
    as (item, reason). Raises ImportRejected naming the file and the place in it for
    anything malformed: a list that is not a list, a user or channel without an id, a day
    file that is not a list of objects, a message without a valid ``ts``, text that is not
    text, two different messages with one ``ts``. Cost: one read of every JSON file of the export;
    memory proportional to its text.
    """
    reader = _open(path, limit)
    if skipped is not None:
        skipped.extend(reader.special)
    try:
        people = _people(reader.load(USERS), reader.where(USERS))
        conversations = _conversations(reader)
        folders = {n.split("/", 1)[0] for n in reader.names if "/" in n}
        listed: dict[str, _Conversation] = {}
        for conv in conversations:
            folder = conv.folder if conv.folder in folders else conv.id
            if folder in folders and folder not in listed:
                conv.folder = folder
                listed[folder] = conv
        for folder in sorted(folders - set(listed)):
            if any(DAY_FILE.fullmatch(n.split("/", 1)[1]) for n in reader.names
                   if n.startswith(folder + "/")):
                listed[folder] = _Conversation(folder, "channel", folder, [], folder,
                                               reader.where(folder))
        transcripts: list[tuple[Transcript, list[tuple[str, dict[str, Any]]]]] = []
        for folder, conv in listed.items():
            transcript = Transcript(f"slack:{conv.id}", _title(conv, people),
                                    reader.where(folder))
            transcripts.append((transcript, list(_days(reader, folder, transcript))))
    finally:
        if reader.archive is not None:
            reader.archive.close()
    # Authors missing from users.json (deleted or external) are named by their messages'
    # user_profile, so every channel is read once all profiles are known.
    for _, messages in transcripts:
        for _, m in messages:
            user, profile = m.get("user"), m.get("user_profile")
            if isinstance(user, str) and user not in people and isinstance(profile, dict):
                name = _text_field(profile, "display_name", "real_name", "name")
                if name:
                    people[user] = _Person(name)
    context = _Context(people, {c.id: c.name for c in conversations if c.name})
    for transcript, messages in transcripts:
        _channel(transcript, messages, context)
    return [t for t, _ in transcripts]

