import json

from palazzo import Palace
from palazzo.bridge import Bridge
from palazzo.ops import Operation, Registry


def test_reply_carries_the_request_id_and_result():
    bridge = Bridge(Palace(name="p"))
    reply = bridge.handle({"id": 7, "name": "palace_status", "args": {}})
    assert reply["id"] == 7 and reply["ok"] is True
    assert reply["result"]["name"] == "p"


def test_palazzo_errors_become_structured_replies():
    bridge = Bridge()
    reply = bridge.handle({"id": 1, "name": "palace_status", "args": {"x": 1}})
    assert reply == {
        "id": 1,
        "ok": False,
        "error": {
            "code": "invalid_arguments",
            "type": "ValidationError",
            "message": "palace_status arguments has unknown field(s): x",
        },
    }
    assert bridge.handle({"id": 2, "name": "nope"})["error"]["code"] == "unknown_operation"
    assert bridge.handle({"id": 3})["error"]["code"] == "palazzo_error"


def test_bugs_are_reported_as_internal_errors_with_a_traceback():
    reg = Registry()
    reg.add(Operation("boom", "raises", {"type": "object"}, lambda p, a: 1 / 0))
    reply = Bridge(registry=reg).handle({"id": 9, "name": "boom"})
    assert reply["ok"] is False
    assert reply["error"]["code"] == "internal_error"
    assert "ZeroDivisionError" in reply["error"]["traceback"]


def test_json_wire_form_round_trips_and_rejects_bad_json():
    bridge = Bridge()
    reply = json.loads(bridge.handle_json('{"id": "a", "name": "palace_status"}'))
    assert reply["ok"] is True and reply["id"] == "a"
    bad = json.loads(bridge.handle_json("{not json"))
    assert bad["ok"] is False and "not valid JSON" in bad["error"]["message"]
    deep = json.loads(bridge.handle_json("[" * 50_000 + "]" * 50_000))
    assert "nests deeper" in deep["error"]["message"]


def test_a_library_bridge_journals_writes_and_answers_library_operations():
    from palazzo.library import Library
    from palazzo.storage import MemoryRoot

    root = MemoryRoot()
    bridge = Bridge(library=Library(root, lambda **kw: Palace(clock=lambda: 0.0, **kw)))
    assert bridge.handle({"id": 1, "name": "search", "args": {"query": "x"}})["error"][
        "message"].startswith("no palace is open")
    assert bridge.call("new_palace", {"name": "atrium"})["palace"] == "atrium"
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
    assert bridge.call("storage_status")["status"]["journal_records"] == 1
    assert bridge.palace.counts()["drawers"] == 1
    again = Bridge(library=Library(root, lambda **kw: Palace(clock=lambda: 0.0, **kw)))
    root.unlock("atrium")
    again.call("open_palace", {"name": "atrium"})
    assert again.palace.counts()["drawers"] == 1
    bad = again.handle({"id": 2, "name": "delete_palace", "args": {"name": "atrium"}})
    assert bad["error"]["code"] == "invalid_arguments"
    assert again.call("list_palaces")["palaces"] == ["atrium"]
