"""ChatGPT's ``conversations.json``: the reader of its conversations (``chats`` recognises the
file and plans the import).

A conversation is ``{title, create_time, conversation_id, mapping}``; ``mapping`` holds the
nodes ``{message: {author: {role}, content: {content_type, parts}, create_time, recipient,
metadata}, parent, children}``. The node tree is kept: regenerated and edited answers become
branches of the DAG, not a flattened list.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from palazzo.errors import ImportRejected
from palazzo.importers.transcript import Message, Transcript, epoch

__all__ = ["read_chatgpt"]

CHATGPT_TEXT = {"text", "multimodal_text"}


def read_chatgpt(items: list[Any], where: str) -> Iterator[Transcript]:
    """Yield the conversations of a ChatGPT ``conversations.json`` (its parsed list of
    conversations; ``where`` names the file for messages). Raises ImportRejected naming the
    conversation and node for anything malformed."""
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
        while stack:
            key = stack.pop()
            if key in seen:
                raise ImportRejected(f"{at} node {key!r}: reached twice (the mapping has a "
                                     "cycle or shared children)")
            seen.add(key)
            node = mapping[key]
            conv.nodes.append(_chatgpt_node(key, node, mapping, f"{at} node {key!r}"))
            stack.extend(reversed([k for k in node.get("children", []) if k in mapping]))
        if len(seen) != len(mapping):
            raise ImportRejected(f"{at}: {len(mapping) - len(seen)} node(s) are not reachable "
                                 "from a root (the mapping has a cycle)")
        yield conv


def _chatgpt_node(key: str, node: dict[str, Any], mapping: dict[str, Any], at: str) -> Message:
    parent = node.get("parent") if node.get("parent") in mapping else None
    msg = node.get("message")
    if msg is None:
        return Message(key, parent, "system", "", None, at, skip="empty node", silent=True)
    if not isinstance(msg, dict) or not isinstance(msg.get("author"), dict) \
            or not isinstance(msg.get("content"), dict):
        raise ImportRejected(f"{at}: message needs 'author' and 'content' objects")
    content = msg["content"]
    kind = content.get("content_type")
    if not isinstance(kind, str):
        raise ImportRejected(f"{at}: content.content_type must be a string")
    out = Message(key, parent, msg["author"].get("role"), "", epoch(msg.get("create_time"), at),
                at)
    meta = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    if kind not in CHATGPT_TEXT:
        out.skip = f"content type {kind}"
    elif msg.get("recipient", "all") != "all":
        out.skip = "tool call"
    elif meta.get("is_visually_hidden_from_conversation"):
        out.skip = "hidden message"
    elif "analysis" in (msg.get("channel"), meta.get("channel")):
        out.skip = "reasoning (analysis channel)"
    else:
        parts = content.get("parts", [])
        if not isinstance(parts, list):
            raise ImportRejected(f"{at}: content.parts must be a list")
        out.text = "\n".join(p for p in parts if isinstance(p, str))
        if not out.text.strip() and any(not isinstance(p, str) for p in parts):
            out.skip = "no text (non-text content only)"
    return out
