"""The Gemini CLI session reader, on a session the real CLI (0.61.0) wrote against a scripted
Gemini API (tests/palazzo/data/importers/gemini-cli-0.61.0/README.md), and on small made-up
records for shapes the fixture does not hold. Counts are taken from the JSONL here, walking
its records, not from the reader.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers.geminicli import read_gemini_cli, sniff, sniff_json
from palazzo.importers.transcript import Message, Transcript

FIXTURE = Path(__file__).parents[1] / "data" / "importers" / "gemini-cli-0.61.0"
PROJECT = FIXTURE / "tmp" / "project"
SESSION = "36bbfa9a-7f96-4ca4-9c42-b6b4041d61e2"  # headless: gemini -p, then two resumes
INTERACTIVE = "2827ae76-e7f6-4817-939f-281d00149662"  # typed: a prompt, /chat save, /quit
SESSION_FILE = next((PROJECT / "chats").glob(f"session-*-{SESSION[:8]}.jsonl"))
INTERACTIVE_FILE = next((PROJECT / "chats").glob(f"session-*-{INTERACTIVE[:8]}.jsonl"))


OLD = Path(__file__).parents[1] / "data" / "importers" / "gemini-cli-0.26.0"
OLD_FILES = sorted(OLD.glob("tmp/*/chats/session-*.json"))


def _lines(path: Path = SESSION_FILE) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def _records(path: Path = SESSION_FILE) -> list[tuple[int, dict[str, Any]]]:
    return [(n, json.loads(ln)) for n, ln in enumerate(_lines(path), 1) if ln.strip()]


def _read(lines: list[str] | None = None, where: str = "s.jsonl") -> Transcript:
    (conv,) = read_gemini_cli(_lines() if lines is None else lines, where)
    return conv


def _appended() -> dict[str, tuple[int, dict[str, Any]]]:
    """(line, record) of the last whole record of each message id written on its own line,
    in first-seen order."""
    out: dict[str, tuple[int, dict[str, Any]]] = {}
    for n, r in _records():
        if isinstance(r.get("id"), str):
            out[r["id"]] = (n, r)
    return out


def _listed_only() -> dict[str, dict[str, Any]]:
    """Messages that appear only inside ``$set.messages`` lists (first listing)."""
    own = _appended()
    out: dict[str, dict[str, Any]] = {}
    for _, r in _records():
        for m in r.get("$set", {}).get("messages", []):
            if m["id"] not in own:
                out.setdefault(m["id"], m)
    return out


def _kept(conv: Transcript, role: str, kind: str) -> list[str]:
    return [m.text for m in conv.nodes if m.skip is None and m.role == role and m.kind == kind]


def _stamp(value: str) -> float:
    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()


def _is_response(m: dict[str, Any]) -> bool:
    return m["type"] == "user" and all("functionResponse" in p for p in m["content"])


# -- the real session ------------------------------------------------------------------------

def test_fixture_shape_as_the_readme_says():
    records = [r for _, r in _records()]
    metas = [r for r in records if "sessionId" in r and "projectHash" in r]
    sets = [r for r in records if "$set" in r]
    assert len(records) == 33 and len(metas) == 3 and len(sets) == 18  # 3 runs
    assert all(m["sessionId"] == SESSION for m in metas)
    assert len(records) - len(metas) - len(sets) == 12  # message lines
    assert len(_appended()) == 10  # two answers written twice (tokens, then tool calls)
    assert sorted(k.split("_")[-1] for k in _listed_only()) == [
        "d04923d38bb0f6017037e74183378ef4", "response", "response"]
    assert records[-1] == {"$set": {"summary": "List the folder's files and read notes.txt",
                                    "memoryScratchpad": {"version": 1}}}
    assert sorted(p.name for p in PROJECT.iterdir()) == [
        "chats", "checkpoint-mytag.json", "logs.json"]


def test_sniff_recognises_the_session_and_nothing_else():
    first = [r for _, r in _records()][:5]
    assert sniff(first)
    assert not sniff([])
    assert not sniff(first[1:5])  # no metadata among them
    assert not sniff([{"role": "user", "content": "hi"}])
    assert not sniff([{"type": "user", "uuid": "u", "sessionId": "s"}])  # Claude Code's
    assert not sniff([*first[:4], {"kind": "main"}])  # a record of no known shape
    assert not sniff([{"sessionId": "", "projectHash": "x"}])
    assert not sniff_json(first[0])  # metadata without messages
    assert sniff_json({**first[0], "messages": []})
    assert not sniff_json([first[0]])


def test_name_title_and_one_transcript():
    conv = _read()
    assert conv.name == f"gemini-cli:{SESSION}"
    assert conv.title == "List the folder's files and read notes.txt"  # the $set summary
    assert conv.where == "s.jsonl" and conv.skipped == []
    untitled = [ln for ln in _lines() if '"summary"' not in ln]
    assert _read(untitled).title == "Please list the files in this folder."


def test_every_message_counted_kept_or_skipped():
    conv = _read()
    own, listed = _appended(), _listed_only()
    messages = [r for _, r in own.values()] + list(listed.values())
    user_words = [r for r in messages if r["type"] == "user" and not _is_response(r)
                  and not r["content"][0]["text"].startswith("<session_context>")]
    contexts = [r for r in messages if r["type"] == "user" and not _is_response(r)
                and r["content"][0]["text"].startswith("<session_context>")]
    responses = [r for r in messages if _is_response(r)]
    answers = [r for _, r in own.values() if r["type"] == "gemini"]
    thoughts = [r for r in answers if r.get("thoughts")]
    texts = [r for r in answers if r["content"]]
    calls = [c for r in answers for c in r.get("toolCalls", [])]
    assert (len(user_words), len(contexts), len(responses)) == (3, 1, 4)
    assert (len(answers), len(thoughts), len(texts), len(calls)) == (5, 5, 3, 2)
    assert not [r for r in messages if r["type"] not in ("user", "gemini")]
    # context: instructions + the rest; each call: its line and its result
    expected = len(user_words) + 2 * len(contexts) + len(responses) + len(thoughts) \
        + len(texts) + 2 * len(calls)
    kept = [m for m in conv.nodes if m.skip is None]
    skipped = [m for m in conv.nodes if m.skip is not None]
    assert len(conv.nodes) == len(kept) + len(skipped) == expected == 21
    assert sorted(m.skip for m in skipped) == [
        "session context (injected by Gemini CLI: date, system, folder listing)",
        *["tool result (repeats a result kept before)"] * len(responses)]
    assert not any(m.silent for m in conv.nodes)
    assert {m.key.split("#")[0] for m in conv.nodes} == set(own) | set(listed)


def test_user_words_instructions_and_answers_match_the_records():
    conv = _read()
    own = [r for _, r in _appended().values()]
    typed = ["".join(p["text"] for p in r["content"]) for r in own
             if r["type"] == "user" and not _is_response(r)]
    assert _kept(conv, "user", "text") == typed == [
        "Please list the files in this folder.",
        "Thanks. Now read notes.txt and tell me what it says.", "Thank you, that is all."]
    assert _kept(conv, "user", "instructions") == [
        "<project_context>\n--- Context from: /home/user/project/GEMINI.md ---\n# Project notes"
        "\n\nAnswer briefly. Never delete notes.txt.\n--- End of Context from: "
        "/home/user/project/GEMINI.md ---\n</project_context>"]
    answers = [r["content"] for r in own if r["type"] == "gemini" and r["content"]]
    assert _kept(conv, "assistant", "text") == answers
    thoughts = ["\n\n".join(f"**{t['subject']}**\n\n{t['description']}" for t in r["thoughts"])
                for r in own if r["type"] == "gemini"]
    assert _kept(conv, "assistant", "reasoning") == thoughts and len(thoughts) == 5


def test_tool_calls_and_results():
    conv = _read()
    calls = [c for _, r in _appended().values() for c in r.get("toolCalls", [])]
    assert [(c["name"], c["status"]) for c in calls] == [("run_shell_command", "success"),
                                                         ("read_file", "success")]
    assert _kept(conv, "assistant", "tool_use") == [
        f"[run_shell_command] {calls[0]['args']['command']}",
        f"[read_file] {calls[1]['args']['file_path']}"] == [
        "[run_shell_command] ls", "[read_file] notes.txt"]
    outputs = [c["result"][0]["functionResponse"]["response"]["output"] for c in calls]
    assert outputs[0].startswith("<untrusted_context>\n")  # the CLI's wrapper, cut
    assert _kept(conv, "tool", "code_output") == [
        outputs[0].removeprefix("<untrusted_context>\n").removesuffix("\n</untrusted_context>"),
        outputs[1].strip("\n")]
    assert _kept(conv, "tool", "code_output")[1] == "Buy milk.\nWater the plants."
    for node, call in zip([m for m in conv.nodes if m.kind == "code_output" and not m.skip],
                          calls, strict=True):
        assert node.timestamp == _stamp(call["timestamp"])


def test_order_roles_parents_and_timestamps():
    conv = _read()
    kept = [(m.role, m.kind) for m in conv.nodes if m.skip is None]
    call = [("assistant", "reasoning"), ("assistant", "tool_use"), ("tool", "code_output"),
            ("assistant", "reasoning"), ("assistant", "text")]
    assert kept == [("user", "instructions"), ("user", "text"), *call, ("user", "text"), *call,
                    ("user", "text"), ("assistant", "reasoning"), ("assistant", "text")]
    # linear, except the resumes' "<id>_response" copies, which hang below their call
    main = [m for m in conv.nodes if not m.key.endswith("_response")]
    copies = [m for m in conv.nodes if m.key.endswith("_response")]
    assert main[0].parent is None
    assert all(m.parent == prev.key for prev, m in zip(main, main[1:], strict=False))
    assert [m.parent for m in copies] == [m.key.removesuffix("_response") for m in copies]
    assert all(m.skip for m in copies)
    own = _appended()
    for m in main[2:]:
        n, record = own[m.key.split("#")[0]]
        assert m.where == f"s.jsonl line {n}"
        if m.kind in ("text", "tool_use"):
            assert m.timestamp == _stamp(record["timestamp"])
        elif m.kind == "reasoning":
            assert m.timestamp == _stamp(record["thoughts"][0]["timestamp"])
    stamps = [m.timestamp for m in main]
    assert stamps == sorted(stamps)
    assert main[0].where == "s.jsonl line 2 messages[0]"


def test_interactive_session_against_its_checkpoint_and_prompt_log():
    """The interactive session, checked against what the CLI wrote elsewhere: ``/chat save``'s
    checkpoint (the API history) and ``logs.json`` (every line the user typed)."""
    (conv,) = read_gemini_cli(_lines(INTERACTIVE_FILE), "i.jsonl")
    assert conv.name == f"gemini-cli:{INTERACTIVE}"
    assert conv.title == "Please read notes.txt for me."
    typed = [e["message"] for e in json.loads((PROJECT / "logs.json").read_text("utf-8"))
             if e["sessionId"] == INTERACTIVE]
    assert typed == ["Please read notes.txt for me.", "/chat save mytag", "/quit"]
    assert _kept(conv, "user", "text") == [t for t in typed if not t.startswith("/")]
    saved = json.loads((PROJECT / "checkpoint-mytag.json").read_text("utf-8"))
    parts = [p for c in saved["history"] for p in c["parts"]]
    assert _kept(conv, "assistant", "tool_use") == [
        f"[{p['functionCall']['name']}] {p['functionCall']['args']['file_path']}"
        for p in parts if "functionCall" in p]
    assert _kept(conv, "tool", "code_output") == [
        p["functionResponse"]["response"]["output"].strip("\n")
        for p in parts if "functionResponse" in p]
    answers = [p["text"].strip() for c in saved["history"] if c["role"] == "model"
               for p in c["parts"] if "text" in p and not p.get("thought")]
    assert _kept(conv, "assistant", "text") == answers
    notes = [r for _, r in _records(INTERACTIVE_FILE) if r.get("type") == "info"]
    assert [n["content"] for n in notes] == ["Conversation checkpoint saved with tag: mytag."]
    assert [(m.text, m.skip) for m in conv.nodes if m.role == "system"] == [
        (notes[0]["content"], "Gemini CLI info note (not sent to the model)")]
    assert [(m.role, m.kind) for m in conv.nodes if m.skip is None] == [
        ("user", "instructions"), ("user", "text"), ("assistant", "reasoning"),
        ("assistant", "tool_use"), ("tool", "code_output"), ("assistant", "reasoning"),
        ("assistant", "text")]


def test_blank_lines_keep_line_numbers():
    lines = _lines()
    conv = _read(["", *lines[:3], "   ", *lines[3:]])
    first_words = next(m for m in conv.nodes if m.kind == "text" and not m.skip)
    assert first_words.where == "s.jsonl line 4"
    assert next(m for m in conv.nodes if m.kind == "tool_use").where == "s.jsonl line 9"


def test_the_older_one_document_shape_reads_the_same():
    meta = _records()[0][1]
    doc = {**meta, "summary": "Files and notes", "messages": [r for _, r in _appended().values()]}
    (conv,) = read_gemini_cli(doc, "old.json")
    new = _read()
    assert conv.name == new.name and conv.title == "Files and notes"
    got = [(m.role, m.kind, m.text) for m in conv.nodes if m.skip is None]
    assert got == [(m.role, m.kind, m.text) for m in new.nodes
                   if m.skip is None and m.kind != "instructions"]
    assert conv.nodes[0].where == "old.json messages[0]"


def test_the_real_older_shape_0_26_0():
    """Gemini CLI 0.26.0 wrote the same script as one JSON document a session; counted from
    the documents: every message once, kept or skipped, in list order."""
    assert len(OLD_FILES) == 2
    new = {SESSION: _read(), INTERACTIVE: read_gemini_cli(_lines(INTERACTIVE_FILE), "i")[0]}
    for path in OLD_FILES:
        doc = json.loads(path.read_text("utf-8"))
        assert sniff_json(doc)
        (conv,) = read_gemini_cli(doc, "old.json")
        (as_line,) = read_gemini_cli([json.dumps(doc)], "old.json")  # the CLI reads it so too
        assert [(m.key, m.text, m.skip) for m in as_line.nodes] \
            == [(m.key, m.text, m.skip) for m in conv.nodes]
        messages = doc["messages"]
        expected = sum(1 for m in messages if m["type"] in ("user", "info")) + sum(
            bool(m.get("thoughts")) + bool(m["content"]) + 2 * len(m.get("toolCalls", []))
            for m in messages if m["type"] == "gemini")
        assert len(conv.nodes) == expected
        assert [m.skip for m in conv.nodes if m.skip] == [
            "Gemini CLI info note (not sent to the model)"] * sum(
            m["type"] == "info" for m in messages)
        assert _kept(conv, "user", "text") == [m["content"] for m in messages
                                               if m["type"] == "user"]
        calls = [c for m in messages for c in m.get("toolCalls", [])]
        assert _kept(conv, "tool", "code_output") == [
            c["result"][0]["functionResponse"]["response"]["output"].strip("\n")
            for c in calls]
        assert all(m.parent == prev.key for prev, m in zip(conv.nodes, conv.nodes[1:],
                                                           strict=False))
        assert [m.where for m in conv.nodes if m.kind == "text" and not m.skip][0] \
            == "old.json messages[0]"
        assert as_line.nodes[0].where == "old.json line 1 messages[0]"
        # the same conversation as 0.61.0 wrote it, but for the injected GEMINI.md
        twin = next(t for t in new.values() if _kept(t, "user", "text")
                    == _kept(conv, "user", "text"))
        assert [(m.role, m.kind) for m in conv.nodes if not m.skip] == [
            (m.role, m.kind) for m in twin.nodes if not m.skip and m.kind != "instructions"]
        assert _kept(conv, "assistant", "tool_use") == _kept(twin, "assistant", "tool_use")
        assert conv.title == (doc.get("summary") or _kept(conv, "user", "text")[0])


@pytest.mark.parametrize("bad, message", [
    ('{"id": "x", "type": "user", "content": [', "not valid JSON"),
    ("[1, 2]", "must be a JSON object"),
    ('{"id": 5, "type": "user"}', "needs an 'id' string"),
    ('{"id": "x", "content": []}', "needs a 'type' string"),
    ('{"id": "x", "type": "user", "timestamp": "yesterday", "content": []}', "not ISO 8601"),
    ('{"id": "x", "type": "user", "content": 5}', "content must be text or a list"),
    ('{"id": "x", "type": "gemini", "content": "", "toolCalls": {}}', "toolCalls must be"),
    ('{"id": "x", "type": "gemini", "content": "", "toolCalls": [{"args": {}}]}',
     "needs a 'name'"),
    ('{"id": "x", "type": "gemini", "content": "", "thoughts": [{"subject": 1}]}',
     "subject and description"),
    ('{"$set": []}', r"\$set must be an object"),
    ('{"$set": {"messages": [{"type": "user"}]}}', r"messages\[0\]: a message needs an 'id'"),
    ('{"$rewindTo": 3}', r"\$rewindTo must be"),
    ('{"sessionId": "s"}', "needs 'sessionId' and 'projectHash'"),
    ('{"sessionId": "s", "projectHash": "h", "messages": 5}', "messages must be a list"),
    ('{"id": "x", "type": "user", "content": [{"text": "\\ud800"}]}', "lone surrogate"),
])
def test_broken_line_names_file_and_line(bad, message):
    lines = _lines()
    lines[19] = bad
    with pytest.raises(ImportRejected, match=rf"^s\.jsonl line 20\b.*{message}"):
        _read(lines)


def test_no_metadata_is_rejected():
    no_meta = [ln for ln in _lines() if '"projectHash"' not in ln]
    with pytest.raises(ImportRejected, match=r"^s\.jsonl: no metadata naming the sessionId"):
        _read(no_meta)
    with pytest.raises(ImportRejected, match=r"^x\.json: not a Gemini CLI session"):
        read_gemini_cli({"messages": []}, "x.json")


# -- shapes the fixture does not hold --------------------------------------------------------

def _session(*records: dict[str, Any]) -> list[str]:
    meta = {"sessionId": "abc", "projectHash": "h", "startTime": "2026-01-01T10:00:00.000Z",
            "kind": "main"}
    return [json.dumps(r) for r in (meta, *records)]


def _msg(mid: str, kind: str, content: Any, second: int = 0, **more: Any) -> dict[str, Any]:
    return {"id": mid, "type": kind, "timestamp": f"2026-01-01T10:00:{second:02d}.000Z",
            "content": content, **more}


def _got(conv: Transcript) -> list[tuple[str, str, str, str | None]]:
    return [(m.key, m.role, m.text, m.skip) for m in conv.nodes]


def test_a_rewound_part_is_kept_as_a_branch():
    conv = _read(_session(
        _msg("u1", "user", [{"text": "first"}], 1), _msg("g1", "gemini", "one", 2),
        _msg("u2", "user", [{"text": "second"}], 3), _msg("g2", "gemini", "two", 4),
        {"$rewindTo": "u2"},
        _msg("u3", "user", [{"text": "second, reworded"}], 5), _msg("g3", "gemini", "three", 6)))
    parents = {m.key: m.parent for m in conv.nodes}
    assert parents == {"u1": None, "g1": "u1", "u2": "g1", "g2": "u2", "u3": "g1", "g3": "u3"}
    assert [m.key for m in conv.nodes] == ["u1", "g1", "u2", "g2", "u3", "g3"]


def test_notes_unknown_records_and_types_are_left_out_with_a_reason():
    conv = _read(_session(
        _msg("u1", "user", [{"text": "hi"}]), _msg("i1", "info", "Switched model."),
        _msg("e1", "error", "Quota exceeded."), _msg("x1", "compression", "…"),
        {"something": "new"}))
    assert _got(conv) == [
        ("u1", "user", "hi", None),
        ("i1", "system", "Switched model.", "Gemini CLI info note (not sent to the model)"),
        ("e1", "system", "Quota exceeded.", "Gemini CLI error note (not sent to the model)"),
        ("x1", "compression", "", "Gemini CLI message type 'compression'")]
    assert conv.skipped == [("s.jsonl line 6", "unknown Gemini CLI record (keys: something)")]


def test_results_errors_caps_display_content_and_summary_title():
    call = {"id": "c1", "name": "run_shell_command", "args": {"command": "x" * 300},
            "status": "error", "timestamp": "2026-01-01T10:00:09.000Z",
            "result": [{"functionResponse": {"id": "c1", "name": "run_shell_command",
                                             "response": {"error": "boom"}}}]}
    big = {"id": "c2", "name": "grep_search", "args": {"pattern": "y"}, "status": "success",
           "result": [{"functionResponse": {"id": "c2", "response": {"output": "z" * 2500}}}]}
    cancelled = {"id": "c3", "name": "write_file", "args": {}, "status": "cancelled"}
    conv = _read(_session(
        _msg("u1", "user", [{"text": "look at @a.txt"}, {"text": "\n--- Content from "
                                                           "referenced files ---\nA"}],
             displayContent=[{"text": "look at @a.txt"}]),
        _msg("g1", "gemini", "", 2, toolCalls=[call, big, cancelled]),
        _msg("u2", "user", [{"functionResponse": {"id": "c4", "name": "web_fetch",
                                                  "response": {"output": "page"}}}], 3),
        _msg("u3", "user", [{"inlineData": {"mimeType": "image/png", "data": "AAAA"}}], 4),
        {"$set": {"summary": "Looking at a file"}}))
    assert conv.title == "Looking at a file"
    got = [(m.role, m.kind, m.text, m.skip) for m in conv.nodes]
    assert got == [
        ("user", "text", "look at @a.txt", None),
        ("assistant", "tool_use", "[run_shell_command] " + "x" * 179 + "…", None),
        ("tool", "code_output", "[error] boom", None),
        ("assistant", "tool_use", "[grep_search] y", None),
        ("tool", "code_output", "z" * 2000 + "… [500 more characters]", None),
        ("assistant", "tool_use", "[write_file]", None),
        ("tool", "code_output", "page", None),  # a result with no recorded call: kept
        ("user", "text", "", "no text (images or other non-text parts only)"),
    ]
    assert len(got[1][2]) == 200
    assert conv.nodes[2].timestamp == _stamp("2026-01-01T10:00:09.000Z")


def test_a_message_known_only_from_a_listing_is_read_in_api_shape():
    conv = _read(_session({"$set": {"messages": [
        _msg("u1", "user", [{"text": "hello"}]),
        _msg("g1", "gemini", [{"text": "**Plan** think", "thought": True},
                              {"functionCall": {"id": "c", "name": "glob",
                                                "args": {"pattern": "*.py"}}}]),
        _msg("g1_response", "user", [{"functionResponse": {"id": "c", "name": "glob",
                                                           "response": {"output": "a.py"}}}]),
        _msg("g2", "gemini", [{"text": "Found a.py."}])]}}))
    assert [(m.role, m.kind, m.text) for m in conv.nodes] == [
        ("user", "text", "hello"), ("assistant", "reasoning", "**Plan** think"),
        ("assistant", "tool_use", "[glob] *.py"), ("tool", "code_output", "a.py"),
        ("assistant", "text", "Found a.py.")]
    assert all(isinstance(m, Message) and m.skip is None for m in conv.nodes)
