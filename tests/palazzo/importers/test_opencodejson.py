"""The OpenCode JSON-storage reader, on storage the real OpenCode 1.1.65 wrote against a
scripted model (tests/palazzo/data/importers/opencode-1.1.65/README.md), compared with the
SQLite reader on the database the real OpenCode 1.2.1 migrated it into, and on small made-up
storage for shapes the fixture does not hold. Counts are taken by walking the JSON files
here, not from the reader.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from palazzo.errors import ImportRejected
from palazzo.importers.chats import _opencode
from palazzo.importers.opencodejson import is_storage, read_storage
from palazzo.importers.transcript import Message, Transcript

FIXTURE = Path(__file__).parents[1] / "data" / "importers" / "opencode-1.1.65"
DATA = FIXTURE / "opencode"
STORAGE = DATA / "storage"
MIGRATED = FIXTURE / "migrated-1.2.1" / "opencode.db"
SESSION = "ses_dbe6cd158ffeW3ZoZjbGb2L0hD"
LIMIT = 1 << 30


def _json(file: Path) -> dict[str, Any]:
    return json.loads(file.read_text(encoding="utf-8"))


def _session_files() -> list[Path]:
    return sorted(STORAGE.glob("session/*/*.json"))


def _message_files() -> list[Path]:
    return sorted(STORAGE.glob("message/*/*.json"))


def _part_files() -> list[Path]:
    return sorted(STORAGE.glob("part/*/*.json"))


def _messages() -> list[dict[str, Any]]:
    """The session's messages as OpenCode orders them: by creation time, then id."""
    docs = [_json(f) for f in _message_files()]
    return sorted(docs, key=lambda m: (m["time"]["created"], m["id"]))


def _parts(mid: str) -> list[dict[str, Any]]:
    return sorted((_json(f) for f in (STORAGE / "part" / mid).glob("*.json")),
                  key=lambda p: p["id"])


def _read(path: Path = DATA) -> Transcript:
    (conv,) = read_storage(path, LIMIT)
    return conv


def _kept(conv: Transcript, role: str, kind: str) -> list[str]:
    return [m.text for m in conv.nodes if m.skip is None and m.role == role and m.kind == kind]


# -- the real storage -----------------------------------------------------------------------

def test_is_storage_takes_the_storage_folder_or_its_parent_only(tmp_path):
    assert is_storage(STORAGE) and is_storage(DATA)
    assert not is_storage(FIXTURE)  # two levels up
    assert not is_storage(STORAGE / "session")
    assert not is_storage(_message_files()[0])  # a file
    assert not is_storage(tmp_path / "missing")
    (tmp_path / "session").mkdir()
    assert not is_storage(tmp_path)  # no message folder
    (tmp_path / "message").mkdir()
    assert is_storage(tmp_path)


def test_the_fixture_is_what_the_readme_says():
    assert [f.stem for f in _session_files()] == [SESSION]
    assert _json(_session_files()[0])["version"] == "1.1.65"
    roles = [m["role"] for m in _messages()]
    assert roles.count("user") == 3 and roles.count("assistant") == 4
    types = [_json(f)["type"] for f in _part_files()]
    assert len(types) == 20
    assert {t: types.count(t) for t in set(types)} == {
        "text": 9, "step-start": 4, "step-finish": 4, "tool": 1, "reasoning": 1, "file": 1}
    assert sum(1 for f in _part_files() if _json(f).get("synthetic")) == 2


def test_name_title_and_one_transcript_from_either_folder():
    conv = _read()
    assert conv.name == f"opencode:{SESSION}"
    assert conv.title == _json(_session_files()[0])["title"] == "Reading the notes file"
    assert conv.where == str(_session_files()[0])
    assert _read(STORAGE).nodes == conv.nodes
    assert conv.skipped == []


def test_every_message_and_part_file_is_accounted_for():
    """Each message with plain text is one node keyed by its id; every other part is a node
    keyed ``<message id>/<part id>`` (a tool part two: its call and its output)."""
    conv = _read()
    expected: list[str] = []
    for message in _messages():
        mid = message["id"]
        for part in _parts(mid):
            if part["type"] == "text" and not part.get("synthetic"):
                if mid not in expected:
                    expected.append(mid)
            elif part["type"] == "tool":
                expected += [f"{mid}/{part['id']}", f"{mid}/{part['id']} output"]
            else:
                expected.append(f"{mid}/{part['id']}")
    assert [m.key for m in conv.nodes] == expected
    # here each message has one plain text part: one node a part, and the tool's output
    assert len(conv.nodes) == len(_part_files()) + 1 == 21
    assert not any(m.silent for m in conv.nodes)


def test_texts_roles_and_order_follow_the_files():
    conv = _read()
    by_key = {m.key: m for m in conv.nodes}
    texts = []
    for message in _messages():
        plain = [p["text"] for p in _parts(message["id"])
                 if p["type"] == "text" and not p.get("synthetic")]
        node = by_key[message["id"]]
        assert node.role == message["role"] and node.kind == "text" and node.skip is None
        assert node.text == "\n".join(plain)
        texts.append((message["role"], node.text))
    assert [(m.role, m.text) for m in conv.nodes if m.kind == "text" and m.skip is None] \
        == texts
    assert _kept(conv, "user", "text") == [
        '"Hello! Please read notes.txt and tell me what it says."\n',
        '"Please summarise the attached file in one line."\n', '"Thanks, that is all."\n']
    assert _kept(conv, "assistant", "text")[-1] == "You are welcome. Goodbye!"


def test_tool_call_and_output():
    conv = _read()
    (tool,) = [_json(f) for f in _part_files() if _json(f)["type"] == "tool"]
    assert tool["state"]["status"] == "completed"
    assert _kept(conv, "assistant", "tool_use") == [
        f"[read] {tool['state']['input']['filePath']}"] == ["[read] /home/user/project/notes.txt"]
    assert _kept(conv, "tool", "code_output") == [tool["state"]["output"]]
    assert "Buy milk." in tool["state"]["output"]
    keys = [m.key for m in conv.nodes]
    call = keys.index(f"{tool['messageID']}/{tool['id']}")
    # the call comes after the text of its message, the output right after the call, and the
    # answer quoting it in the next message
    assert keys[call - 1] == tool["messageID"] and keys[call + 1].endswith(" output")
    after = [m for m in conv.nodes[call + 2:] if m.skip is None]
    assert after[0].text.startswith("The file says:") and after[0].role == "assistant"


def test_reasoning_and_left_out_parts():
    conv = _read()
    (reasoning,) = [_json(f) for f in _part_files() if _json(f)["type"] == "reasoning"]
    assert _kept(conv, "assistant", "reasoning") == [reasoning["text"]]
    reasons = [m.skip for m in conv.nodes if m.skip]
    assert len(reasons) == 4 + 4 + 2 + 1
    assert reasons.count("step marker (a model call's start: snapshot hash, no text)") == 4
    assert reasons.count("step marker (a model call's end: tokens and cost, no text)") == 4
    assert reasons.count("attached file (its content went to the model as synthetic text)") == 1
    synthetic = [m for m in conv.nodes if m.skip and m.skip.startswith("synthetic text")]
    assert [m.text for m in synthetic] == [_json(f)["text"] for f in _part_files()
                                          if _json(f).get("synthetic")]
    assert all(m.role == "user" for m in synthetic)


def test_parents_timestamps_and_where():
    conv = _read()
    assert conv.nodes[0].parent is None
    assert all(m.parent == prev.key for prev, m in zip(conv.nodes, conv.nodes[1:], strict=False))
    created = {m["id"]: m["time"]["created"] / 1000 for m in _messages()}
    for m in conv.nodes:
        mid = m.key.split("/")[0]
        assert m.timestamp == created[mid]
        if m.key == mid:
            assert m.where == str(STORAGE / "message" / SESSION / f"{mid}.json")
        else:
            assert m.where == str(STORAGE / "part" / mid / f"{m.key.split('/')[1].split()[0]}"
                                  ".json")
    stamps = [m.timestamp for m in conv.nodes]
    assert stamps == sorted(stamps)


# -- parity with the SQLite reader, on OpenCode 1.2.1's migration of the same storage -----

@pytest.mark.cpython_only  # the engine's tests in Pyodide run without its sqlite3 package
def test_migration_kept_every_record():
    import sqlite3

    db = sqlite3.connect(MIGRATED)
    try:
        assert db.execute("SELECT id, title FROM session").fetchall() == [
            (SESSION, "Reading the notes file")]
        assert sorted(r[0] for r in db.execute("SELECT id FROM message")) \
            == sorted(f.stem for f in _message_files())
        assert sorted(r[0] for r in db.execute("SELECT id FROM part")) \
            == sorted(f.stem for f in _part_files())
    finally:
        db.close()


@pytest.mark.cpython_only  # the engine's tests in Pyodide run without its sqlite3 package
def test_same_names_titles_and_text_as_the_sqlite_reader():
    """A user moving from 1.1's JSON storage to 1.2's database gets the same conversation:
    same name and title, and the same messages (keys, roles, texts, timestamps, kinds,
    what is left out and why, order): both readers turn a message's parts into messages
    with ``message_nodes``."""
    skipped: list[tuple[str, str]] = []
    (db_conv,) = list(_opencode(MIGRATED, skipped))
    conv = _read()
    assert skipped == []
    assert (conv.name, conv.title) == (db_conv.name, db_conv.title)

    def texts(nodes: list[Message]) -> list[tuple[str, Any, str, float | None]]:
        return [(m.key, m.role, m.text, m.timestamp) for m in nodes
                if m.skip is None and m.kind == "text"]

    assert texts(conv.nodes) == texts(db_conv.nodes)
    assert len(texts(conv.nodes)) == 7

    def every(nodes: list[Message]) -> list[tuple[Any, ...]]:
        return [(m.key, m.parent, m.role, m.text, m.timestamp, m.kind, m.skip) for m in nodes]

    assert every(conv.nodes) == every(db_conv.nodes) and len(db_conv.nodes) == 21


# -- made-up storage ----------------------------------------------------------------------

def _write(root: Path, rel: str, doc: Any) -> Path:
    file = root / rel
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return file


def _message(root: Path, sid: str, mid: str, role: str, created: int, **extra: Any) -> Path:
    return _write(root, f"message/{sid}/{mid}.json",
                  {"id": mid, "sessionID": sid, "role": role, "time": {"created": created},
                   **extra})


def _part(root: Path, mid: str, pid: str, kind: str, **extra: Any) -> Path:
    return _write(root, f"part/{mid}/{pid}.json",
                  {"id": pid, "messageID": mid, "type": kind, **extra})


def _small(root: Path) -> Path:
    """A storage folder with one titled session: a user message, an assistant message."""
    _write(root, "session/global/ses_b.json", {"id": "ses_b", "title": "Small"})
    _message(root, "ses_b", "msg_1", "user", 1_700_000_000_000)
    _part(root, "msg_1", "prt_1", "text", text="hi")
    _message(root, "ses_b", "msg_2", "assistant", 1_700_000_001_000)
    _part(root, "msg_2", "prt_2", "text", text="hello")
    return root


def test_tool_states_long_output_and_long_call(tmp_path):
    root = _small(tmp_path)
    _part(root, "msg_2", "prt_3", "tool", tool="bash", callID="c1",
          state={"status": "completed", "input": {"command": "echo " + "x" * 300},
                 "output": "y" * 2_500 + "\n"})
    _part(root, "msg_2", "prt_4", "tool", tool="edit", callID="c2",
          state={"status": "error", "input": {"filePath": "/a.py"}, "error": "denied"})
    _part(root, "msg_2", "prt_5", "tool", tool="webfetch", callID="c3",
          state={"status": "running", "input": {"url": "https://example.com"}})
    _part(root, "msg_2", "prt_6", "tool", tool="todowrite", callID="c4",
          state={"status": "completed", "input": {"todos": []}, "output": "[]"})
    conv = _read(root)
    calls = _kept(conv, "assistant", "tool_use")
    assert len(calls[0]) == 200 and calls[0].startswith("[bash] echo xxx") \
        and calls[0].endswith("…")
    assert calls[1:] == ["[edit] /a.py", "[webfetch] https://example.com",
                         '[todowrite] {"todos": []}']
    outputs = _kept(conv, "tool", "code_output")
    assert outputs[0] == "y" * 2_000 + "… [500 more characters]"
    assert outputs[1:] == ["[error] denied", "[]"]
    (unfinished,) = [m for m in conv.nodes if m.skip]
    assert unfinished.skip == "tool call never finished (status 'running')"
    assert unfinished.key == "msg_2/prt_5 output" and unfinished.role == "tool"


def test_text_parts_join_and_other_shapes(tmp_path):
    root = _small(tmp_path)
    _part(root, "msg_2", "prt_3", "text", text="again")
    _part(root, "msg_2", "prt_4", "reasoning", text="  ")
    _part(root, "msg_2", "prt_5", "patch", hash="abc", files=["/a.py"])
    _part(root, "msg_2", "prt_6", "hologram")
    _part(root, "msg_1", "prt_0", "text", text="ignored", ignored=True)
    _message(root, "ses_b", "msg_3", "assistant", 1_700_000_002_000, summary=True)
    _part(root, "msg_3", "prt_7", "text", text="The conversation so far: …")
    _message(root, "ses_b", "msg_4", "user", 1_700_000_003_000)  # no parts
    conv = _read(root)
    assert [(m.key, m.text, m.skip) for m in conv.nodes] == [
        ("msg_1/prt_0", "ignored", "ignored text"),
        ("msg_1", "hi", None),
        ("msg_2", "hello\nagain", None),
        ("msg_2/prt_4", "", "reasoning (empty)"),
        ("msg_2/prt_5", "", "patch (files changed in a step: hash and file names, no text)"),
        ("msg_2/prt_6", "", "OpenCode part type 'hologram'"),
        ("msg_3", "", "context compaction summary (written by OpenCode)"),
        ("msg_4", "", "no parts")]


def test_messages_sorted_by_time_then_id_and_sessions_by_id(tmp_path):
    root = _small(tmp_path)
    _message(root, "ses_b", "msg_0", "user", 1_700_000_005_000)  # a later time, a lower id
    _part(root, "msg_0", "prt_9", "text", text="late")
    _message(root, "ses_b", "msg_5", "assistant", 1_700_000_001_000)  # same time as msg_2
    _part(root, "msg_5", "prt_8", "text", text="same time")
    _message(root, "ses_a", "msg_a", "user", 1_600_000_000_000)  # no session file
    _part(root, "msg_a", "prt_a", "text", text="orphan")
    first, second = read_storage(root, LIMIT)
    assert (first.name, first.title) == ("opencode:ses_a", "")
    assert first.where == str(root / "message" / "ses_a")
    assert [m.text for m in first.nodes] == ["orphan"]
    assert (second.name, second.title) == ("opencode:ses_b", "Small")
    assert [m.key for m in second.nodes] == ["msg_1", "msg_2", "msg_5", "msg_0"]


def test_a_session_without_messages_is_an_empty_transcript(tmp_path):
    root = tmp_path
    _write(root, "session/global/ses_e.json", {"id": "ses_e", "title": "Empty"})
    (root / "message").mkdir()
    (conv,) = read_storage(root, LIMIT)
    assert (conv.name, conv.title, conv.nodes) == ("opencode:ses_e", "Empty", [])


@pytest.mark.parametrize("rel, content, message", [
    ("message/ses_b/msg_2.json", "{not json", "msg_2.json"),
    ("message/ses_b/msg_2.json", "[1, 2]", "msg_2.json: must hold a JSON object"),
    ("message/ses_b/msg_2.json", {"id": "msg_2", "time": {"created": 1}},
     "msg_2.json: a message needs a 'role' string"),
    ("message/ses_b/msg_2.json", {"role": "user"}, "msg_2.json: a message needs an 'id'"),
    ("message/ses_b/msg_2.json", {"id": "msg_2", "role": "user", "time": 5},
     "msg_2.json: time must be an object"),
    ("message/ses_b/msg_2.json", {"id": "msg_2", "role": "user", "time": {"created": 1e300}},
     "msg_2.json time.created: timestamp"),
    ("message/ses_b/msg_9.json", {"id": "msg_1", "role": "user"},
     "two messages have the same id"),
    ("part/msg_2/prt_2.json", {"id": "prt_2", "text": "x"},
     "prt_2.json: a part needs a 'type' string"),
    ("part/msg_2/prt_2.json", {"id": "prt_2", "type": "text", "text": 5},
     "prt_2.json: a text part needs a 'text' string"),
    ("part/msg_2/prt_2.json", {"id": "prt_2", "type": "tool", "tool": "read"},
     "prt_2.json: a tool part needs a 'tool' string and a 'state' object"),
    ("part/msg_2/prt_2.json", {"id": "prt_2", "type": "tool", "tool": "read",
                               "state": {"status": "completed", "output": 5}},
     "prt_2.json: state.output must be a string"),
    ("part/msg_2/prt_2.json", {"id": "prt_2", "type": "reasoning", "text": []},
     "prt_2.json: a reasoning part's text must be a string"),
    ("part/msg_2/prt_2.json", '{"id": "prt_2", "type": "text", "text": "\\ud800"}',
     "prt_2.json"),
    ("session/global/ses_b.json", {"title": "no id"}, "ses_b.json: a session needs an 'id'"),
    ("session/global/ses_b.json", {"id": "ses_b", "title": 5},
     "ses_b.json: title must be a string"),
    ("session/other/ses_b.json", {"id": "ses_b"}, "session 'ses_b' appears twice"),
])
def test_malformed_files_are_rejected_naming_the_file(tmp_path, rel, content, message):
    root = _small(tmp_path)
    _write(root, rel, content)
    with pytest.raises(ImportRejected) as err:
        read_storage(root, LIMIT)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_not_storage_and_the_byte_limit(tmp_path):
    with pytest.raises(ImportRejected, match="not OpenCode's JSON storage"):
        read_storage(tmp_path, LIMIT)
    copy = tmp_path / "opencode"
    shutil.copytree(DATA, copy)
    total = sum(f.stat().st_size for f in (copy / "storage").rglob("*.json")
                if f.parent.parent.name in ("session", "message", "part"))
    assert len(read_storage(copy, total)) == 1
    with pytest.raises(ImportRejected, match=r"add up to more than \d+ bytes \(the limit\)"):
        read_storage(copy, total - 1)


# -- what is not a regular file ---------------------------------------------------------------

@pytest.mark.cpython_only
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_a_file_is_left_out_never_opened(tmp_path, in_time):
    """The real storage with a message file and a part file of another message replaced by
    FIFOs: the import finishes at once (it used to wait for a writer forever, holding the
    palace's writer lock), reads everything else, and names both FIFOs as left out."""
    from palazzo.importers.chats import plan_chats

    copy = tmp_path / "opencode"
    shutil.copytree(DATA, copy)
    storage = copy / "storage"
    message = sorted((storage / "message" / SESSION).glob("*.json"))[-1]
    part = sorted((storage / "part" / _messages()[0]["id"]).glob("*.json"))[0]
    for fifo in (message, part):
        fifo.unlink()
        os.mkfifo(fifo)
    plan = in_time(lambda: plan_chats(copy), message, part)
    left = {s["item"]: s["reason"] for s in plan.summary["skipped"]}
    assert left[str(message)] == left[str(part)] == "not a regular file (a FIFO)"
    assert plan.summary["conversations"] == 1
    skipped: list[tuple[str, str]] = []
    (conv,) = read_storage(copy, LIMIT, skipped)
    assert sorted(skipped) == sorted([(str(message), "not a regular file (a FIFO)"),
                                      (str(part), "not a regular file (a FIFO)")])
    assert message.stem not in {m.key for m in conv.nodes}
