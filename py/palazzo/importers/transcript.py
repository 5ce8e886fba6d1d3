"""The conversations an export holds, as its reader found them: the records every chat reader
(``chats``, ``claudecode``, ``codex``, …) returns, and the timestamp and content helpers they
share. ``chats.plan_chats`` turns them into ``import_conversation`` calls: roles judged, text
normalised, left-out messages counted by reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import ImportRejected
from palazzo.memory.conversation import TURN_KINDS

__all__ = ["KINDS", "Message", "Transcript", "epoch", "json_document", "json_objects",
           "message_text", "parents_first"]

# What a kept message's text is (the turn records it): see memory.conversation.TURN_KINDS.
KINDS = TURN_KINDS


@dataclass(slots=True)
class Message:
    """A message as read from the source, before roles and text are judged."""

    key: str
    parent: str | None  # key of the source's parent message; None: a root
    role: Any
    text: str
    timestamp: float | None
    where: str
    skip: str | None = None  # a reason to leave it out, decided by the reader
    silent: bool = False  # left out without a word (ChatGPT's empty root node)
    kind: str = "text"  # what the text is: one of KINDS


@dataclass(slots=True)
class Transcript:
    """One conversation: ``name`` (stable across re-imports: the source's id), ``title``
    (may be empty), ``where`` (the source and item, for messages), its messages parents
    first, and parts left out as a whole with their reasons."""

    name: str
    title: str
    where: str
    nodes: list[Message] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (item, reason) left out


# The instants a datetime can hold (years 1 to 9999), in epoch seconds: a timestamp outside
# them is a corrupt value, and would overflow where the palace turns it into a date.
EARLIEST = -62_135_596_800.0
LATEST = 253_402_300_799.0


def epoch(value: Any, where: str, millis: bool = False) -> float | None:
    """Return a timestamp (number, or ISO 8601 text) as epoch seconds; None when absent.

    Raises ImportRejected naming ``where`` for anything else, including numbers that are
    not finite, too large for a float (a 400-digit integer) or outside years 1 to 9999.
    """
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ImportRejected(f"{where}: timestamp must be a number or ISO 8601 text")
    if isinstance(value, int | float):
        try:
            seconds = float(value) / 1000 if millis else float(value)
        except OverflowError:
            raise ImportRejected(f"{where}: timestamp is out of range (an integer too large "
                                 "for a number of seconds)") from None
        if not math.isfinite(seconds):
            raise ImportRejected(f"{where}: timestamp is not finite")
        if not EARLIEST <= seconds <= LATEST:
            raise ImportRejected(f"{where}: timestamp {value:.6g} is out of range (years 1 to "
                                 "9999)")
        return seconds
    if isinstance(value, str):
        text = value.strip().replace("Z", "+00:00").replace("z", "+00:00")
        head, dot, rest = text.partition(".")
        if dot:  # cut fractions beyond microseconds, which fromisoformat refuses
            digits = len(rest) - len(rest.lstrip("0123456789"))
            text = f"{head}.{rest[:min(digits, 6)]}{rest[digits:]}"
        try:
            moment = datetime.fromisoformat(text)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return moment.timestamp()
        except (ValueError, OverflowError):
            raise ImportRejected(f"{where}: timestamp {value[:80]!r} is not ISO 8601") from None
    raise ImportRejected(f"{where}: timestamp must be a number or ISO 8601 text")


def message_text(content: Any, where: str) -> tuple[str, int]:
    """Return (text, number of non-text parts left out) of a message's content: a string or
    a list of strings / ``{"type": "text", "text": …}`` blocks."""
    if isinstance(content, str):
        return content, 0
    if isinstance(content, list):
        texts: list[str] = []
        other = 0
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict) and part.get("type", "text") == "text" \
                    and isinstance(part.get("text"), str):
                texts.append(part["text"])
            else:
                other += 1
        return "\n".join(texts), other
    raise ImportRejected(f"{where}: content must be a string or a list of parts")


def parents_first(nodes: list[Message], where: str) -> list[Message]:
    """Return ``nodes`` reordered so every parent comes before its children (depth first
    from the roots, children in their original order); raise ImportRejected on a cycle or a
    repeated key. Every key is expanded at most once, so the walk ends whatever the links
    say. Cost: O(messages)."""
    keys = [n.key for n in nodes]
    if len(set(keys)) != len(keys):
        raise ImportRejected(f"{where}: two messages have the same uuid")
    children: dict[str | None, list[Message]] = {}
    for node in nodes:
        children.setdefault(node.parent, []).append(node)
    out: list[Message] = []
    expanded: set[str] = set()
    stack = list(reversed(children.get(None, [])))
    while stack:
        node = stack.pop()
        if node.key in expanded:
            raise ImportRejected(f"{where}: the messages' parent links form a cycle")
        expanded.add(node.key)
        out.append(node)
        stack.extend(reversed(children.get(node.key, [])))
    if len(out) != len(nodes):
        raise ImportRejected(f"{where}: the messages' parent links form a cycle "
                             f"({len(nodes) - len(out)} message(s) never reach a first one)")
    return out


def json_objects(lines: list[str], where: str, what: str) -> list[tuple[int, dict[str, Any]]]:
    """Return (line number from 1, object) of every non-blank line of a JSONL file; raise
    ImportRejected naming ``where line N`` for a line that is not JSON, not an object (a
    ``what``, e.g. "a rollout record") or holds a lone surrogate. Shared by the session
    readers. Cost: one parse a line."""
    from palazzo.importers import check_unicode

    out = []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        at = f"{where} line {n}"
        doc = jsontext.loads(line, at, ImportRejected)
        if not isinstance(doc, dict):
            raise ImportRejected(f"{at}: {what} must be a JSON object")
        check_unicode(doc, at)
        out.append((n, doc))
    return out


def json_document(data: bytes | bytearray | str, where: str) -> Any:
    """Return the JSON document in ``data`` (UTF-8 bytes, a BOM allowed, or text); raise
    ImportRejected naming ``where`` when it is not UTF-8, not JSON, or holds a lone
    surrogate. Cost: one decode and one parse."""
    from palazzo.importers import check_unicode

    if not isinstance(data, str):
        try:
            data = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise ImportRejected(f"{where}: not UTF-8 text (byte {err.start})") from None
    doc = jsontext.loads(data, where, ImportRejected)
    check_unicode(doc, where)
    return doc
