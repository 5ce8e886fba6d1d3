"""Conversation and provenance operations through a registry, as hosts call them."""

import copy
import json

import pytest

from palazzo.errors import NotFound, ValidationError
from palazzo.formats.palacefile import export_palace
from palazzo.ops import default_registry
from palazzo.ops.provenance import operation
from palazzo.palace import Palace
from palazzo.provenance.keys import Keyring

T0 = 1_700_000_000.0
KEY = bytes(range(32))
NAMES = {"add_turn", "import_conversation", "list_conversations", "list_turns",
         "register_policy", "list_policies", "slice_context", "verify_token", "rotate_key",
         "delete_key", "list_keys", "export_prov", "atlas"}
MESSAGES = [
    {"role": "user", "content": "Which database for the palace?", "phase": "planning"},
    {"role": "assistant", "content": "A snapshot plus a journal.", "phase": "synthesis"},
    {"role": "assistant", "content": "Or SQLite.", "parents": [0], "salience": 0.2},
    {"role": "user", "content": "Journal it is; why did replay fail?", "parents": [1, 2],
     "phase": "debugging"},
]


@pytest.fixture
def reg():
    return default_registry()


@pytest.fixture
def palace():
    p = Palace(clock=lambda: T0)
    p.provenance.keyring = Keyring.with_secret(KEY, T0)
    return p


def state(palace):
    return json.dumps(export_palace(palace, vectors=None, exported_at=0.0), sort_keys=True)


def test_register_adds_the_operations_once(reg):
    assert set(reg.names()) >= NAMES
    ops = {o["name"]: o for o in reg.describe()}
    assert {n for n in NAMES if ops[n]["mutates"]} == {"add_turn", "import_conversation",
                                                       "register_policy"}
    with pytest.raises(ValueError):
        reg.add(operation.ops[0])


def test_add_turn_import_and_list(reg, palace):
    call = reg.call
    root = call(palace, "add_turn", {"conversation": "db", "role": "user",
                                     "content": "Hello", "phase": "planning"})
    assert root["created"] and root["edges"] == [] and root["turn"]["depth"] == 0
    child = call(palace, "add_turn", {"conversation": "db", "role": "assistant",
                                      "content": "Hi", "parents": [root["turn"]["id"]],
                                      "timestamp": "2024-05-06T07:08:09+00:00"})
    assert child["edges"] == [{"parent": root["turn"]["id"], "child": child["turn"]["id"],
                               "type": "reply"}]
    assert child["turn"]["created_at"] == 1714979289.0
    again = call(palace, "add_turn", {"conversation": "db", "role": "assistant",
                                      "content": "Hi", "parents": [root["turn"]["id"]]})
    assert not again["created"] and again["turn"] == child["turn"]

    out = call(palace, "import_conversation", {"conversation": "db2", "messages": MESSAGES})
    assert out["created"] == 4 and out["messages"] == 4 and out["leaf"] == out["turn_ids"][3]
    assert out["summary"]["merges"] == 1 and out["summary"]["max_depth"] == 2
    text = call(palace, "import_conversation", {"conversation": "db2",
                                                "text": json.dumps(MESSAGES)})
    assert text["created"] == 0 and text["turn_ids"] == out["turn_ids"]

    convs = call(palace, "list_conversations", {})["conversations"]
    assert [c["conversation"] for c in convs] == ["db", "db2"]
    listed = call(palace, "list_turns", {"conversation": "db2"})
    assert listed["total"] == 4 and [t["id"] for t in listed["turns"]] == out["turn_ids"]
    assert listed["turns"][2]["content"] == "Or SQLite."
    assert listed["turns"][0]["children"] == sorted(out["turn_ids"][1:3])
    assert sorted(e["type"] for e in listed["edges"]) == ["branch", "branch", "merge", "merge"]
    page = call(palace, "list_turns", {"conversation": "db2", "offset": 3, "limit": 5,
                                       "with_content": False})
    assert [t["id"] for t in page["turns"]] == out["turn_ids"][3:] and page["edges"] == []
    assert "content" not in page["turns"][0]


def test_bad_arguments_change_nothing(reg, palace):
    call = reg.call
    call(palace, "import_conversation", {"conversation": "db", "messages": MESSAGES})
    before = state(palace)
    bad = [
        ("add_turn", {"conversation": "db", "role": "bot", "content": "x"}),
        ("add_turn", {"conversation": "db", "role": "user", "content": "x", "extra": 1}),
        ("add_turn", {"conversation": "db", "role": "user", "content": "x",
                      "parents": ["turn_missing"]}),
        ("import_conversation", {"conversation": "db", "messages": [
            *MESSAGES, {"role": "user", "content": "x", "parents": [9]}]}),
        ("import_conversation", {"conversation": "db", "messages": [
            *MESSAGES, {"role": "user", "content": ""}]}),
        ("import_conversation", {"conversation": "db"}),
        ("import_conversation", {"conversation": "db", "messages": MESSAGES, "text": "[]"}),
        ("import_conversation", {"conversation": "db", "text": "[{"}),
        ("register_policy", {"name": "p", "max_nodes": 0}),
        ("register_policy", {"name": "p", "phase_weights": {"sleep": 1}}),
        ("register_policy", {"name": "no spaces"}),
        ("register_policy", {"name": "default", "max_nodes": 3}),
        ("slice_context", {"anchor": "turn_missing"}),
        ("slice_context", {"anchor": "turn_missing", "policy": "nope"}),
        ("list_turns", {"conversation": "nobody"}),
        ("delete_key", {"key_id": "key_missing"}),
        ("verify_token", {}),
        ("verify_token", {"token": "x"}),
        ("export_prov", {}),
    ]
    for name, args in bad:
        with pytest.raises((ValidationError, NotFound)):
            call(palace, name, args)
        assert state(palace) == before, (name, args)


def test_policies_through_the_registry(reg, palace):
    call = reg.call
    listed = call(palace, "list_policies", {})
    assert [p["name"] for p in listed["policies"]] == ["default"]
    assert listed["policies"][0]["builtin"]
    out = call(palace, "register_policy", {"name": "debug-first", "max_nodes": 3,
                                           "phase_weights": {"debugging": 1, "synthesis": 0.2}})
    assert out["created"] and out["fingerprint"] != listed["fingerprint"]
    assert out["policy"]["phase_weights"]["debugging"] == 1.0
    assert out["policy"]["phase_weights"]["planning"] == 0.9  # the default for the rest
    again = call(palace, "register_policy", {"name": "debug-first", "max_nodes": 3,
                                             "phase_weights": {"debugging": 1.0,
                                                               "synthesis": 0.2}})
    assert not again["created"] and again["policy"] == out["policy"]
    names = [p["name"] for p in call(palace, "list_policies", {})["policies"]]
    assert names == ["default", "debug-first"]


def test_slice_verify_rotate_delete(reg, palace):
    call = reg.call
    leaf = call(palace, "import_conversation", {"conversation": "db",
                                                "messages": MESSAGES})["leaf"]
    call(palace, "register_policy", {"name": "small", "max_nodes": 2})
    bundle = call(palace, "slice_context", {"anchor": leaf})["bundle"]
    assert len(bundle["turns"]) == 4 and bundle["provenance"]["policy_id"] == "default"
    assert bundle["turns"][0]["id"] == leaf and bundle["turns"][0]["distance"] == 0
    assert bundle["sliced_at"] == T0
    small = call(palace, "slice_context", {"anchor": leaf, "policy": "small",
                                           "with_content": False})["bundle"]
    assert len(small["turns"]) == 2 and small["turns"][0]["content"] is None
    by_hash = call(palace, "slice_context", {"anchor": leaf,
                                             "policy": small["provenance"]["policy_params_hash"]})
    assert by_hash["bundle"]["provenance"] == small["provenance"]

    ok = call(palace, "verify_token", {"bundle": bundle, "recompute": True})
    assert ok == {"valid": True, "reason": "ok", "detail": ok["detail"],
                  "key_id": bundle["key_id"], "current": True}
    loose = call(palace, "verify_token", {"fields": bundle["provenance"],
                                          "token": bundle["token"],
                                          "key_id": bundle["key_id"]})
    assert loose["valid"]
    for token in ("00", 42, None, bundle["token"].upper()):
        v = call(palace, "verify_token", {"fields": bundle["provenance"], "token": token,
                                          "key_id": bundle["key_id"]})
        assert (v["valid"], v["reason"]) == (False, "malformed_token")
    forged = copy.deepcopy(bundle)
    forged["provenance"]["anchor_turn_id"] = forged["turns"][1]["id"]
    v = call(palace, "verify_token", {"bundle": forged, "recompute": True})
    assert (v["valid"], v["reason"], v["current"]) == (False, "bad_signature", False)

    rotated = call(palace, "rotate_key", {})
    assert rotated["retired"] == bundle["key_id"] and rotated["key_id"] != bundle["key_id"]
    assert [k["current"] for k in rotated["keys"]] == [False, True]
    assert call(palace, "verify_token", {"bundle": bundle})["valid"]
    newer = call(palace, "slice_context", {"anchor": leaf})["bundle"]
    assert newer["key_id"] == rotated["key_id"]
    keys = call(palace, "list_keys", {})
    assert keys["current"] == rotated["key_id"] and "secret" not in json.dumps(keys)
    with pytest.raises(ValidationError):
        call(palace, "delete_key", {"key_id": rotated["key_id"]})
    assert call(palace, "delete_key", {"key_id": bundle["key_id"]})["deleted"] == \
        bundle["key_id"]
    v = call(palace, "verify_token", {"bundle": bundle})
    assert (v["valid"], v["reason"]) == (False, "unknown_key")
    assert call(palace, "verify_token", {"bundle": newer})["valid"]


def test_budgeted_slices_and_forms_through_the_registry(reg, palace):
    call = reg.call
    leaf = call(palace, "import_conversation", {"conversation": "db",
                                                "messages": MESSAGES})["leaf"]
    whole = call(palace, "slice_context", {"anchor": leaf})["bundle"]
    out = call(palace, "slice_context", {"anchor": leaf, "budget": 25, "form": "text"})
    b = out["bundle"]
    assert b["budget"]["max_tokens"] == 25 and b["budget"]["used"] <= 25
    assert 1 < len(b["turns"]) < len(whole["turns"])
    assert b["provenance"]["slice_id"] != whole["provenance"]["slice_id"]
    assert out["form"] == "text" and out["tokens"] <= 25
    assert out["context"].endswith("user: Journal it is; why did replay fail?")
    msgs = call(palace, "slice_context", {"anchor": leaf, "budget": 25, "form": "messages"})
    assert msgs["bundle"]["provenance"] == b["provenance"] and msgs["tokens"] <= 25
    assert [m["role"] for m in msgs["context"]] == [
        t["role"] for t in sorted(b["turns"], key=lambda t: (t["created_at"], t["depth"],
                                                              t["id"]))]
    rows = call(palace, "slice_context", {"anchor": leaf, "form": "triples"})["context"]
    assert {r["kind"] for r in rows} == {"edge"} and len(rows) == len(whole["edges"])

    ok = call(palace, "verify_token", {"bundle": b, "recompute": True})
    assert ok["valid"] and ok["current"]
    loose = {"fields": b["provenance"], "token": b["token"], "key_id": b["key_id"],
             "recompute": True}
    assert call(palace, "verify_token", {**loose, "budget": 25})["current"]
    assert not call(palace, "verify_token", loose)["current"]  # the budget is needed
    doc = call(palace, "export_prov", {"bundle": b})["document"]
    entity = doc["entity"][f"palazzo:slice_{b['provenance']['slice_id']}"]
    assert entity["palazzo:maxTokens"] == 25
    fresh = call(palace, "export_prov", {"anchor": leaf, "budget": 25})["document"]
    assert fresh["entity"].keys() == doc["entity"].keys()

    for args, match in [({"budget": 0}, "at least 1"), ({"budget": "10"}, "whole number"),
                        ({"form": "xml"}, "one of"), ({"budget": 2}, "at least"),
                        ({"form": "text", "with_content": False}, "with_content")]:
        with pytest.raises(ValidationError, match=match):
            call(palace, "slice_context", {"anchor": leaf, **args})
    with pytest.raises(ValidationError, match="own budget"):
        call(palace, "verify_token", {"bundle": b, "budget": 25})
    with pytest.raises(ValidationError, match="go with 'anchor'"):
        call(palace, "export_prov", {"bundle": b, "budget": 25})


def test_export_prov_is_w3c_prov_json(reg, palace):
    call = reg.call
    ids = call(palace, "import_conversation", {"conversation": "db",
                                               "messages": MESSAGES})["turn_ids"]
    bundle = call(palace, "slice_context", {"anchor": ids[3]})["bundle"]
    out = call(palace, "export_prov", {"bundle": bundle})
    assert out["format"] == "PROV-JSON"
    doc = out["document"]
    assert doc["prefix"] == {"palazzo": "urn:palazzo:"}
    sid = "palazzo:slice_" + bundle["provenance"]["slice_id"]
    act = "palazzo:slicing_" + bundle["provenance"]["slice_id"]
    turns = {f"palazzo:{t}" for t in ids}
    assert set(doc["entity"]) == turns | {sid, "palazzo:policy_default"}
    assert doc["entity"][sid]["palazzo:token"] == bundle["token"]
    assert doc["entity"][sid]["palazzo:graph_snapshot_hash"] == \
        bundle["provenance"]["graph_snapshot_hash"]
    assert doc["entity"]["palazzo:policy_default"]["prov:type"] == "prov:Plan"
    assert doc["entity"][f"palazzo:{ids[2]}"]["prov:value"] == "Or SQLite."
    assert list(doc["activity"]) == [act]
    assert doc["activity"][act]["prov:startTime"] == "2023-11-14T22:13:20+00:00"
    assert doc["agent"]["palazzo:engine"]["prov:type"] == "prov:SoftwareAgent"
    assert {u["prov:entity"] for u in doc["used"].values()} == turns
    assert all(u["prov:activity"] == act for u in doc["used"].values())
    assert doc["wasGeneratedBy"] == {"_:g0": {"prov:entity": sid, "prov:activity": act,
                                              "prov:time": "2023-11-14T22:13:20+00:00"}}
    assert doc["wasAssociatedWith"]["_:a0"]["prov:plan"] == "palazzo:policy_default"
    derived = list(doc["wasDerivedFrom"].values())
    assert {d["prov:usedEntity"] for d in derived if d["prov:generatedEntity"] == sid} == turns
    links = {(d["prov:usedEntity"], d["prov:generatedEntity"], d["palazzo:edgeType"])
             for d in derived if "palazzo:edgeType" in d}
    assert (f"palazzo:{ids[1]}", f"palazzo:{ids[3]}", "merge") in links and len(links) == 4
    assert doc["wasAttributedTo"]["_:t0"]["prov:agent"] == "palazzo:role_user"
    json.dumps(doc)  # JSON-able throughout
    # A fresh slice exports the same document; a forged bundle exports nothing.
    assert call(palace, "export_prov", {"anchor": ids[3]})["document"] == doc
    forged = copy.deepcopy(bundle)
    forged["turns"][0]["content"] = "something else"
    with pytest.raises(ValidationError, match="content_mismatch"):
        call(palace, "export_prov", {"bundle": forged})
    with pytest.raises(ValidationError):
        call(palace, "export_prov", {"bundle": bundle, "anchor": ids[3]})


def test_import_op_keeps_the_open_palace_keys(reg, palace):
    call = reg.call
    leaf = call(palace, "import_conversation", {"conversation": "db",
                                                "messages": MESSAGES})["leaf"]
    call(palace, "register_policy", {"name": "small", "max_nodes": 2})
    bundle = call(palace, "slice_context", {"anchor": leaf, "policy": "small"})["bundle"]
    doc = call(palace, "export", {"format": "json", "vectors": "none"})["document"]
    assert doc["palace"]["provenance"]["keys"] == "not exported"
    assert KEY.hex() not in json.dumps(doc)
    call(palace, "import", {"document": doc})
    assert call(palace, "verify_token", {"bundle": bundle, "recompute": True})["current"]
    elsewhere = Palace(clock=lambda: T0)
    call(elsewhere, "import", {"document": doc})
    v = call(elsewhere, "verify_token", {"bundle": bundle})
    assert (v["valid"], v["reason"]) == (False, "unknown_key")
