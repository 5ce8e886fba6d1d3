"""The Claude Code session reader, on sessions the real CLI (2.1.332) wrote against a scripted
model (tests/palazzo/data/importers/claude-code-2.1.332/README.md), and on small made-up lines
for shapes the fixture does not hold (older versions' inline sidechains and summaries,
compaction, meta lines). Counts are taken from the JSONL here, not from the reader."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers.claudecode import (
    read_claude_code,
    read_session,
    sniff,
    subagent_files,
)
from palazzo.importers.transcript import Message, Transcript

FIXTURE = Path(__file__).parents[1] / "data" / "importers" / "claude-code-2.1.332"
PROJECT = FIXTURE / "projects" / "-home-user-project"
MAIN_ID = "7d3c2a10-5b8e-4f61-9c2d-0a1b2c3d4e5f"
NAMED_ID = "e2b7f0c4-1d9a-4c3e-8f5b-6a7b8c9d0e1f"
MAIN = PROJECT / f"{MAIN_ID}.jsonl"
NAMED = PROJECT / f"{NAMED_ID}.jsonl"
(AGENT,) = (PROJECT / MAIN_ID / "subagents").glob("agent-*.jsonl")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _docs(path: Path) -> list[tuple[int, dict[str, Any]]]:
    return [(n, json.loads(ln)) for n, ln in enumerate(_lines(path), 1) if ln.strip()]


def _blocks(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    """(line, line type, content block) of every user/assistant line, straight from JSONL."""
    out = []
    for n, d in _docs(path):
        if d["type"] in ("user", "assistant"):
            content = d["message"]["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            out.extend((n, d["type"], b) for b in content)
    return out


def _line_of(node: Message) -> int:
    return int(node.where.rsplit(" line ", 1)[1])


def _read(lines: list[str], where: str = "s.jsonl") -> Transcript:
    (conv,) = read_claude_code(lines, where)
    return conv


def _stamp(iso: str) -> float:
    return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()


# -- the real session files ---------------------------------------------------------------------

def test_fixture_is_what_the_readme_says():
    for path in (MAIN, NAMED, AGENT):
        docs = [d for _, d in _docs(path)]
        versions = {d["version"] for d in docs if "version" in d}
        assert versions == {"2.1.332"}
    assert subagent_files(MAIN) == {AGENT.name[6:-6]: AGENT}
    assert subagent_files(NAMED) == {}
    assert sum(p.stat().st_size for p in FIXTURE.rglob("*") if p.is_file()) < 200_000


def test_sniff_recognises_every_file_and_nothing_else():
    for path in (MAIN, NAMED, AGENT):
        assert sniff([d for _, d in _docs(path)][:5])
    assert not sniff([])
    assert not sniff([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    assert not sniff([{"type": "session_meta", "payload": {"id": "x"}}])  # Codex
    assert not sniff([{"type": "user", "text": "no uuid or session"}])
    assert not sniff(["text", {"type": "user"}])
    assert sniff([{"type": "summary", "summary": "Old", "leafUuid": "u1"}])


def test_every_block_is_kept_or_skipped_with_a_reason():
    conv, = read_claude_code(_lines(MAIN), str(MAIN))  # the session file alone
    blocks = _blocks(MAIN)
    expected = Counter()
    for _, kind, b in blocks:
        expected[(kind if b["type"] != "tool_result" else "tool", b["type"])] += 1
    attachments = sum(d["type"] == "attachment" for _, d in _docs(MAIN))
    got = Counter()
    for node in conv.nodes:
        if node.skip and node.skip.startswith("attachment"):
            got["attachment"] += 1
            continue
        assert node.skip is None, node
        block = {"text": "text", "tool_use": "tool_use", "code_output": "tool_result",
                 "reasoning": "thinking"}[node.kind]
        got[(node.role, block)] += 1
    assert got == {**expected, "attachment": attachments}
    assert expected == {("user", "text"): 4, ("assistant", "text"): 5,
                        ("assistant", "thinking"): 1, ("assistant", "tool_use"): 3,
                        ("tool", "tool_result"): 3}
    assert conv.skipped == []
    # every message names the line it came from, and is keyed by that line's uuid
    by_line = dict(_docs(MAIN))
    assert all(by_line[_line_of(n)]["uuid"] == n.key.split("#")[0] for n in conv.nodes)


def test_main_line_is_the_file_order_with_the_files_text():
    conv, = read_claude_code(_lines(MAIN), str(MAIN))
    kept = [n for n in conv.nodes if n.skip is None]
    want = []
    for n, kind, b in _blocks(MAIN):
        if b["type"] == "text":
            want.append((n, kind, b["text"]))
        elif b["type"] == "thinking":
            want.append((n, "assistant", b["thinking"]))
    got = [(_line_of(m), m.role, m.text) for m in kept if m.kind in ("text", "reasoning")]
    assert got == want
    assert [m.role for m in kept if m.kind == "text"] == [
        "user", "assistant", "user", "assistant", "assistant", "user", "assistant", "user",
        "assistant"]
    # linear: each message's parent is the one before it
    assert conv.nodes[0].parent is None
    assert all(b.parent == a.key for a, b in zip(conv.nodes, conv.nodes[1:], strict=False))
    lines = [_line_of(m) for m in conv.nodes]
    assert lines == sorted(lines)


def test_two_streamed_lines_of_one_answer_stay_in_order():
    conv, = read_claude_code(_lines(MAIN), str(MAIN))
    docs = dict(_docs(MAIN))
    ids = Counter(d["message"]["id"] for d in docs.values() if d["type"] == "assistant")
    shared = [i for i, c in ids.items() if c > 1]
    assert shared  # the thinking+text answer, the text+Read answer
    for mid in shared:
        nodes = [m for m in conv.nodes if docs[_line_of(m)].get("message", {}).get("id") == mid]
        assert len(nodes) == ids[mid]
        assert all(b.parent == a.key for a, b in zip(nodes, nodes[1:], strict=False))
    reasoning, answer = [m for m in conv.nodes if _line_of(m) in
                         {n for n, d in docs.items() if d.get("message", {}).get("id")
                          == shared[0]}]
    assert (reasoning.kind, answer.kind) == ("reasoning", "text")


def test_tool_calls_are_one_marked_line_and_results_code_output():
    conv, = read_claude_code(_lines(MAIN), str(MAIN))
    calls = [b for _, kind, b in _blocks(MAIN) if b["type"] == "tool_use"]
    lines = [m.text for m in conv.nodes if m.kind == "tool_use"]
    assert [c["name"] for c in calls] == ["Read", "Bash", "Agent"]
    assert lines == [f"[tool: Read] {calls[0]['input']['file_path']}",
                     f"[tool: Bash] {calls[1]['input']['command']}",
                     f"[tool: Agent] {calls[2]['input']['description']} (general-purpose)"]
    assert all(len(t) <= 200 and "\n" not in t for t in lines)
    outputs = [m for m in conv.nodes if m.kind == "code_output"]
    results = [b for _, _, b in _blocks(MAIN) if b["type"] == "tool_result"]
    assert outputs[0].text == results[0]["content"].strip("\n")  # the Read, as the model saw it
    assert outputs[1].text == results[1]["content"]
    # the subagent's result is its bare report, not the harness's hand-back frame
    report = [d["toolUseResult"] for _, d in _docs(MAIN) if "agentId" in
              (d.get("toolUseResult") or {})][0]["content"][0]["text"]
    assert outputs[2].text == report and "[Subagent hand-back]" in json.dumps(results[2])


def test_subagent_is_a_branch_below_the_tool_call_that_started_it():
    conv, = read_session(MAIN)
    alone, = read_claude_code(_lines(MAIN), str(MAIN))
    agent_docs = dict(_docs(AGENT))
    assert all(d["isSidechain"] is True for d in agent_docs.values() if "uuid" in d)
    side = [m for m in conv.nodes if m.where.startswith(str(AGENT))]
    assert len(conv.nodes) == len(alone.nodes) + len(side)
    assert len(side) == sum("uuid" in d for d in agent_docs.values()
                            if d["type"] in ("user", "assistant", "attachment"))
    call = next(d["uuid"] for _, d in _docs(MAIN) if d["type"] == "assistant"
                and d["message"]["content"][0].get("name") == "Agent")
    first = next(d for d in agent_docs.values() if d["type"] == "user")
    assert first["parentUuid"] is None
    root = next(m for m in side if m.key == first["uuid"])
    assert root.parent == call
    children = [m for m in conv.nodes if m.parent == call]
    assert [c.where.startswith(str(AGENT)) for c in children] == [False, True]
    # parents first: the main line, then the branch
    keys = [m.key for m in conv.nodes]
    assert all(m.parent is None or keys.index(m.parent) < keys.index(m.key)
               for m in conv.nodes)
    assert conv.nodes[-1].where.startswith(str(AGENT))
    texts = [(m.role, m.kind, m.text) for m in side if m.skip is None]
    assert texts[0] == ("user", "text", first["message"]["content"])
    assert ("assistant", "tool_use", "[tool: Bash] wc -w notes.txt") in texts
    # the same through the mapping read_session builds
    agent = AGENT.name[len("agent-"):-len(".jsonl")]
    again, = read_claude_code(_lines(MAIN), str(MAIN), {agent: (_lines(AGENT), str(AGENT))})
    assert again == conv


def test_subagent_file_on_its_own():
    conv = _read(_lines(AGENT), str(AGENT))
    agent = AGENT.name[len("agent-"):-len(".jsonl")]
    assert conv.name == f"claude-code:{MAIN_ID}/agent-{agent}"
    assert conv.title.startswith("Count the words in notes.txt")
    assert conv.nodes[0].parent is None


def test_names_titles_and_timestamps():
    conv, = read_claude_code(_lines(MAIN), str(MAIN))
    named, = read_session(NAMED)
    assert conv.name == f"claude-code:{MAIN_ID}" and named.name == f"claude-code:{NAMED_ID}"
    first_prompt = next(d["message"]["content"] for _, d in _docs(MAIN) if d["type"] == "user")
    assert conv.title == first_prompt  # short enough to keep whole
    titles = [d["customTitle"] for _, d in _docs(NAMED) if d["type"] == "custom-title"]
    assert titles and named.title == titles[-1] == "Quick check"
    docs = dict(_docs(MAIN))
    for node in conv.nodes:
        assert node.timestamp == _stamp(docs[_line_of(node)]["timestamp"])
    kept = [m for m in named.nodes if m.skip is None]
    assert [(m.role, m.text) for m in kept] == [("user", "Thanks, just say noted."),
                                               ("assistant", "Noted. Anything else?")]


def test_a_broken_line_is_rejected_naming_it():
    lines = _lines(MAIN)
    broken = lines[:19] + ['{"type": "user", "uuid": '] + lines[20:]
    with pytest.raises(ImportRejected, match=r"^s\.jsonl line 20 is not valid JSON"):
        _read(broken)
    with pytest.raises(ImportRejected, match=r"s\.jsonl line 2: a Claude Code line must be"):
        _read([lines[0], "[1, 2]"])
    no_message = json.loads(lines[2])
    del no_message["message"]
    with pytest.raises(ImportRejected, match=r"s\.jsonl line 1: a 'user' line needs a 'message'"):
        _read([json.dumps(no_message)])
    with pytest.raises(ImportRejected, match=r"line 1: timestamp 'yesterday' is not ISO 8601"):
        _read([json.dumps({**json.loads(lines[2]), "timestamp": "yesterday"})])


# -- shapes the fixture does not hold -----------------------------------------------------------

def _line(kind: str, uuid: str, parent: str | None, content: Any = None, **extra: Any
          ) -> str:
    doc: dict[str, Any] = {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "s1",
                           "timestamp": "2025-06-01T10:00:00.000Z", "isSidechain": False}
    if content is not None:
        doc["message"] = {"role": kind, "content": content}
    doc.update(extra)
    return json.dumps(doc)


def _asst(uuid: str, parent: str | None, blocks: list[dict[str, Any]], mid: str = "m1",
          **extra: Any) -> str:
    line = json.loads(_line("assistant", uuid, parent, blocks, **extra))
    line["message"]["id"] = mid
    return json.dumps(line)


def test_older_inline_sidechain_summary_and_progress():
    lines = [
        json.dumps({"type": "summary", "summary": "Counting words", "leafUuid": "a3"}),
        _line("user", "u1", None, "Count words please"),
        json.dumps({"type": "progress", "uuid": "p1", "parentUuid": "u1", "sessionId": "s1"}),
        _asst("a1", "p1", [{"type": "tool_use", "id": "t1", "name": "Task",
                            "input": {"description": "Count", "prompt": "Count words"}}]),
        _line("user", "s1u", None, "Count words", isSidechain=True),
        _asst("s1a", "s1u", [{"type": "text", "text": "Ten."}], mid="m2", isSidechain=True),
        _line("user", "u2", "a1", [{"type": "tool_result", "tool_use_id": "t1",
                                    "content": [{"type": "text", "text": "Ten."}]}]),
        _asst("a3", "u2", [{"type": "text", "text": "There are ten."}], mid="m3"),
        "",
    ]
    conv = _read(lines)
    assert conv.name == "claude-code:s1" and conv.title == "Counting words"
    by_key = {m.key: m for m in conv.nodes}
    assert by_key["a1"].parent == "u1"  # the progress line is stepped over
    assert by_key["s1u"].parent == "a1"  # the sidechain hangs below the Task call
    assert [m.key for m in conv.nodes] == ["u1", "a1", "u2", "a3", "s1u", "s1a"]
    assert by_key["a1"].text == "[tool: Task] Count"


def test_multi_block_lines_meta_and_compaction():
    long = "x " * 300
    lines = [
        _line("user", "u0", None, "<command-name>/model</command-name>"),
        _line("user", "u1", "u0", [{"type": "text", "text": "Look at this"},
                                   {"type": "text", "text": "and this"},
                                   {"type": "image", "source": {}}]),
        _line("user", "m0", "u1", "Caveat: injected", isMeta=True),
        _asst("a1", "m0", [{"type": "thinking", "thinking": "", "signature": "s"},
                           {"type": "text", "text": "Sure."},
                           {"type": "tool_use", "id": "t", "name": "Bash",
                            "input": {"command": long}}]),
        _asst("a2", "a1", [{"type": "text", "text": "Sure."}]),  # streamed again
        _line("user", "r1", "a2", [{"type": "tool_result", "tool_use_id": "t",
                                    "content": "y" * 5000, "is_error": True}]),
        json.dumps({"type": "system", "subtype": "compact_boundary", "uuid": "c1",
                    "parentUuid": None, "logicalParentUuid": "r1", "sessionId": "s1",
                    "timestamp": "2025-06-01T10:00:01Z"}),
        _line("user", "cs", "c1", "This session is being continued…", isCompactSummary=True),
        _line("user", "i1", "cs", [{"type": "text", "text": "[Request interrupted by user]"}]),
        _asst("e1", "i1", [{"type": "text", "text": "API Error: 500"}], mid="m9",
              isApiErrorMessage=True),
        _line("user", "u9", "e1", "Thanks"),
        json.dumps({"type": "ai-title", "aiTitle": "Looking at images", "sessionId": "s1"}),
    ]
    conv = _read(lines)
    assert conv.title == "Looking at images"
    got = [(m.key, m.parent, m.role, m.kind, m.skip) for m in conv.nodes]
    assert got == [
        ("u0", None, "user", "text", "slash command"),
        ("u1#0", "u0", "user", "text", None),
        ("u1", "u1#0", "user", "text", "image block"),
        ("m0", "u1", "user", "text", "meta message (written by Claude Code)"),
        ("a1#0", "m0", "assistant", "text", "thinking (empty or redacted)"),
        ("a1#1", "a1#0", "assistant", "text", None),
        ("a1", "a1#1", "assistant", "tool_use", None),
        ("a2", "a1", "assistant", "text", "repeated streamed block"),
        ("r1", "a2", "tool", "code_output", None),
        ("c1", "r1", "system", "text", "system message"),
        ("cs", "c1", "user", "text", "context compaction summary (written by Claude Code)"),
        ("i1", "cs", "user", "text", "interruption marker"),
        ("e1", "i1", "assistant", "text", "API error message"),
        ("u9", "e1", "user", "text", None),
    ]
    texts = {m.key: m.text for m in conv.nodes}
    assert texts["u1#0"] == "Look at this\nand this"
    assert len(texts["a1"]) <= 200 and texts["a1"].startswith("[tool: Bash] x x")
    assert texts["a1"].endswith("…")
    assert len(texts["r1"]) == 2000 and texts["r1"].endswith("…")


def test_repeated_lines_and_cycles():
    a = _line("user", "u1", None, "Hi")
    conv = _read([a, a, _asst("a1", "u1", [{"type": "text", "text": "Hello"}])])
    assert conv.skipped == [("s.jsonl line 2", "repeats line 1 (same uuid and content)")]
    assert [m.key for m in conv.nodes] == ["u1", "a1"]
    with pytest.raises(ImportRejected, match="line 2: repeats the uuid 'u1' of line 1 with "
                                             "different content"):
        _read([a, _line("user", "u1", None, "Bye")])
    with pytest.raises(ImportRejected, match="cycle"):
        _read([_line("user", "u1", "u2", "A"), _line("user", "u2", "u1", "B")])


def test_a_file_without_conversation_still_names_its_session():
    conv = _read([json.dumps({"type": "summary", "summary": "Old", "leafUuid": "x"})],
                 "/home/user/.claude/projects/p/abc-123.jsonl")
    assert (conv.name, conv.title, conv.nodes) == ("claude-code:abc-123", "Old", [])


def test_subagent_found_by_its_task_when_the_result_does_not_name_it():
    main = [_line("user", "u1", None, "Delegate X"),
            _asst("a1", "u1", [{"type": "tool_use", "id": "t1", "name": "Agent",
                                "input": {"description": "X", "prompt": "Do X"}}]),
            _line("user", "r1", "a1", [{"type": "tool_result", "tool_use_id": "t1",
                                        "content": "done"}])]
    task = [_line("user", "s1", None, "Do X", isSidechain=True, agentId="x1"),
            _asst("s2", "s1", [{"type": "text", "text": "X done"}], mid="m5",
                  isSidechain=True, agentId="x1")]
    stray = [_line("user", "z1", None, "Do Y", isSidechain=True, agentId="y1")]
    (conv,) = read_claude_code(main, "m.jsonl", {"x1": (task, "x.jsonl"),
                                                 "y1": (stray, "y.jsonl")})
    parents = {m.key: m.parent for m in conv.nodes}
    assert parents == {"u1": None, "a1": "u1", "r1": "a1", "s1": "a1", "s2": "s1", "z1": None}
    assert [m.key for m in conv.nodes] == ["u1", "a1", "r1", "s1", "s2", "z1"]
    assert _read(task).name == "claude-code:s1/agent-x1"


@pytest.mark.cpython_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_never_opened(tmp_path, in_time):
    """A FIFO among a session's subagent files is left out and named, through this reader
    and through ``plan_chats``; a FIFO given as the session is a clear error. Neither waits
    for a writer."""
    from palazzo.importers.chats import plan_chats

    main = tmp_path / MAIN.name
    shutil.copy(MAIN, main)
    shutil.copytree(PROJECT / MAIN_ID, tmp_path / MAIN_ID)
    fifo = tmp_path / MAIN_ID / "subagents" / "agent-fifo.jsonl"
    os.mkfifo(fifo)
    (conv,) = in_time(lambda: read_session(main), fifo)
    assert (str(fifo), "not a regular file (a FIFO)") in conv.skipped
    assert len(subagent_files(main)) == 1
    plan = in_time(lambda: plan_chats(main), fifo)
    assert {"item": str(fifo), "reason": "not a regular file (a FIFO)"} \
        in plan.summary["skipped"]
    with pytest.raises(ImportRejected, match=r"agent-fifo.jsonl: cannot read: not a regular "
                                             r"file \(a FIFO\)$"):
        in_time(lambda: read_session(fifo), fifo)
