"""Chat importer: plain JSON and JSONL, ChatGPT and Claude exports, OpenCode databases —
each generated here with the real formats' shapes."""

import json
import os
import re
import sys
import zipfile
from pathlib import Path

import pytest

from palazzo import bind, call
from palazzo.errors import ImportRejected
from palazzo.importers import apply
from palazzo.importers.chats import plan_chats
from palazzo.palace import Palace

pytestmark = pytest.mark.cpython_only


def write(path, value):
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def imported(plan):
    palace = Palace()
    apply(plan, bind(palace))
    counts = palace.counts()
    assert apply(plan, bind(palace))["created"] == {}  # re-running adds nothing
    assert palace.counts() == counts
    return palace


def turns(palace, name):
    out = call(palace, "list_turns", {"conversation": name})
    return out["turns"], out["edges"]


# -- plain JSON and JSONL -------------------------------------------------------------------------

PLAIN = [
    {"role": "system", "content": "You are terse."},
    {"role": "user", "content": "Where do refresh tokens live?", "timestamp": 1714557600},
    {"role": "assistant", "content": [{"type": "text", "text": "In Redis."}],
     "timestamp": "2024-05-01T10:00:05Z"},
    {"role": "user", "content": "   "},
    {"role": "human", "content": "Thanks", "timestamp": "2024-05-01T10:01:00.123456789Z"},
]


def test_plain_json_list(tmp_path):
    plan = plan_chats(write(tmp_path / "support-chat.json", PLAIN))
    s = plan.summary
    assert s["format"] == "json" and s["conversations"] == 1 and s["messages"] == 3
    assert s["skipped_by_reason"] == {"system message": 1, "empty message": 1}
    (call,) = plan.calls
    assert call.args["conversation"] == "support-chat"
    assert [m["role"] for m in call.args["messages"]] == ["user", "assistant", "user"]
    assert call.args["messages"][1]["timestamp"] == 1714557605.0
    assert all("parents" not in m for m in call.args["messages"])
    palace = imported(plan)
    got, edges = turns(palace, "support-chat")
    assert [t["content"] for t in got] == ["Where do refresh tokens live?", "In Redis.", "Thanks"]
    assert [e["type"] for e in edges] == ["reply", "reply"]
    assert got[0]["created_at"] == 1714557600.0


def test_plain_json_object_and_name(tmp_path):
    doc = {"conversation": "standup", "title": "Monday standup", "messages": PLAIN[1:3]}
    plan = plan_chats(write(tmp_path / "x.json", doc))
    assert [c.name for c in plan.calls] == ["add_room", "import_conversation"]
    palace = imported(plan)
    assert palace.rooms[("conversations", "standup")].description == "Monday standup"
    named = plan_chats(write(tmp_path / "y.json", PLAIN[1:3]), name="renamed")
    assert named.calls[0].args["conversation"] == "renamed"


def test_jsonl(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(json.dumps(m) for m in PLAIN) + "\n", encoding="utf-8")
    plan = plan_chats(path)
    assert plan.summary["format"] == "jsonl" and plan.summary["messages"] == 3
    unmarked = tmp_path / "log.txt"
    unmarked.write_text(path.read_text(), encoding="utf-8")
    assert plan_chats(unmarked).summary["format"] == "jsonl"
    imported(plan)


# -- ChatGPT --------------------------------------------------------------------------------------

def node(nid, parent, children, role=None, text=None, **extra):
    message = None
    if role is not None:
        content = extra.pop("content", {"content_type": "text", "parts": [text]})
        message = {"id": nid, "author": {"role": role, "name": None, "metadata": {}},
                   "create_time": extra.pop("create_time", 1714557600.0 + len(nid)),
                   "update_time": None, "content": content, "status": "finished_successfully",
                   "end_turn": True, "weight": 1.0, "metadata": extra.pop("metadata", {}),
                   "recipient": extra.pop("recipient", "all"), "channel": None}
    return {"id": nid, "message": message, "parent": parent, "children": children}


def chatgpt_export():
    branched = {
        "title": "Token storage", "create_time": 1714557600.0, "update_time": 1714557700.0,
        "mapping": {
            "root": node("root", None, ["sys"]),
            "sys": node("sys", "root", ["u1"], "system", "",
                        metadata={"is_visually_hidden_from_conversation": True}),
            "u1": node("u1", "sys", ["a1", "a1b"], "user", "Where should refresh tokens live?"),
            "a1": node("a1", "u1", ["u2"], "assistant", "In Redis, with a TTL."),
            "a1b": node("a1b", "u1", [], "assistant", "In an HttpOnly cookie."),
            "u2": node("u2", "a1", ["call", "img"], "user", "And access tokens?"),
            "call": node("call", "u2", ["out"], "assistant", None, recipient="python",
                         content={"content_type": "code", "language": "python",
                                  "text": "print(1)"}),
            "out": node("out", "call", ["a2"], "tool", None,
                        content={"content_type": "execution_output", "text": "1"}),
            "a2": node("a2", "out", [], "assistant", "Keep them in memory only."),
            "img": node("img", "u2", [], "user", None, content={
                "content_type": "multimodal_text",
                "parts": [{"content_type": "image_asset_pointer", "asset_pointer": "file-1"}]}),
        },
        "moderation_results": [], "current_node": "a2", "plugin_ids": None,
        "conversation_id": "6630f1aa-0000-4000-8000-000000000001",
        "conversation_template_id": None, "gizmo_id": None, "is_archived": False,
        "safe_urls": [], "default_model_slug": "gpt-4o",
        "id": "6630f1aa-0000-4000-8000-000000000001",
    }
    short = {"title": "Hi", "create_time": 1714560000.0, "mapping": {
        "r": node("r", None, ["q"]), "q": node("q", "r", ["a"], "user", "Hello"),
        "a": node("a", "q", [], "assistant", "Hi there")},
        "conversation_id": "6630f1aa-0000-4000-8000-000000000002",
        "id": "6630f1aa-0000-4000-8000-000000000002"}
    return [branched, short]


def test_chatgpt_keeps_the_branches(tmp_path):
    plan = plan_chats(write(tmp_path / "conversations.json", chatgpt_export()))
    s = plan.summary
    assert s["format"] == "chatgpt" and s["conversations"] == 2 and s["messages"] == 9
    assert s["branched"] == 1
    assert s["skipped_by_reason"] == {"hidden message": 1,
                                      "image only (no text or file name)": 1}
    # Rooms are named by the title; the id is the room's source.
    name = "token-storage"
    assert s["rooms"]["chatgpt:6630f1aa-0000-4000-8000-000000000001"] == name
    assert s["titles"][name] == "Token storage"
    conv = next(c for c in plan.calls if c.name == "import_conversation"
                and c.args["conversation"] == name)
    texts = [m["content"] for m in conv.args["messages"]]
    assert texts == ["Where should refresh tokens live?", "In Redis, with a TTL.",
                     "And access tokens?", "```python\nprint(1)\n```", "```\n1\n```",
                     "Keep them in memory only.", "In an HttpOnly cookie."]
    # The regenerated answer hangs off the first question; the code the assistant ran and
    # its output are kept (kinds code and code_output) between the question and the answer.
    assert conv.args["messages"][6]["parents"] == [0]
    palace = imported(plan)
    summary = call(palace, "list_conversations")["conversations"]
    big = next(c for c in summary if c["conversation"] == name)
    assert (big["turns"], big["roots"], big["leaves"], big["max_depth"]) == (7, 1, 2, 5)
    _, edges = turns(palace, name)
    assert sorted(e["type"] for e in edges) == ["branch", "branch"] + ["reply"] * 4


def test_chatgpt_export_folder_and_zip(tmp_path):
    folder = tmp_path / "export"
    folder.mkdir()
    write(folder / "conversations.json", chatgpt_export())
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("chat.html", "<html></html>")
        z.writestr("conversations.json", json.dumps(chatgpt_export()))
    for source in (folder, archive):
        plan = plan_chats(source)
        assert plan.summary["format"] == "chatgpt" and plan.summary["messages"] == 9
    single = plan_chats(write(tmp_path / "one.json", chatgpt_export()[1]))
    assert single.summary["conversations"] == 1


# -- Claude ---------------------------------------------------------------------------------------

def claude_export():
    return [
        {"uuid": "c0a8e7f2-1111-4c6b-9f1e-000000000001", "name": "Postgres migration",
         "summary": "", "created_at": "2024-06-20T17:44:58.386519Z",
         "updated_at": "2024-06-20T17:50:00.000000Z",
         "account": {"uuid": "acc-1"},
         "chat_messages": [
             {"uuid": "m1", "text": "When do we move to Postgres?", "sender": "human",
              "created_at": "2024-06-20T17:44:58.386519Z", "updated_at": "",
              "attachments": [], "files": [],
              "parent_message_uuid": "00000000-0000-4000-8000-000000000000"},
             # An edited question, listed before the answer it follows.
             {"uuid": "m5", "text": "When exactly in March?", "sender": "human",
              "created_at": "2024-06-20T17:47:00Z", "parent_message_uuid": "m2"},
             {"uuid": "m2", "text": "legacy copy", "sender": "assistant",
              "content": [{"type": "thinking", "thinking": "They mean the DB."},
                          {"type": "text", "text": "In March, after the freeze."},
                          {"type": "tool_use", "name": "search", "input": {}}],
              "created_at": "2024-06-20T17:45:10.000000Z", "attachments": [], "files": [],
              "parent_message_uuid": "m1"},
             {"uuid": "m3", "text": "", "sender": "assistant",
              "content": [{"type": "tool_use", "name": "search", "input": {}}],
              "created_at": "2024-06-20T17:45:11Z", "parent_message_uuid": "m2"},
             {"uuid": "m4", "text": "Who owns it?", "sender": "human",
              "created_at": "2024-06-20T17:46:00Z", "parent_message_uuid": "m3"},
         ]},
        {"uuid": "c0a8e7f2-1111-4c6b-9f1e-000000000002", "name": "", "chat_messages": []},
    ]


def test_claude_export(tmp_path):
    plan = plan_chats(write(tmp_path / "conversations.json", claude_export()))
    s = plan.summary
    assert s["format"] == "claude" and s["conversations"] == 1 and s["messages"] == 7
    assert s["skipped_by_reason"] == {"no user or assistant text": 1}
    assert s["messages_by_kind"] == {"text": 4, "tool_use": 2, "reasoning": 1}
    conv = plan.calls[-1].args
    assert s["rooms"]["claude:c0a8e7f2-1111-4c6b-9f1e-000000000001"] == conv["conversation"]
    # Parents first: m1, m2 (its thinking and tool call before its text), then m2's
    # children in list order: m5, then m3 (only a tool call) -> m4.
    assert [(m.get("kind", "text"), m["content"]) for m in conv["messages"]] == [
        ("text", "When do we move to Postgres?"), ("reasoning", "They mean the DB."),
        ("tool_use", "[tool: search]"), ("text", "In March, after the freeze."),
        ("text", "When exactly in March?"), ("tool_use", "[tool: search]"),
        ("text", "Who owns it?")]
    # m3 keeps its tool call and hangs off m2's text beside m5: a branch.
    assert "parents" not in conv["messages"][4]
    assert conv["messages"][5]["parents"] == [3] and "parents" not in conv["messages"][6]
    palace = imported(plan)
    assert palace.rooms[("conversations", conv["conversation"])].description == \
        "Postgres migration"
    got, edges = turns(palace, conv["conversation"])
    assert got[0]["created_at"] == pytest.approx(1718905498.386519)
    # m2's pieces follow one another; m5 and m3's tool call branch off m2's text.
    assert sorted(e["type"] for e in edges) == ["branch", "branch"] + ["reply"] * 4
    linear = claude_export()[:1]
    for m in linear[0]["chat_messages"]:
        del m["parent_message_uuid"]
    old = plan_chats(write(tmp_path / "old.json", linear)).calls[-1].args["messages"]
    assert [m["content"] for m in old if "kind" not in m] == [
        "When do we move to Postgres?", "When exactly in March?",
        "In March, after the freeze.", "Who owns it?"]
    assert all("parents" not in m for m in old)


# -- OpenCode -------------------------------------------------------------------------------------

OPENCODE_DDL = """
CREATE TABLE project (id TEXT PRIMARY KEY, worktree TEXT NOT NULL, time_created INTEGER NOT NULL,
                      time_updated INTEGER NOT NULL);
CREATE TABLE session (
    id TEXT PRIMARY KEY, project_id TEXT NOT NULL REFERENCES project(id) ON DELETE CASCADE,
    workspace_id TEXT, parent_id TEXT, slug TEXT NOT NULL, directory TEXT NOT NULL, path TEXT,
    title TEXT NOT NULL, version TEXT NOT NULL, share_url TEXT, summary_additions INTEGER,
    summary_deletions INTEGER, summary_files INTEGER, summary_diffs TEXT,
    cost REAL NOT NULL DEFAULT 0, tokens_input INTEGER NOT NULL DEFAULT 0,
    tokens_output INTEGER NOT NULL DEFAULT 0, tokens_reasoning INTEGER NOT NULL DEFAULT 0,
    tokens_cache_read INTEGER NOT NULL DEFAULT 0, tokens_cache_write INTEGER NOT NULL DEFAULT 0,
    revert TEXT, permission TEXT, goal TEXT, agent TEXT, model TEXT,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
    time_compacting INTEGER, time_archived INTEGER);
CREATE TABLE message (
    id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES session(id) ON DELETE CASCADE,
    time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL, data TEXT NOT NULL);
CREATE INDEX message_session_time_created_id_idx ON message (session_id, time_created, id);
CREATE TABLE part (
    id TEXT PRIMARY KEY, message_id TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
    session_id TEXT NOT NULL, time_created INTEGER NOT NULL, time_updated INTEGER NOT NULL,
    data TEXT NOT NULL);
CREATE INDEX part_message_id_id_idx ON part (message_id, id);
"""


def opencode_db(path, bad_part=False):
    import sqlite3

    conn = sqlite3.connect(path)
    conn.executescript(OPENCODE_DDL)
    conn.execute("INSERT INTO project VALUES ('prj', '/home/ana/proj', 1, 1)")
    for sid, title in (("ses_01", "Fix the flaky test"), ("ses_02", "Empty session")):
        conn.execute("INSERT INTO session (id, project_id, slug, directory, title, version, "
                     "time_created, time_updated) VALUES (?, 'prj', ?, '/home/ana/proj', ?, "
                     "'1.0.0', 1706459800000, 1706459800000)", (sid, sid, title))
    messages = [
        ("msg_01", "ses_01", 1706459830000, {"role": "user", "time": {"created": 1706459830000},
                                              "agent": "build"}),
        ("msg_02", "ses_01", 1706459831000, {"role": "assistant", "parentID": "msg_01",
                                              "time": {"created": 1706459831000,
                                                       "completed": 1706459835000},
                                              "modelID": "gpt-5", "providerID": "openai"}),
        ("msg_03", "ses_01", 1706459836000, {"role": "assistant", "parentID": "msg_01",
                                              "time": {"created": 1706459836000}}),
        ("msg_04", "ses_02", 1706459900000, {"role": "user", "time": {"created": 1706459900000}}),
    ]
    for mid, sid, t, data in messages:
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                     (mid, sid, t, t, json.dumps(data)))
    parts = [
        ("prt_01", "msg_01", {"type": "text", "text": "Why does test_login flake?"}),
        ("prt_02", "msg_01", {"type": "text", "text": "<file>login.py</file>", "synthetic": True}),
        ("prt_03", "msg_02", {"type": "step-start"}),
        ("prt_04", "msg_02", {"type": "reasoning", "text": "Look at the clock.",
                              "time": {"start": 1, "end": 2}}),
        ("prt_05", "msg_02", {"type": "text", "text": "It depends on wall-clock time."}),
        ("prt_06", "msg_02", {"type": "tool", "tool": "edit", "callID": "c1",
                              "state": {"status": "completed", "output": "ok"}}),
        ("prt_07", "msg_02", {"type": "text", "text": "I froze the clock in the fixture."}),
        ("prt_08", "msg_03", {"type": "tool", "tool": "bash", "callID": "c2", "state": {}}),
        ("prt_09", "msg_04", {"type": "file", "mime": "image/png", "url": "data:"}),
    ]
    for pid, mid, data in parts:
        sid = "ses_02" if mid == "msg_04" else "ses_01"
        conn.execute("INSERT INTO part VALUES (?, ?, ?, 1, 1, ?)",
                     (pid, mid, sid, "{not json" if bad_part and pid == "prt_05"
                      else json.dumps(data)))
    conn.commit()
    conn.close()
    return path


def test_opencode_database(tmp_path):
    db = opencode_db(tmp_path / "opencode.db")
    for source in (db, tmp_path):
        plan = plan_chats(source)
        s = plan.summary
        assert s["format"] == "opencode" and s["conversations"] == 1 and s["messages"] == 6
    assert s["titles"] == {"fix-the-flaky-test": "Fix the flaky test"}
    assert s["rooms"] == {"opencode:ses_01": "fix-the-flaky-test"}
    # Parts are read as OpenCode 1.1's JSON storage is (opencodejson.message_nodes).
    assert s["messages_by_kind"] == {"text": 2, "tool_use": 2, "code_output": 1,
                                     "reasoning": 1}
    assert s["skipped_by_reason"] == {
        "synthetic text (written by OpenCode, e.g. an attached file's content)": 1,
        "step marker (a model call's start: snapshot hash, no text)": 1,
        "tool call never finished (status None)": 1,
        "attached file (its content went to the model as synthetic text)": 1,
        "no user or assistant text": 1}
    messages = plan.calls[-1].args["messages"]
    assert messages[0] == {"role": "user", "content": "Why does test_login flake?",
                           "timestamp": 1706459830.0}
    assert [(m["role"], m.get("kind", "text"), m["content"]) for m in messages[1:]] == [
        ("assistant", "reasoning", "Look at the clock."),
        ("assistant", "text", "It depends on wall-clock time.\nI froze the clock in the "
                              "fixture."),
        ("assistant", "tool_use", "[edit]"), ("tool", "code_output", "ok"),
        ("assistant", "tool_use", "[bash]")]
    imported(plan)


# -- malformed input ------------------------------------------------------------------------------

def rejected(path, match):
    palace = Palace()
    call(palace, "add_drawer", {"wing": "w", "room": "r", "content": "already here"})
    before = palace.counts()
    with pytest.raises(ImportRejected, match=match):
        apply(plan_chats(path), bind(palace))
    assert palace.counts() == before


def test_malformed_exports_are_rejected(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user", "content": "hi"', encoding="utf-8")
    rejected(broken, "broken.json is not valid JSON")
    rejected(write(tmp_path / "n.json", [{"role": "user"}]), "message 0: a message must be")
    rejected(write(tmp_path / "r.json", [{"role": 3, "content": "x"}]),
             "role must be a string")
    rejected(write(tmp_path / "t.json", [{"role": "user", "content": "x",
                                          "timestamp": "yesterday"}]), "not ISO 8601")
    rejected(write(tmp_path / "o.json", {"something": 1}), "needs 'messages'")
    rejected(write(tmp_path / "q.json", [1, 2]), "item 0: not a message")

    cyclic = chatgpt_export()
    cyclic[1]["mapping"]["r"]["parent"] = "a"
    cyclic[1]["mapping"]["a"]["children"] = ["r"]
    rejected(write(tmp_path / "cycle.json", cyclic), "cycle")
    no_content = chatgpt_export()
    no_content[0]["mapping"]["u1"]["message"]["content"] = None
    rejected(write(tmp_path / "nc.json", no_content), r"node 'u1': message needs")

    no_uuid = claude_export()
    del no_uuid[0]["uuid"]
    rejected(write(tmp_path / "claude.json", no_uuid), "needs a 'uuid'")
    loop = claude_export()
    loop[0]["chat_messages"][0]["parent_message_uuid"] = "m4"
    rejected(write(tmp_path / "loop.json", loop), "parent links form a cycle")
    twice = claude_export()
    twice[1] = dict(twice[0])
    rejected(write(tmp_path / "twice.json", twice), "appears twice")

    rejected(opencode_db(tmp_path / "bad.db", bad_part=True), "part 'prt_05': data is not")
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'[{"role": "user", "content": "caf\xe9"}]')
    rejected(latin, "not UTF-8")
    rejected(tmp_path / "nowhere.json", "no such file")
    rejected(tmp_path, "no conversations.json, opencode.db or .jsonl session files")


def test_progress_and_interrupted_apply(tmp_path):
    from palazzo.errors import ImportInterrupted

    plan = plan_chats(write(tmp_path / "conversations.json", chatgpt_export()))
    palace = Palace()
    seen = []
    apply(plan, bind(palace), progress=lambda done, total: seen.append((done, total)))
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]

    fresh = Palace()
    failing = iter([False, False, True, False])

    def failing_call(name, args):
        if next(failing):
            from palazzo.errors import ValidationError

            raise ValidationError("disk full")
        return call(fresh, name, args)

    with pytest.raises(ImportInterrupted, match="call 3 of 4, add_room .* disk full"):
        apply(plan, failing_call)
    apply(plan, bind(fresh))
    assert fresh.counts() == palace.counts()


# -- hostile input: each a clear error (or a skipped item), never a traceback or a hang ----------

def raw(path, text):
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("stamp", ["1e400", "-1e400", "1e40", "1" + "0" * 400, "NaN",
                                   "99999999999999999999"])
def test_timestamps_beyond_any_date_are_a_clear_error(tmp_path, stamp):
    doc = json.dumps(chatgpt_export()).replace("1714557601.0", "STAMP", 1)  # node q's time
    rejected(raw(tmp_path / "gpt.json", doc.replace("STAMP", stamp)),
             "timestamp (is not finite|.*out of range)")
    line = '{"role": "user", "content": "hi", "timestamp": STAMP}\n'
    rejected(raw(tmp_path / "chat.jsonl", line.replace("STAMP", stamp) * 2),
             "message 0: timestamp (is not finite|.*out of range)")


@pytest.mark.parametrize("value", [{}, [], ["m1"], {"uuid": "m1"}, 7])
def test_ids_and_parents_that_are_not_text_are_a_clear_error(tmp_path, value):
    parent = claude_export()
    parent[0]["chat_messages"][2]["parent_message_uuid"] = value
    rejected(write(tmp_path / "parent.json", parent), "parent_message_uuid must be text")
    uid = claude_export()
    uid[0]["chat_messages"][2]["uuid"] = value
    rejected(write(tmp_path / "uuid.json", uid), "uuid must be text")
    gpt = chatgpt_export()
    gpt[1]["mapping"]["a"]["parent"] = value
    rejected(write(tmp_path / "gpt.json", gpt), "parent must be an id or null")


def test_a_claude_uuid_used_twice_ends(tmp_path):
    """Two messages with one uuid used to loop forever (the second was its own child)."""
    same = claude_export()[:1]
    same[0]["chat_messages"].insert(1, dict(same[0]["chat_messages"][0]))
    plan = plan_chats(write(tmp_path / "same.json", same))
    assert plan.summary["messages"] == 7
    assert plan.summary["skipped_by_reason"]["repeats message 0 (same uuid and content)"] == 1
    imported(plan)
    for linear in (False, True):
        other = claude_export()[:1]
        copy = dict(other[0]["chat_messages"][0], text="a different question")
        other[0]["chat_messages"].append(copy)
        if linear:
            for m in other[0]["chat_messages"]:
                m.pop("parent_message_uuid", None)
        rejected(write(tmp_path / "other.json", other),
                 "message 5: repeats the uuid 'm1' of message 0 with different content")


def test_deep_nesting_in_jsonl_is_a_clear_error(tmp_path):
    deep = '{"role": "user", "content": ' + "[" * 50_000 + "]" * 50_000 + "}"
    ok = '{"role": "user", "content": "hi"}'
    rejected(raw(tmp_path / "deep.jsonl", f"{ok}\n{deep}\n"), "line 2 nests deeper than 100")
    # Not named .jsonl: the sniff must not recurse either.
    rejected(raw(tmp_path / "deep.txt", f"{deep}\n{ok}\n"), "nests deeper than 100")


def test_lone_surrogates_are_a_clear_error(tmp_path):
    text = json.dumps(claude_export()).replace("Who owns it?", "Who \\ud800 owns it?")
    rejected(raw(tmp_path / "s.json", text), r"\[0\].chat_messages\[4\].text holds a lone "
                                             r"surrogate \(\\ud800\)")


def _zip(path, member=b"", method=zipfile.ZIP_STORED, name="conversations.json"):
    with zipfile.ZipFile(path, "w", compression=method) as z:
        z.writestr(name, member)
    return path


def _patch(path, field, value):
    """Set a 2-byte little-endian field in every local (PK\\3\\4) and central (PK\\1\\2)
    header of the archive: ``field`` is (local offset, central offset)."""
    data = bytearray(path.read_bytes())
    for sig, off in zip((b"PK\x03\x04", b"PK\x01\x02"), field, strict=True):
        at = data.find(sig)
        data[at + off:at + off + 2] = value.to_bytes(2, "little")
    path.write_bytes(bytes(data))
    return path


def test_damaged_archives_are_a_clear_error(tmp_path):
    body = json.dumps(chatgpt_export()).encode()
    crc = _zip(tmp_path / "crc.zip", body)
    data = bytearray(crc.read_bytes())
    at = data.find(b"Token storage")
    data[at] ^= 0x20
    crc.write_bytes(bytes(data))
    rejected(crc, r"crc.zip!conversations.json: cannot read the archive: Bad CRC")
    encrypted = _patch(_zip(tmp_path / "enc.zip", body), (6, 8), 0x1)
    rejected(encrypted, "cannot read the archive: .*encrypted")
    method = _patch(_zip(tmp_path / "method.zip", body), (8, 10), 99)
    rejected(method, "cannot read the archive: .*compression method")
    truncated = tmp_path / "cut.zip"
    whole = _zip(tmp_path / "whole.zip", body, zipfile.ZIP_DEFLATED).read_bytes()
    truncated.write_bytes(whole[:40] + whole[-200:])  # keeps the directory, loses data
    rejected(truncated, "cannot read the archive")


def test_an_archive_that_inflates_past_the_limit_is_refused_while_inflating(tmp_path):
    bomb = _zip(tmp_path / "bomb.zip", b"[" + b" " * (8 << 20) + b"]", zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 64 << 10
    palace = Palace()
    with pytest.raises(ImportRejected, match=r"bomb.zip!conversations.json: inflates to more "
                                             r"than 1048576 bytes"):
        plan_chats(bomb, max_bytes=1 << 20)
    # A header that claims a small size is not trusted: the reader stops at the claim and
    # the checksum then fails, or the limit is hit while inflating.
    liar = tmp_path / "liar.zip"
    data = bytearray(bomb.read_bytes())
    for sig, off in ((b"PK\x03\x04", 22), (b"PK\x01\x02", 24)):
        at = data.find(sig)
        data[at + off:at + off + 4] = (100).to_bytes(4, "little")
    liar.write_bytes(bytes(data))
    with pytest.raises(ImportRejected, match="liar.zip!conversations.json"):
        plan_chats(liar, max_bytes=1 << 20)
    big = raw(tmp_path / "big.json", "[" + " " * (2 << 20) + "]")
    with pytest.raises(ImportRejected, match="more than the 1048576 bytes an export may have"):
        plan_chats(big, max_bytes=1 << 20)
    assert palace.counts()["drawers"] == 0
    assert plan_chats(bomb).summary["conversations"] == 0  # the default limit is 1 GiB


def test_zeros_are_refused_at_the_first_block(tmp_path):
    zeros = _zip(tmp_path / "zeros.zip", b"\x00" * (4 << 20), zipfile.ZIP_DEFLATED)
    rejected(zeros, r"zeros.zip!conversations.json: not JSON text \(a NUL byte at offset 0\)")
    late = raw(tmp_path / "late.json", '[{"role": "user", "content": "hi"}]\x00')
    rejected(late, r"late.json: not JSON text \(a NUL byte at offset 35\)")


def test_an_opencode_table_the_driver_cannot_read_is_skipped_and_named(tmp_path):
    """The schema row of a vec0 table is written directly (the row sqlite-vec itself writes;
    a palace.db made with the real extension is tested in test_import_mempalace.py), so this
    SQLite lists the table and cannot open it."""
    import sqlite3

    db = opencode_db(tmp_path / "opencode.db")
    conn = sqlite3.connect(db)
    conn.execute('CREATE TABLE "quoted""name" (x)')
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("INSERT INTO sqlite_master (type, name, tbl_name, rootpage, sql) VALUES "
                 "('table', 'vecs', 'vecs', 0, 'CREATE VIRTUAL TABLE vecs USING "
                 "vec0(embedding float[4])')")
    conn.commit()
    conn.close()
    plan = plan_chats(db)
    assert plan.summary["format"] == "opencode" and plan.summary["conversations"] == 1
    assert {"item": f"{db} table 'vecs'", "reason": "unreadable table: no such module: vec0"} \
        in plan.summary["skipped"]
    imported(plan)


# -- session files of coding assistants: recognised by their first records --------------------

FIXTURES = Path(__file__).parents[1] / "data" / "importers"
CLAUDE_CODE = FIXTURES / "claude-code-2.1.332" / "projects"
CODEX = next((FIXTURES / "codex-0.171.0").glob("rollout-*.jsonl"))


def _kept_by_kind(convs):
    from collections import Counter

    return Counter(n.kind for c in convs for n in c.nodes if n.skip is None)


def test_a_claude_code_projects_folder_imports_every_session_with_its_subagents():
    from palazzo.importers.claudecode import read_session
    from palazzo.importers.source import recognise

    assert recognise(CLAUDE_CODE).kind == "chats"
    sessions = sorted(CLAUDE_CODE.glob("*/*.jsonl"))
    read = [c for f in sessions for c in read_session(f)]
    plan = plan_chats(CLAUDE_CODE)
    s = plan.summary
    assert s["format"] == "claude-code" and s["conversations"] == len(sessions) == 2
    assert s["messages_by_kind"] == dict(_kept_by_kind(read))
    palace = imported(plan)
    names = {c["conversation"] for c in call(palace, "list_conversations")["conversations"]}
    assert names == {s["rooms"][c.name] for c in read}
    main = next(c for c in read if "Quick check" not in c.title)
    listed, edges = turns(palace, s["rooms"][main.name])
    kinds = {t.get("kind", "text") for t in listed}
    assert {"text", "tool_use", "code_output", "reasoning"} <= kinds
    assert {t["role"] for t in listed} == {"user", "assistant", "tool"}
    assert any(e["type"] == "branch" for e in edges)  # the subagent's sidechain
    # One session file alone brings its subagent too.
    alone = plan_chats(next(f for f in sessions if f.stem in main.name))
    assert alone.summary["messages"] == sum(
        1 for n in main.nodes if n.skip is None)


def test_codex_rollouts_import_as_a_file_and_as_the_sessions_tree(tmp_path):
    from palazzo.importers.codex import read_codex
    from palazzo.importers.source import recognise

    (conv,) = read_codex(CODEX.read_text(encoding="utf-8").split("\n"), str(CODEX))
    tree = tmp_path / "sessions" / "2026" / "12" / "04"
    tree.mkdir(parents=True)
    (tree / CODEX.name).write_bytes(CODEX.read_bytes())
    other = tree / "rollout-plain.jsonl"  # a plain message log beside it
    other.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    assert recognise(tmp_path / "sessions").kind == "chats"
    for source, count in ((CODEX, 1), (tmp_path / "sessions", 2)):
        plan = plan_chats(source)
        assert plan.summary["conversations"] == count
        kept = [m for c in plan.calls if c.name == "import_conversation"
                and c.args["conversation"] == plan.summary["rooms"][conv.name]
                for m in c.args["messages"]]
        assert len(kept) == sum(1 for n in conv.nodes if n.skip is None)
    assert plan.summary["format"] == "codex+jsonl"
    palace = imported(plan)
    listed, _ = turns(palace, plan.summary["rooms"][conv.name])
    assert [t["role"] for t in listed if t.get("kind") == "code_output"] == ["tool", "tool"]


# -- rooms named by the title, the id kept as the room's source -----------------------------------

@pytest.mark.parametrize("title, expected", [
    ("Plan a trip to Rome!", "plan-a-trip-to-rome"), ("  Ünïcode — ÇA VA?  ", "ünïcode-ça-va"),
    ("東京の旅行計画", "東京の旅行計画"), ("!!!", "untitled"),
    ("ＦＵＬＬ　ｗｉｄｔｈ", "full-width"), ("word " * 30, "-".join(["word"] * 12))])
def test_a_title_becomes_a_room_name(title, expected):
    from palazzo.importers.chats import slug

    assert slug(title) == expected and len(slug(title)) <= 60


def _two_titled(title_a="Trip", title_b="Trip"):
    export = chatgpt_export()
    export[0]["title"], export[1]["title"] = title_a, title_b
    return export


def test_rooms_are_unique_and_a_renamed_conversation_keeps_its_room(tmp_path):
    path = write(tmp_path / "conversations.json", _two_titled())
    plan = plan_chats(path)
    ids = [f"chatgpt:{c['conversation_id']}" for c in chatgpt_export()]
    assert [plan.summary["rooms"][i] for i in ids] == ["trip", "trip-2"]
    palace = imported(plan)
    rooms = {r["name"]: r for r in call(palace, "list_rooms", {"wing": "conversations"})["rooms"]}
    assert rooms["trip"]["source"] == ids[0] and rooms["trip"]["description"] == "Trip"
    # Renamed in a later export: the same rooms, nothing new.
    write(path, _two_titled("Trip to Rome", "Trip"))
    again = plan_chats(path, palace=palace)
    assert [again.summary["rooms"][i] for i in ids] == ["trip", "trip-2"]
    counts = palace.counts()
    assert apply(again, bind(palace))["created"].get("import_conversation", 0) == 0
    assert palace.counts() == counts
    # A new palace with a room of that name already: the next free name.
    other = Palace()
    call(other, "add_room", {"wing": "conversations", "name": "trip"})
    assert plan_chats(path, palace=other).summary["rooms"][ids[1]] == "trip-2"
    assert plan_chats(path, palace=other).summary["rooms"][ids[0]] == "trip-to-rome"


def test_conversations_imported_before_rooms_had_titles_keep_their_rooms(tmp_path):
    path = write(tmp_path / "conversations.json", chatgpt_export())
    ids = [f"chatgpt:{c['conversation_id']}" for c in chatgpt_export()]
    palace = Palace()
    for i in ids:  # as the importer named them before
        call(palace, "add_room", {"wing": "conversations", "name": i})
    plan = plan_chats(path, palace=palace)
    assert plan.summary["rooms"] == {}
    assert {c.args["conversation"] for c in plan.calls if c.name == "import_conversation"} \
        == set(ids)


def test_skip_reasons_are_counted_by_their_part_before_a_colon_outside_parentheses():
    from palazzo.importers import reason_group

    assert reason_group("unknown role: 'robot'") == "unknown role"
    assert reason_group("step marker (a model call's start: no text)") == \
        "step marker (a model call's start: no text)"
    assert reason_group("tool call (to x): failed") == "tool call (to x)"
    assert reason_group("plain") == "plain"


# -- OpenCode's JSON storage, Slack exports, the files beside an export's conversations -------

def test_opencode_json_storage_and_its_migrated_database_give_the_same_conversation():
    from palazzo.importers.source import recognise

    fixture = FIXTURES / "opencode-1.1.65"
    storage = fixture / "opencode" / "storage"
    assert recognise(fixture / "opencode").kind == recognise(storage).kind == "chats"
    old, new = plan_chats(storage), plan_chats(fixture / "migrated-1.2.1" / "opencode.db")
    assert (old.summary["format"], new.summary["format"]) == ("opencode-json", "opencode")
    assert old.summary["rooms"] == new.summary["rooms"]
    assert [c.args for c in old.calls] == [c.args for c in new.calls]
    palace = imported(old)
    counts = palace.counts()
    apply(new, bind(palace))  # after the upgrade, the same export adds nothing
    assert palace.counts() == counts


def test_a_slack_export_folder_and_its_zip(tmp_path):
    from palazzo.importers.source import recognise

    export = FIXTURES / "slack-samples" / "export"
    archive = tmp_path / "Slack export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in sorted(export.rglob("*")):
            if f.is_file():
                z.write(f, f"export/{f.relative_to(export)}")
    for source in (export, archive):
        assert recognise(source).kind == "chats"
        plan = plan_chats(source)
        assert plan.summary["format"] == "slack" and plan.summary["conversations"] == 3
    assert "general" in set(plan.summary["rooms"].values())
    imported(plan)


def test_an_export_folder_or_zip_brings_the_files_beside_its_conversations(tmp_path):
    samples = FIXTURES / "claude-export-samples"
    folder = tmp_path / "claude-export"
    folder.mkdir()
    write(folder / "conversations.json", claude_export())
    for name in ("projects.json", "memories.json"):
        (folder / name).write_bytes((samples / name).read_bytes())
    archive = tmp_path / "claude-export.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for f in folder.iterdir():
            z.write(f, f"data-2026/{f.name}")
    alone = {n: plan_chats(samples / n).summary for n in ("projects.json", "memories.json")}
    for source in (folder, archive):
        s = plan_chats(source).summary
        assert s["format"] == "claude+claude-projects+claude-memories"
        assert s["conversations"] == 1 + sum(a["conversations"] for a in alone.values())
        assert s["messages"] == 7 + sum(a["messages"] for a in alone.values())
    shared = FIXTURES / "chatgpt-shared-samples" / "shared_conversations.json"
    chatgpt = tmp_path / "chatgpt-export"
    chatgpt.mkdir()
    write(chatgpt / "conversations.json", chatgpt_export())
    (chatgpt / "shared_conversations.json").write_bytes(shared.read_bytes())
    s = plan_chats(chatgpt).summary
    assert s["format"] == "chatgpt+chatgpt-shared" and s["conversations"] == 3


def test_gemini_cli_sessions_of_both_file_shapes_import_alone_and_as_their_folder():
    from palazzo.importers.geminicli import read_gemini_cli
    from palazzo.importers.source import recognise

    for version, pattern in (("0.61.0", "*.jsonl"), ("0.26.0", "session-*.json")):
        tmp = FIXTURES / f"gemini-cli-{version}" / "tmp"
        files = sorted(tmp.rglob(pattern))
        read = []
        for f in files:
            text = f.read_text(encoding="utf-8")
            source = text.split("\n") if f.suffix == ".jsonl" else json.loads(text)
            read += read_gemini_cli(source, str(f))
        assert recognise(tmp).kind == "chats"  # logs.json and checkpoints beside: no matter
        plan = plan_chats(tmp)
        s = plan.summary
        assert s["format"] == "gemini-cli" and s["conversations"] == len(files) == 2
        assert s["messages_by_kind"] == dict(_kept_by_kind(read))
        assert sum(plan_chats(f).summary["messages"] for f in files) == s["messages"]
        imported(plan)


# -- bounded memory and files that are not files ----------------------------------------------

_PEAK = """
import resource, sys
from palazzo.errors import ImportRejected
from palazzo.importers.chats import plan_chats
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    plan_chats(sys.argv[1])
    print("planned")
except ImportRejected as err:
    print(err)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)
"""


def _planned_in_a_fresh_python(path):
    """Return (the ImportRejected message or "planned", MB the peak resident memory grew)
    of ``plan_chats(path)`` run in a fresh interpreter (Linux counts ru_maxrss in KiB)."""
    import subprocess
    import sys

    import palazzo

    env = {**os.environ, "PYTHONPATH": str(Path(palazzo.__file__).parents[1])}
    out = subprocess.run([sys.executable, "-c", _PEAK, str(path)], capture_output=True,
                         text=True, env=env, timeout=300, check=True).stdout.splitlines()
    return out[0], int(out[1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_a_zip_of_blank_lines_is_refused_as_a_bomb_in_little_memory(tmp_path):
    """48 MB of blank lines compress to under 50 KB; the export zip used to inflate them
    and split them into 16 M strings (a 204 KB zip took 5.2 GB and a MemoryError)."""
    bomb = _zip(tmp_path / "bomb.zip", b"\t \n" * (16 << 20), zipfile.ZIP_DEFLATED)
    assert bomb.stat().st_size < 64 << 10
    message, grew = _planned_in_a_fresh_python(bomb)
    assert grew < 100, f"peak memory grew {grew} MB"
    assert re.fullmatch(r".*bomb\.zip!conversations\.json: inflates to more than 16777216 "
                        r"bytes, over 200 times its \d+ compressed bytes .*zip bomb", message)
    rejected(bomb, "refused as a zip bomb")  # and the palace is as it was


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB")
def test_blank_lines_are_not_split_into_strings_to_tell_json_from_jsonl(tmp_path):
    """Telling JSON from JSONL looks at the first lines that are not blank: a file of 8 M
    blank lines costs about two copies of its 24 MB, not a string a line (25 bytes a byte)."""
    blank = tmp_path / "conversations.json"
    blank.write_bytes(b"\t \n" * (8 << 20))
    message, grew = _planned_in_a_fresh_python(blank)
    assert message.endswith("is not valid JSON at line 8388609, column 1: Expecting value "
                            "(is it truncated?)")
    assert grew < 120, f"peak memory grew {grew} MB"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_never_opened_and_is_named(tmp_path, in_time):
    """A FIFO among session files is left out with the reason; one given as the export is a
    clear error. Neither waits for a writer."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.jsonl").write_text(
            json.dumps({"role": "user", "content": f"hello from {name}"}) + "\n",
            encoding="utf-8")
    fifo = folder / "c.jsonl"
    os.mkfifo(fifo)
    plan = in_time(lambda: plan_chats(folder), fifo)
    assert plan.summary["conversations"] == 2
    assert {s["item"]: s["reason"] for s in plan.summary["skipped"]} == {
        str(fifo): "not a regular file (a FIFO)"}
    with pytest.raises(ImportRejected, match=r"c.jsonl: not a regular file \(a FIFO\); "
                                             r"only files and folders are read$"):
        in_time(lambda: plan_chats(fifo), fifo)
