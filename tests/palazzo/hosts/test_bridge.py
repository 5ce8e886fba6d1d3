import json

from palazzo import Palace
from palazzo.hosts.bridge import Bridge
from palazzo.ops import Operation, Registry
from palazzo.persist.library import Library
from palazzo.persist.storage import MemoryRoot


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
            "message": "Unknown field(s) for palace_status arguments: x (it takes: none).",
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
    from palazzo.persist.library import Library
    from palazzo.persist.storage import MemoryRoot

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


def worker_engine():
    """The browser worker's engine under CPython, first launch: the host (the worker script)
    got the lock of the first palace; what it would write is taken with ``drain``."""
    from palazzo.hosts import worker

    bridge = worker.start_engine("opfs", [], True)
    worker.drain(bridge)
    return worker, bridge


def test_the_worker_reopens_its_boot_palace_without_losing_the_lock():
    worker, bridge = worker_engine()
    name = bridge.call("list_palaces")["open"]
    assert worker.needs_files(bridge, name) is False  # the mirror in use stays
    worker.grant(bridge, name, True)
    assert bridge.call("open_palace", {"name": name})["status"]["read_only"] is False
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "after re-opening"})
    assert [op for op, *_ in worker.drain(bridge)] == ["append", "mark"]
    assert worker.read_only_palace(bridge) is None


def test_the_worker_s_hash_embedder_keeps_the_vectors_it_made():
    # ?embedder=hash: a palace embedded with the hash embedder (as the command line's
    # --embedder hash does) is not embedded again when the worker attaches it once more.
    worker, bridge = worker_engine()
    drawers = bridge.call("palace_status")["drawers"]
    assert worker.attach_hash_embedder(bridge)["missing"] == drawers > 0
    while worker.embed_step(bridge, limit=64)["remaining"]:
        pass
    assert bridge.call("palace_status")["embedded"] == drawers
    assert worker.attach_hash_embedder(bridge) == {"missing": 0}
    assert bridge.call("search", {"query": "roses", "mode": "vector"})["results"]


def test_the_worker_gives_back_the_lock_of_a_palace_it_leaves_or_does_not_open():
    worker, bridge = worker_engine()
    first = bridge.call("list_palaces")["open"]
    worker.grant(bridge, "B", True)
    bridge.call("new_palace", {"name": "B"})
    assert worker.drain(bridge)[-1] == ["release", first, "", None]
    worker.grant(bridge, first, True)  # asked for by an open_palace that then failed
    assert bridge.handle({"id": 1, "name": "new_palace", "args": {"name": "B"}})["ok"] is False
    assert worker.drain(bridge) == [["release", first, "", None]]
    worker.grant(bridge, "C", False)  # another tab holds "C": nothing is created read-only
    error = bridge.handle({"id": 2, "name": "new_palace", "args": {"name": "C"}})["error"]
    assert error["code"] == "read_only" and bridge.call("list_palaces")["open"] == "B"
    assert worker.drain(bridge) == []  # nothing written for "C", no lock kept


def test_the_worker_deletes_the_open_palace_and_creates_one_of_the_same_name():
    worker, bridge = worker_engine()
    refreshed = []
    bridge.hooks.refresh_ui = lambda: refreshed.append(bridge.call("palace_status"))
    worker.grant(bridge, "P", True)
    bridge.call("new_palace", {"name": "P"})
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "first life"})
    worker.drain(bridge)
    bridge.call("delete_palace", {"name": "P", "confirm": "P"})
    worker.refresh_after(bridge, "delete_palace")  # no palace open: nothing to redraw
    assert refreshed == []
    worker.grant(bridge, "P", True)
    assert bridge.call("new_palace", {"name": "P"})["status"]["read_only"] is False
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "second life"})
    ops = [(op, palace) for op, palace, *_ in worker.drain(bridge)]
    assert ops[0] == ("remove", "P") and ("release", "P") not in ops
    assert {op for op, _ in ops[1:]} <= {"write", "append", "delete", "truncate", "mark"}


def test_a_read_only_worker_leaves_embedding_to_the_writer():
    from palazzo.embed.hashing import HashEmbedder

    worker, writer = worker_engine()
    name = writer.call("list_palaces")["open"]
    files = {f: bytes(d) for f, d in writer.library.root.spaces[name].files.items()}
    reader = worker.start_engine("opfs", [name], False, name, files)
    assert worker.read_only_palace(reader) == name
    reader.palace.set_embedder(HashEmbedder())
    status = reader.call("palace_status")
    assert status["embedded"] < status["drawers"]  # vectors are missing, yet nothing fails
    assert worker.embed_step(reader) == {"embedded": 0, "remaining": 0}


def test_after_a_failed_write_the_worker_reboots_the_open_palace_from_storage():
    from palazzo.hosts import worker

    from .test_worker_storage import Storage

    storage = Storage()
    bridge = worker.start_engine("opfs", [], True)
    storage.apply(worker.drain(bridge))  # what the first launch wrote
    name = worker.open_name(bridge)
    before = bridge.call("palace_status")["drawers"]
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "never written"})
    worker.drain(bridge)  # the host's write of these changes failed: storage kept the rest
    worker.reload_palace(bridge, name, storage.read_all(name))
    assert bridge.call("palace_status")["drawers"] == before
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "written"})
    assert [op for op, *_ in worker.drain(bridge)] == ["append", "mark"]


def test_a_call_through_a_library_looks_its_operation_up_once_and_journals_it(monkeypatch):
    root = MemoryRoot()
    bridge = Bridge(library=Library(root, lambda **kw: Palace(clock=lambda: 0.0, **kw)))
    bridge.call("new_palace", {"name": "atrium"})
    lookups = []
    get = Registry.get
    monkeypatch.setattr(Registry, "get", lambda self, name: lookups.append(name) or
                        get(self, name))
    bridge.call("add_drawer", {"wing": "w", "room": "r", "content": "kept"})
    assert lookups == ["add_drawer"]
    again = Bridge(library=Library(root, lambda **kw: Palace(clock=lambda: 0.0, **kw)))
    again.call("open_palace", {"name": "atrium"})
    assert again.call("palace_status")["drawers"] == 1  # journaled, so a new reader sees it
