"""The Codex CLI rollout reader, on a session the real CLI (0.171.0) wrote against a scripted
model (tests/palazzo/data/importers/codex-0.171.0/README.md), and on small made-up lines for
shapes the fixture does not hold. Counts are taken from the JSONL here, not from the reader.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers.codex import read_codex, sniff
from palazzo.importers.transcript import Transcript

FIXTURE = Path(__file__).parents[1] / "data" / "importers" / "codex-0.171.0"
ROLLOUT = next(FIXTURE.glob("rollout-*.jsonl"))
SESSION = "01a24185-d787-7421-9080-9586ad66623f"


def _lines() -> list[str]:
    return ROLLOUT.read_text(encoding="utf-8").split("\n")


def _records() -> list[tuple[int, dict[str, Any]]]:
    return [(n, json.loads(ln)) for n, ln in enumerate(_lines(), 1) if ln.strip()]


def _read(lines: list[str] | None = None, where: str = "s.jsonl") -> Transcript:
    (conv,) = read_codex(_lines() if lines is None else lines, where)
    return conv


def _items(kind: str, role: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    return [(n, r["payload"]) for n, r in _records() if r["type"] == "response_item"
            and r["payload"]["type"] == kind and (role is None or r["payload"]["role"] == role)]


def _events(item_type: str) -> list[dict[str, Any]]:
    return [r["payload"]["item"] for _, r in _records() if r["type"] == "event_msg"
            and r["payload"]["type"] == "item_completed"
            and r["payload"]["item"]["type"] == item_type]


def _kept(conv: Transcript, role: str, kind: str) -> list[str]:
    return [m.text for m in conv.nodes if m.skip is None and m.role == role and m.kind == kind]


def _line(node_key: str) -> int:
    return int(node_key.split()[1])


# -- the real rollout -----------------------------------------------------------------------

def test_sniff_recognises_the_rollout_and_nothing_else():
    first = [r for _, r in _records()][:5]
    assert first[0]["type"] == "session_meta"
    assert sniff(first)
    assert not sniff([])
    assert not sniff([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    assert not sniff([{"type": "session_meta", "payload": {}}])  # no session id
    assert not sniff([*first[:4], {"type": "message"}])  # a record with no payload
    assert sniff([*first[:4], {"type": "record_type_of_a_later_version", "payload": {}}])
    assert not sniff(first[1:5])  # no session_meta among them


def test_name_title_and_one_transcript():
    conv = _read()
    assert conv.name == f"codex:{SESSION}"
    assert SESSION in ROLLOUT.name
    assert conv.title == "Please look at the files in this folder."
    assert conv.where == "s.jsonl"


def test_every_response_item_becomes_kept_or_skipped_nodes():
    conv = _read()
    item_lines = {n for n, r in _records() if r["type"] == "response_item"}
    assert {_line(m.key) for m in conv.nodes} == item_lines
    kept = [m for m in conv.nodes if m.skip is None]
    skipped = [m for m in conv.nodes if m.skip is not None]
    assert len(kept) + len(skipped) == len(conv.nodes)
    # one user message holds AGENTS.md and the environment context: two nodes from one line
    assert len(conv.nodes) == len(item_lines) + 1
    assert not any(m.silent for m in conv.nodes)


def test_user_words_once_and_never_the_injected_context():
    conv = _read()
    own = [p for _, p in _items("message", "user")
           if p["internal_chat_message_metadata_passthrough"]["content_item_kinds"]
           == ["user.text"]]
    typed = ["\n".join(c["text"] for c in item["content"]) for item in _events("UserMessage")]
    assert len(own) == len(typed) == 3  # the events repeat the items: each read once
    assert _kept(conv, "user", "text") == typed
    assert _kept(conv, "user", "instructions") == [
        "# AGENTS.md instructions for /home/user/project\n\n<INSTRUCTIONS>\n# Project notes\n\n"
        "Answer briefly. Never delete notes.txt.\n\n</INSTRUCTIONS>"]
    reasons = sorted(m.skip for m in conv.nodes if m.skip)
    assert reasons == ["developer message (Codex's instructions to the model)",
                       "environment context (injected by Codex)"]
    assert len(_items("message", "developer")) == 1


def test_assistant_text_and_reasoning_match_the_records():
    conv = _read()
    answers = [p["content"][0]["text"] for _, p in _items("message", "assistant")]
    assert answers == ["\n".join(c["text"] for c in e["content"])
                       for e in _events("AgentMessage")]
    assert _kept(conv, "assistant", "text") == answers and len(answers) == 3
    summaries = ["\n\n".join(s["text"] for s in p["summary"]) for _, p in _items("reasoning")]
    assert summaries == ["\n\n".join(e["summary_text"]) for e in _events("Reasoning")]
    assert _kept(conv, "assistant", "reasoning") == summaries and len(summaries) == 5


def test_tool_calls_and_outputs():
    conv = _read()
    calls = _items("function_call")
    runs = _events("CommandExecution")
    assert len(calls) == len(runs) == 2
    lines = [f"[{p['name']}] {json.loads(p['arguments'])['cmd']}" for _, p in calls]
    assert lines == ["[exec_command] ls", "[exec_command] cat notes.txt"]
    assert _kept(conv, "assistant", "tool_use") == lines
    assert [r["command"][-1] for r in runs] == ["ls", "cat notes.txt"]
    # the output without exec_command's header: what the command printed, as the event has it
    assert len(_items("function_call_output")) == 2
    assert _kept(conv, "tool", "code_output") == [r["aggregated_output"].strip("\n")
                                                  for r in runs]


def test_order_roles_parents_and_timestamps():
    conv = _read()
    by_line = dict(_records())
    assert [_line(m.key) for m in conv.nodes] == sorted(_line(m.key) for m in conv.nodes)
    assert conv.nodes[0].parent is None
    assert all(m.parent == prev.key for prev, m in zip(conv.nodes, conv.nodes[1:], strict=False))
    kept = [(m.role, m.kind) for m in conv.nodes if m.skip is None]
    turn = [("assistant", "reasoning"), ("assistant", "tool_use"), ("tool", "code_output"),
            ("assistant", "reasoning"), ("assistant", "text")]
    assert kept == [("user", "instructions"), ("user", "text"), *turn, ("user", "text"), *turn,
                    ("user", "text"), ("assistant", "reasoning"), ("assistant", "text")]
    for m in conv.nodes:
        stamp = by_line[_line(m.key)]["timestamp"]
        assert m.timestamp == datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
        assert m.where == f"s.jsonl line {_line(m.key)}"
    stamps = [m.timestamp for m in conv.nodes]
    assert stamps == sorted(stamps)


def test_blank_lines_keep_line_numbers():
    lines = _lines()
    padded = ["", *lines[:3], "   ", *lines[3:]]
    conv = _read(padded)
    assert [_line(m.key) for m in conv.nodes][:2] == [4, 6]  # line 3 and 4 moved down


@pytest.mark.parametrize("bad, message", [
    ('{"type": "response_item", "payload": {', "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"type": "response_item"}', "needs a 'type' string and a 'payload' object"),
    ('{"type": "response_item", "timestamp": "yesterday", "payload": {}}', "not ISO 8601"),
    ('{"type": "response_item", "payload": {"type": "message", "role": "user", '
     '"content": 5}}', "content"),
    ('{"type": "response_item", "payload": {"type": "function_call", "arguments": "{}"}}',
     "needs a 'name'"),
    ('{"type": "response_item", "payload": {"type": "message", "role": "user", '
     '"content": [{"type": "input_text", "text": "\\ud800"}]}}', "lone surrogate"),
])
def test_broken_line_names_file_and_line(bad, message):
    lines = _lines()
    lines[19] = bad
    with pytest.raises(ImportRejected, match=rf"^s\.jsonl line 20\b.*{message}"):
        _read(lines)


def test_no_session_meta_is_rejected():
    with pytest.raises(ImportRejected, match=r"^s\.jsonl: no session_meta"):
        _read(_lines()[1:])


# -- shapes the fixture does not hold --------------------------------------------------------

def _rollout(*payloads: tuple[str, dict[str, Any]]) -> list[str]:
    meta = ("session_meta", {"id": "abc", "cwd": "/home/user/project"})
    return [json.dumps({"timestamp": f"2025-09-01T10:00:{i:02d}.000Z", "type": t, "payload": p})
            for i, (t, p) in enumerate([meta, *payloads])]


def _msg(role: str, text: str) -> tuple[str, dict[str, Any]]:
    kind = "output_text" if role == "assistant" else "input_text"
    return "response_item", {"type": "message", "role": role,
                             "content": [{"type": kind, "text": text}]}


def test_older_rollout_events_are_not_read_twice():
    conv = _read(_rollout(
        _msg("user", "<user_instructions>\nbe terse\n</user_instructions>"),
        _msg("user", "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>"),
        _msg("user", "fix the bug"), ("event_msg", {"type": "user_message",
                                                    "message": "fix the bug"}),
        ("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "gAAA"}),
        ("response_item", {"type": "local_shell_call", "call_id": "c1", "status": "completed",
                           "action": {"type": "exec", "command": ["bash", "-lc", "ls -la"]}}),
        ("response_item", {"type": "function_call_output", "call_id": "c1", "output": json.dumps(
            {"output": "no such file\n", "metadata": {"exit_code": 2}})}),
        ("response_item", {"type": "function_call", "name": "shell", "call_id": "c2",
                           "arguments": json.dumps({"command": ["rg", "-n", "x" * 300]})}),
        ("response_item", {"type": "custom_tool_call", "name": "apply_patch", "call_id": "c3",
                           "input": "*** Begin Patch\n*** Update File: a.py\n"}),
        ("response_item", {"type": "ghost_snapshot", "ghost_commit": {}}),
        ("compacted", {"message": "summary of the chat"}),
        _msg("assistant", "done"), ("event_msg", {"type": "agent_message", "message": "done"}),
    ), "old.jsonl")
    assert conv.name == "codex:abc" and conv.title == "fix the bug"
    got = [(m.role, m.kind, m.text, m.skip) for m in conv.nodes]
    assert got == [
        ("user", "instructions", "<user_instructions>\nbe terse\n</user_instructions>", None),
        ("user", "text", "<environment_context>\n  <cwd>/x</cwd>\n</environment_context>",
         "environment context (injected by Codex)"),
        ("user", "text", "fix the bug", None),
        ("assistant", "text", "", "reasoning (encrypted)"),
        ("assistant", "tool_use", "[shell] ls -la", None),
        ("tool", "code_output", "[exit 2] no such file", None),
        ("assistant", "tool_use", "[shell] rg -n " + "x" * 185 + "…", None),
        ("assistant", "tool_use", "[apply_patch] *** Begin Patch *** Update File: a.py", None),
        ("assistant", "text", "", "ghost snapshot (Codex's undo point, no text)"),
        ("assistant", "text", "", "context compaction summary (written by Codex)"),
        ("assistant", "text", "done", None),
    ]
    assert len(got[6][2]) == 200


def test_events_are_read_when_there_are_no_items():
    conv = _read(_rollout(("event_msg", {"type": "user_message", "message": "hi"}),
                          ("event_msg", {"type": "token_count", "info": None}),
                          ("event_msg", {"type": "agent_message", "message": "hello"})))
    assert [(m.role, m.text) for m in conv.nodes] == [("user", "hi"), ("assistant", "hello")]


def test_long_output_is_capped_and_a_failed_exit_kept():
    out = "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\n" \
        + "y" * 2500
    conv = _read(_rollout(("response_item", {"type": "function_call_output", "call_id": "c",
                                             "output": out})))
    (node,) = conv.nodes
    assert node.text == "[exit 1] " + "y" * 1991 + "… [509 more characters]"


def test_image_only_user_message_is_left_out_with_a_reason():
    conv = _read(_rollout(("response_item", {
        "type": "message", "role": "user",
        "content": [{"type": "input_image", "image_url": "data:image/png;base64,AAAA"}]})))
    (node,) = conv.nodes
    assert node.skip == "no text (images or other non-text parts only)"
    assert conv.title == ""
