"""The claude.ai reader over real export records (claude-samples/conversations.json; where
each record comes from: that folder's README). The expected outcome is worked out here by
walking the JSON, independently of the reader, then compared with the plan: messages kept,
by kind, left out, by reason, and the messages of each ``import_conversation`` call.

Shapes the real records lack (an edited branch, an empty conversation, a message with no
text block) are made by changing a copy of the records, never written into the fixture."""

from __future__ import annotations

import copy
import json
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

from palazzo import bind, call
from palazzo.importers import apply
from palazzo.importers.chats import plan_chats
from palazzo.palace import Palace

SAMPLES = Path(__file__).parents[1] / "data" / "importers" / "claude-samples"
EXPORT = SAMPLES / "conversations.json"
NOTHING_LEFT = "no user or assistant text"
ROLES = {"human": "user", "assistant": "assistant"}


def export() -> list[dict[str, Any]]:
    return json.loads(EXPORT.read_text(encoding="utf-8"))


def write(path: Path, doc: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


# -- the expected outcome, from the JSON alone ------------------------------------------------

def seconds(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


def one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 1].rstrip() + "…"


def pieces(m: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """What one export message should become, in order: (role, kind, text, reason) each,
    reason "" for a kept piece: every attachment with text, every non-text block, then the
    message's own text (its text blocks, else ``text``) ending with the names of its files
    and of attachments without text. The last piece is the message itself: when it has no
    text but others are kept, it is left out without a word (reason "silent")."""
    role = ROLES[m["sender"]]
    out: list[tuple[str, str, str, str]] = []
    names = []
    for a in m.get("attachments") or []:
        if (a.get("extracted_content") or "").strip():
            out.append((role, "attachments",
                        f"[attachment: {a['file_name']}]\n{a['extracted_content']}", ""))
        elif a.get("file_name"):
            names.append(a["file_name"])
    names += [f["file_name"] for f in m.get("files") or []]
    texts = []
    for b in m.get("content") or []:
        if b["type"] == "text":
            texts.append(b["text"])
        elif b["type"] == "thinking":
            out.append(("assistant", "reasoning", b["thinking"], "") if b["thinking"].strip()
                       else ("assistant", "reasoning", "", "reasoning (empty)"))
        elif b["type"] == "tool_use":
            query = b["input"].get("query") or json.dumps(b["input"], ensure_ascii=False)
            out.append(("assistant", "tool_use",
                        one_line(f"[tool: {b['name']}] {query}", 200), ""))
        elif b["type"] == "tool_result":
            lines = [" — ".join(x for x in (i.get("title"), i.get("url")) if x)
                     for i in b["content"]]
            out.append(("tool", "code_output", "\n".join(lines), ""))
        else:
            out.append(("assistant", "text", "", f"{b['type']} block"))
    text = "\n".join(texts) if texts else (m.get("text") or "")
    if names:
        line = f"[attachments: {', '.join(names)}]"
        text = f"{text}\n{line}" if text.strip() else line
    kind = "text" if text.strip() and not text.startswith("[attachments:") else "attachments"
    if text.strip():
        out.append((role, kind, text.strip(), ""))
    elif any(not reason for *_, reason in out):
        out.append((role, kind, "", "silent"))
    else:
        out.append((role, kind, "", "empty message"))
    return out


def in_tree_order(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages parents first, depth first from the roots, siblings in list order."""
    known = {m["uuid"] for m in messages}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for m in messages:
        parent = m.get("parent_message_uuid")
        children.setdefault(parent if parent in known else None, []).append(m)
    out: list[dict[str, Any]] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        m = stack.pop()
        out.append(m)
        stack.extend(reversed(children.get(m["uuid"], [])))
    return out


def expected(doc: list[dict[str, Any]]) -> tuple[dict[str, list[dict[str, Any]]], Counter]:
    """Return ({conversation name: the messages to import}, {reason: pieces left out})."""
    planned: dict[str, list[dict[str, Any]]] = {}
    reasons: Counter = Counter()
    for conv in doc:
        index: dict[str, int] = {}  # uuid -> position of its last kept piece
        nearest: dict[str, str | None] = {}  # uuid -> its nearest kept ancestor (or itself)
        out: list[dict[str, Any]] = []
        for m in in_tree_order(conv["chat_messages"]):
            up = nearest.get(m.get("parent_message_uuid"))
            last = index[up] if up is not None else None
            for role, kind, text, reason in pieces(m):
                if reason:
                    reasons[reason] += reason != "silent"
                    continue
                msg = {"role": role, "content": text, "timestamp": seconds(m["created_at"])}
                if kind != "text":
                    msg["kind"] = kind
                parents = [last] if last is not None else []
                if parents != ([len(out) - 1] if out else []):
                    msg["parents"] = parents
                last = len(out)
                out.append(msg)
            if last is not None and (up is None or last != index[up]):
                index[m["uuid"]] = last
                nearest[m["uuid"]] = m["uuid"]
            else:
                nearest[m["uuid"]] = up
        if out:
            planned[f"claude:{conv['uuid']}"] = out
        else:
            reasons[NOTHING_LEFT] += 1
    return planned, +reasons


def imports(plan) -> dict[str, list[dict[str, Any]]]:
    """{source conversation name: messages} of the plan's import_conversation calls."""
    rooms = {room: source for source, room in plan.summary["rooms"].items()}
    return {rooms.get(c.args["conversation"], c.args["conversation"]): c.args["messages"]
            for c in plan.calls if c.name == "import_conversation"}


def check(plan, doc: list[dict[str, Any]]) -> None:
    planned, reasons = expected(doc)
    s = plan.summary
    assert s["format"] == "claude"
    assert s["conversations"] == len(planned)
    assert s["messages"] == sum(len(ms) for ms in planned.values())
    kinds = Counter(m.get("kind", "text") for ms in planned.values() for m in ms)
    assert s["messages_by_kind"] == dict(kinds)
    assert s["skipped_by_reason"] == dict(reasons)
    assert s["branched"] == sum(any("parents" in m for m in ms) for ms in planned.values())
    assert imports(plan) == planned


# -- the real records ----------------------------------------------------------------------

def blocks(doc, kind):
    return [b for c in doc for m in c["chat_messages"] for b in m["content"]
            if b["type"] == kind]


def test_the_samples_hold_these_shapes():
    doc = export()
    messages = [m for c in doc for m in c["chat_messages"]]
    assert len(doc) == 2 and len(messages) == 8
    assert Counter(m["sender"] for m in messages) == {"human": 4, "assistant": 4}
    assert len(blocks(doc, "text")) == 8 and len(blocks(doc, "thinking")) == 5
    assert len(blocks(doc, "tool_use")) == 1 and len(blocks(doc, "tool_result")) == 1
    attachments = [a for m in messages for a in m["attachments"]]
    assert [(a["file_type"], len(a["extracted_content"])) for a in attachments] == [("txt", 102)]
    assert attachments[0]["file_size"] == 102
    assert sorted(f["file_name"] for m in messages for f in m["files"]) == [
        "1774834317641_image.png", "1776007249059_image.png",
        "excerpt_from_previous_claude_message.txt"]
    # Each conversation is one chain from claude.ai's root sentinel: no edits in these records.
    for conv in doc:
        parents = [m["parent_message_uuid"] for m in conv["chat_messages"]]
        assert parents[0] == "00000000-0000-4000-8000-000000000000"
        assert parents[1:] == [m["uuid"] for m in conv["chat_messages"][:-1]]
        assert conv["account"]["uuid"] and conv["summary"].startswith("**Conversation Overview")


def test_the_plan_matches_the_json():
    plan = plan_chats(EXPORT)
    check(plan, export())
    # 8 messages: their 8 texts, 5 thoughts, a search and its results, an attachment's text.
    assert plan.summary["messages"] == 16 and plan.summary["skipped_by_reason"] == {}
    assert plan.summary["messages_by_kind"] == {"text": 8, "reasoning": 5, "tool_use": 1,
                                                "code_output": 1, "attachments": 1}
    assert plan.summary["titles"] == {
        "identifying-potential-defects": "Identifying potential defects",
        "generalized-momentum-sign-convention": "Generalized momentum sign convention"}


def test_nothing_of_the_records_is_lost():
    """Thinking, the search and its results, the attachment's text and every file name are
    in what is imported, and nothing is left out."""
    doc = export()
    kept = "\n".join(m["content"] for ms in imports(plan_chats(EXPORT)).values() for m in ms)
    pieces_ = [b["thinking"][:40] for b in blocks(doc, "thinking")]
    pieces_ += [b["input"]["query"] for b in blocks(doc, "tool_use")]
    pieces_ += [b["content"][0]["title"] for b in blocks(doc, "tool_result")]
    pieces_ += [a["extracted_content"] for c in doc for m in c["chat_messages"]
                for a in m["attachments"]]
    pieces_ += [f["file_name"] for c in doc for m in c["chat_messages"] for f in m["files"]]
    assert len(pieces_) == 5 + 1 + 1 + 1 + 3
    assert all(piece in kept for piece in pieces_)
    assert plan_chats(EXPORT).summary["skipped"] == []


def test_applied_to_a_palace_and_again_adds_nothing():
    plan = plan_chats(EXPORT)
    palace = Palace()
    apply(plan, bind(palace))
    counts = palace.counts()
    assert apply(plan, bind(palace))["created"] == {}
    assert palace.counts() == counts
    planned, _ = expected(export())
    for source, messages in planned.items():
        room = plan.summary["rooms"][source]
        got = call(palace, "list_turns", {"conversation": room})["turns"]
        assert [t["role"] for t in got] == [m["role"] for m in messages]
        assert got[0]["created_at"] == messages[0]["timestamp"]


# -- shapes the real records lack, made from them -------------------------------------------

def test_a_message_with_only_thinking_and_tools_keeps_them(tmp_path):
    doc = copy.deepcopy(export())
    answer = doc[0]["chat_messages"][1]  # thinking, tool_use, tool_result, thinking, text
    answer["content"] = [b for b in answer["content"] if b["type"] != "text"]
    answer["text"] = ""
    plan = plan_chats(write(tmp_path / "conversations.json", doc))
    check(plan, doc)
    assert plan.summary["skipped_by_reason"] == {}
    # The follow-up question hangs off the answer's last piece: a linear chat still.
    messages = imports(plan)["claude:" + doc[0]["uuid"]]
    assert all("parents" not in m for m in messages)
    assert [m.get("kind", "text") for m in messages[1:5]] == [
        "reasoning", "tool_use", "code_output", "reasoning"]


def test_an_attachment_with_no_typed_text_is_kept(tmp_path):
    doc = copy.deepcopy(export())
    question = doc[1]["chat_messages"][2]  # has the attachment with extracted_content
    question["text"], question["content"] = "", []
    plan = plan_chats(write(tmp_path / "conversations.json", doc))
    check(plan, doc)
    assert plan.summary["skipped_by_reason"] == {}
    messages = imports(plan)["claude:" + doc[1]["uuid"]]
    assert [m.get("kind") for m in messages if m["role"] == "user"][-2:] == [
        "attachments", "attachments"]


def test_an_empty_conversation_is_counted(tmp_path):
    doc = copy.deepcopy(export())
    doc.append({**copy.deepcopy(doc[0]), "uuid": "00000000-0000-4000-8000-00000000e0e0",
                "name": "", "chat_messages": []})
    plan = plan_chats(write(tmp_path / "conversations.json", doc))
    check(plan, doc)
    assert plan.summary["skipped_by_reason"] == {NOTHING_LEFT: 1}


def test_an_edited_question_is_a_branch(tmp_path):
    doc = copy.deepcopy(export())
    chat = doc[1]["chat_messages"]
    edit = copy.deepcopy(chat[2])  # a second version of the follow-up, same parent
    edit["uuid"] = "019d3c79-2c84-75d9-95f2-0000000000ed"
    edit["content"][0]["text"] = edit["text"] = "Where is the summation symbol?"
    chat.append(edit)
    plan = plan_chats(write(tmp_path / "conversations.json", doc))
    check(plan, doc)
    messages = imports(plan)["claude:" + doc[1]["uuid"]]
    assert messages[-1]["content"].startswith("Where is the summation symbol?\n[attachments:")
    assert messages[-2]["kind"] == "attachments"  # the edit's attachment, then its text
    assert messages[-2]["parents"] != [len(messages) - 3] and plan.summary["branched"] == 1
    palace = Palace()
    apply(plan, bind(palace))
    assert apply(plan, bind(palace))["created"] == {}
