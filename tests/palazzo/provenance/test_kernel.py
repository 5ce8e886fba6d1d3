"""The provenance kernel: policies, policy-weighted slicing, tokens, keys, admissible bundles.

The golden test pins slice id and token for a fixed conversation, clock and key; it runs in
CPython here and inside Pyodide in the browser run, which is how the two are shown to agree.
"""

import copy
import dataclasses
import hashlib
import hmac
import json
import os
import subprocess
import sys

import pytest

from palazzo import call
from palazzo.errors import ImportRejected, NotAdmissible, NotFound, PalazzoError, ValidationError
from palazzo.formats.palacefile import export_palace, read_palace
from palazzo.palace import Palace
from palazzo.provenance import kernel as prov
from palazzo.provenance.canonical import canonical_bytes
from palazzo.provenance.kernel import AdmissibleEvidenceBundle, policy_weighted_bfs
from palazzo.provenance.keys import Keyring, key_id_of
from palazzo.provenance.policy import PolicyRegistry, SlicePolicyV1
from palazzo.provenance.records import FIELDS, ProvenanceFields

T0 = 1_700_000_000.0
KEY = bytes(range(32))
MESSAGES = [
    {"role": "user", "content": "We need a plan for the launch.", "phase": "planning",
     "salience": 0.8},
    {"role": "assistant", "content": "Plan: ship the engine first, then the page.",
     "phase": "synthesis", "salience": 0.9},
    {"role": "assistant", "content": "Alternatively, ship the page first.", "parents": [0],
     "phase": "exploration", "salience": 0.4},
    {"role": "user", "content": "The engine test fails in Pyodide.", "parents": [1],
     "phase": "debugging", "salience": 0.7},
    {"role": "assistant", "content": "Fixed: sha256 instead of xxHash64.", "phase": "debugging",
     "salience": 0.6},
    {"role": "user", "content": "Combine both plans.", "parents": [4, 2],
     "phase": "consolidation", "salience": 1.0},
    {"role": "assistant", "content": "Side note on naming.", "parents": [3],
     "phase": "exploration", "salience": 0.2},
]

# Computed once from the fixture below and committed; they must never change.
GOLDEN = {
    "anchor": "turn_14747c975ca4402c676f47957bac01a6",
    "slice_id": "c870310d8740eb03d1e854dc0c1f408bbe066d2da792b041ae66fccbda8ee5f5",
    "params_hash": "2816ac0262edbe4ee7da43b55937d6cfc80b05d7afc46e00cfe550eab47c7fe2",
    "snapshot": "9fd152f30f2abafc36cb6dce6d3039104238dc8aa34f0f0cd147289cfa646186",
    "key_id": "key_40472938d37bda6b",
    "token": "041d3316200fd9fbf76c6f032ebd776811de7ce1aa67732c032ae860e92e0fb6",
    "order": ["turn_14747c975ca4402c676f47957bac01a6", "turn_17dd8e55fc486cadbfcf71506ad03276",
              "turn_e34acaaa908781bcfc32f24f09402d08", "turn_f6be7adaa237be2777a65ac80b55267a",
              "turn_55989c16a823be81c7cc1f557670c307", "turn_70ce0d0ba2decf5602d6253897a2a9cb",
              "turn_3754533ad4fab186f681f08940605650"],
    "tight_slice_id": "a2aa8db55e70b73663785bc4a61f5c886742bbfc0b187391a0ca5938507e0036",
    "tight_token": "c2956e76a428634fd71eb7452f4a4117d10937a9dee4f30116bf6f66c5ddd1db",
}
TIGHT = SlicePolicyV1("tight", max_nodes=3, include_siblings=False)


def golden_palace(order=None):
    """The fixture: seven turns (a branch, a merge, a side branch), fixed clock and key.
    ``order`` imports the messages' turns in another (parents-first) order."""
    p = Palace(clock=lambda: T0)
    p.provenance.keyring = Keyring.with_secret(KEY, T0)
    ids = p.conversations.import_messages("launch", MESSAGES).turn_ids
    if order is not None:
        q = Palace(clock=lambda: T0)
        q.provenance.keyring = Keyring.with_secret(KEY, T0)
        for i in order:
            t = p.conversations.turns[ids[i]]
            q.conversations.add_turn("launch", t.role, p.drawer(t.drawer_id).content,
                                     parents=list(t.parents), phase=t.phase,
                                     salience=t.salience)
        p = q
    return p, list(ids)


def golden_values():
    """Slice id, snapshot and token of the fixture under the default and 'tight' policies
    (also called in fresh processes by the subprocess test)."""
    p, ids = golden_palace()
    p.provenance.register_policy(TIGHT)
    b = p.provenance.slice(ids[5])
    t = p.provenance.slice(ids[5], "tight")
    return {"slice_id": b.fields.slice_id, "snapshot": b.fields.graph_snapshot_hash,
            "token": b.token, "key_id": b.key_id, "tight_slice_id": t.fields.slice_id,
            "tight_token": t.token}


@pytest.fixture
def fixture():
    p, ids = golden_palace()
    return p, ids, p.provenance.slice(ids[5]).to_dict()


# -- canonical form and policies --------------------------------------------------------------

def test_canonical_bytes_are_sorted_compact_ascii_and_refuse_floats():
    assert canonical_bytes({"b": [1, "é"], "a": True, "c": None}) == \
        b'{"a":true,"b":[1,"\\u00e9"],"c":null}'
    with pytest.raises(TypeError, match="quantise"):
        canonical_bytes({"x": [0.5]})
    with pytest.raises(TypeError):
        canonical_bytes({1: "key not a string"})


def test_policy_fingerprint_is_over_quantised_canonical_parameters():
    default = SlicePolicyV1()
    assert default.params_hash == GOLDEN["params_hash"]
    assert canonical_bytes(default.canonical()) == (
        b'{"distance_decay":900000,"include_siblings":true,"kind":"SlicePolicyV1",'
        b'"max_nodes":64,"max_radius":8,"max_siblings_per_node":3,"phase_weights":'
        b'{"consolidation":600000,"debugging":500000,"exploration":300000,"planning":900000,'
        b'"synthesis":1000000},"salience_weight":300000}')
    assert default.params_hash == hashlib.sha256(canonical_bytes(default.canonical())).hexdigest()
    # Below the quantum a float changes nothing (and is stored quantised); above it, it does.
    near = SlicePolicyV1("other", salience_weight=0.3000000004)
    assert near.params_hash == default.params_hash and near.salience_weight == 0.3
    assert SlicePolicyV1(salience_weight=0.300001).params_hash != default.params_hash
    assert SlicePolicyV1(phase_weights={"debugging": 0.51}).params_hash != default.params_hash
    assert SlicePolicyV1(phase_weights={"debugging": 0.5}) == default  # missing = defaults
    for change in ({"max_nodes": 65}, {"max_radius": 7}, {"distance_decay": 0.8},
                   {"include_siblings": False}, {"max_siblings_per_node": 2}):
        assert SlicePolicyV1(**change).params_hash != default.params_hash, change


@pytest.mark.parametrize("bad", [
    {"name": "two words"}, {"name": ""}, {"name": "x" * 65}, {"max_nodes": 0},
    {"max_nodes": True}, {"max_nodes": 1.0}, {"max_radius": -1}, {"distance_decay": 0},
    {"distance_decay": 1.5}, {"salience_weight": -0.1}, {"phase_weights": {"sleep": 1}},
    {"phase_weights": {"debugging": 2}}, {"include_siblings": 1},
    {"max_siblings_per_node": 1001},
])
def test_policy_refuses_bad_parameters(bad):
    with pytest.raises(ValidationError):
        SlicePolicyV1(**bad)
    with pytest.raises(ValidationError):
        SlicePolicyV1.from_dict({"name": "p", **bad})


def test_registry_is_immutable_per_name_and_has_a_composite_fingerprint():
    reg = PolicyRegistry()
    assert [p.name for p in reg] == ["default"]
    empty = reg.fingerprint()
    assert reg.register(TIGHT) == (TIGHT, True)
    assert reg.fingerprint() != empty
    same = SlicePolicyV1.from_dict(TIGHT.to_dict())
    assert reg.register(same) == (TIGHT, False)
    with pytest.raises(ValidationError, match="other parameters"):
        reg.register(SlicePolicyV1("tight", max_nodes=4))
    with pytest.raises(ValidationError):
        reg.register(SlicePolicyV1("default", max_nodes=4))
    assert reg.get(TIGHT.params_hash) is TIGHT and reg.get("tight") is TIGHT
    with pytest.raises(NotFound, match="known: default, tight"):
        reg.get("loose")
    again = PolicyRegistry()
    again.register(same)
    assert again.fingerprint() == reg.fingerprint()


# -- slicing ---------------------------------------------------------------------------------

def test_bfs_takes_turns_best_first_with_the_seed_priority(fixture):
    p, ids, _ = fixture
    picks = policy_weighted_bfs(p.conversations, ids[5], SlicePolicyV1())
    assert [s.turn_id for s in picks] == GOLDEN["order"]
    for alpha, beta in ((0.3, 0.9), (0.75, 0.5)):
        policy = SlicePolicyV1(salience_weight=alpha, distance_decay=beta)
        weights = dict(policy.phase_weights)
        checked = policy_weighted_bfs(p.conversations, ids[5], policy)
        assert len(checked) == 7
        for s in checked:
            t = p.conversations.turns[s.turn_id]
            want = weights[t.phase] * (1 - alpha + alpha * t.salience) * beta ** s.distance
            assert s.priority == pytest.approx(want, rel=1e-12)
    dist = {s.turn_id: s.distance for s in picks}
    assert [dist[i] for i in ids] == [4, 3, 1, 2, 1, 0, 1]  # ids[6] is ids[4]'s sibling


def test_bfs_respects_max_nodes_radius_and_siblings(fixture):
    p, ids, _ = fixture
    conv = p.conversations
    two = policy_weighted_bfs(conv, ids[5], SlicePolicyV1(max_nodes=2))
    assert [s.turn_id for s in two] == GOLDEN["order"][:2]
    near = policy_weighted_bfs(conv, ids[5], SlicePolicyV1(max_radius=1))
    # Parents at 1 hop, and their siblings at their own distance: ids[6] beside ids[4],
    # ids[1] beside ids[2] (both children of ids[0]).
    assert {s.turn_id: s.distance for s in near} == {ids[5]: 0, ids[4]: 1, ids[2]: 1,
                                                     ids[6]: 1, ids[1]: 1}
    alone = policy_weighted_bfs(conv, ids[5], SlicePolicyV1(max_radius=0, include_siblings=False))
    assert [s.turn_id for s in alone] == [ids[5]]
    flat = {s.turn_id: s.distance
            for s in policy_weighted_bfs(conv, ids[5], SlicePolicyV1(include_siblings=False))}
    assert flat[ids[6]] == 3  # reached through its parent, not as a sibling
    capped = policy_weighted_bfs(conv, ids[1], SlicePolicyV1(max_radius=0,
                                                              max_siblings_per_node=1))
    assert [s.turn_id for s in capped] == [ids[1], ids[2]]  # ids[1]'s one sibling
    with pytest.raises(NotFound):
        policy_weighted_bfs(conv, "turn_nowhere", SlicePolicyV1())


def test_phase_weights_steer_the_slice(fixture):
    p, ids, _ = fixture
    explore = SlicePolicyV1(max_nodes=2, phase_weights={
        "exploration": 1.0, "debugging": 0.01, "synthesis": 0.01, "planning": 0.01,
        "consolidation": 0.01})
    picked = [s.turn_id for s in policy_weighted_bfs(p.conversations, ids[5], explore)]
    assert picked == [ids[5], ids[2]]  # the exploration parent instead of the debugging one
    default = policy_weighted_bfs(p.conversations, ids[5], SlicePolicyV1(max_nodes=2))
    assert [s.turn_id for s in default] == [ids[5], ids[4]]


def test_ties_are_broken_by_turn_id():
    p = Palace(clock=lambda: T0)
    add = p.conversations.add_turn
    root, _ = add("t", "user", "root")
    kids = sorted(add("t", "assistant", f"answer {i}", parents=[root.id])[0].id
                  for i in range(6))
    picks = policy_weighted_bfs(p.conversations, root.id, SlicePolicyV1(include_siblings=False))
    assert [s.turn_id for s in picks] == [root.id, *kids]
    assert len({s.priority for s in picks[1:]}) == 1


def test_each_taken_turn_offers_at_most_max_siblings_per_node():
    # m merges a and b; sa is a's other child, sb is b's. m's siblings are sa and sb, but sa's
    # only sibling is m: with a cap of 1, m offers its best sibling and nobody offers the other.
    p = Palace(clock=lambda: T0)
    add = p.conversations.add_turn
    a, b = add("s", "user", "a")[0], add("s", "user", "b")[0]
    m = add("s", "assistant", "m", parents=[a.id, b.id])[0]
    sa = add("s", "assistant", "sa", parents=[a.id], salience=0.1)[0]
    sb = add("s", "assistant", "sb", parents=[b.id], salience=0.9)[0]
    assert p.conversations.siblings_of(m.id) == sorted([sa.id, sb.id])
    taken = {cap: [s.turn_id for s in policy_weighted_bfs(
        p.conversations, m.id, SlicePolicyV1(max_radius=0, max_siblings_per_node=cap))]
        for cap in (0, 1, 2)}
    assert taken == {0: [m.id], 1: [m.id, sb.id], 2: [m.id, sb.id, sa.id]}


def test_same_inputs_give_byte_identical_slices_100_times(fixture):
    p, ids, first = fixture
    for _ in range(100):
        again = p.provenance.slice(ids[5]).to_dict()
        assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True)
    # Building the same graph in another order changes nothing either.
    q, _ = golden_palace(order=[0, 2, 1, 3, 6, 4, 5])
    assert q.provenance.slice(ids[5]).to_dict() == first


def test_golden_slice_id_and_token():
    values = golden_values()
    assert values == {k: GOLDEN[k] for k in values}
    # The token is HMAC-SHA256 over exactly these bytes (the six fields in order).
    message = ('["palazzo-admissibility-v1","{slice_id}","{anchor}","default","{params_hash}",'
               '"{snapshot}","palazzo.slice.v1"]').format(**GOLDEN).encode("ascii")
    assert hmac.new(KEY, message, hashlib.sha256).hexdigest() == GOLDEN["token"]
    assert key_id_of(KEY) == GOLDEN["key_id"]


def test_without_a_budget_the_slice_and_token_are_unchanged():
    p, ids = golden_palace()
    b = p.provenance.slice(ids[5], budget=None)
    assert b.budget is None and "budget" not in b.to_dict()
    assert (b.fields.slice_id, b.token) == (GOLDEN["slice_id"], GOLDEN["token"])
    many = p.provenance.slice_many([ids[5], ids[5]])
    assert [(m.fields.slice_id, m.token) for m in many] == [(GOLDEN["slice_id"],
                                                             GOLDEN["token"])] * 2


@pytest.mark.cpython_only  # Pyodide has no subprocesses
def test_same_golden_values_in_two_fresh_processes():
    code = ("import importlib.util, json, sys\n"
            "spec = importlib.util.spec_from_file_location('golden', sys.argv[1])\n"
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
            "sys.stdout.write(json.dumps(m.golden_values(), sort_keys=True))\n")
    outs = []
    for seed in ("1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=os.pathsep.join(sys.path))
        outs.append(subprocess.run([sys.executable, "-c", code, __file__], env=env,
                                   capture_output=True, text=True, check=True).stdout)
    assert outs[0] == outs[1] == json.dumps(golden_values(), sort_keys=True)
    assert json.loads(outs[0])["token"] == GOLDEN["token"]


# -- verification ----------------------------------------------------------------------------

def test_a_fresh_bundle_verifies(fixture):
    p, ids, b = fixture
    v = p.provenance.verify(b["provenance"], b["token"], b["key_id"])
    assert v.to_dict() == {"valid": True, "reason": "ok", "key_id": GOLDEN["key_id"],
                           "detail": "the token is valid for these fields"}
    assert p.provenance.check(b).valid
    assert p.provenance.is_current(ProvenanceFields(**b["provenance"]))


@pytest.mark.parametrize("name", FIELDS)
def test_changing_any_one_field_fails(fixture, name):
    p, _, b = fixture
    fields = dict(b["provenance"])
    value = fields[name]
    if name == "policy_id":
        fields[name] = "tight"
    elif name == "schema_version":
        fields[name] = "palazzo.slice.v2"
    else:
        fields[name] = value[:-1] + ("0" if value[-1] != "0" else "1")
    v = p.provenance.verify(fields, b["token"], b["key_id"])
    assert not v.valid
    assert v.reason == ("unsupported_schema" if name == "schema_version" else "bad_signature")
    doc = copy.deepcopy(b)
    doc["provenance"] = fields
    assert not p.provenance.check(doc).valid


def test_changing_any_byte_of_the_token_fails(fixture):
    p, _, b = fixture
    token = b["token"]
    for i in range(len(token)):
        forged = token[:i] + ("a" if token[i] != "a" else "b") + token[i + 1:]
        v = p.provenance.verify(b["provenance"], forged, b["key_id"])
        assert (v.valid, v.reason) == (False, "bad_signature"), i


@pytest.mark.parametrize("token", [
    "", "ab", GOLDEN["token"][:-1], GOLDEN["token"] + "0", GOLDEN["token"].upper(),
    "g" * 64, " " + GOLDEN["token"][1:], None, 7, ["x"], {"t": 1}, "é" * 64,
])
def test_malformed_tokens_are_refused_without_exceptions(fixture, token):
    p, _, b = fixture
    v = p.provenance.verify(b["provenance"], token, b["key_id"])
    assert (v.valid, v.reason) == (False, "malformed_token")


@pytest.mark.parametrize("fields", [None, [], {}, {"slice_id": "x"}])
def test_malformed_fields_and_keys_are_refused_without_exceptions(fixture, fields):
    p, _, b = fixture
    assert p.provenance.verify(fields, b["token"], b["key_id"]).reason == "malformed_fields"
    assert p.provenance.verify(b["provenance"], b["token"], fields).reason == "unknown_key"
    assert p.provenance.check(fields).reason in {"malformed_bundle", "malformed_token"}


def test_changed_policy_parameters_fail(fixture):
    p, ids, b = fixture
    doc = copy.deepcopy(b)
    doc["policy"]["max_nodes"] = 65
    assert p.provenance.check(doc).reason == "policy_params_mismatch"
    doc["policy"] = {"nonsense": 1}
    assert p.provenance.check(doc).reason == "malformed_bundle"
    # A token for 'tight' from this palace, checked where 'tight' means other rules.
    p.provenance.register_policy(TIGHT)
    t = p.provenance.slice(ids[5], "tight").to_dict()
    other, _ = golden_palace()
    other.provenance.register_policy(SlicePolicyV1("tight", max_nodes=4))
    v = other.provenance.check(t)
    assert (v.valid, v.reason) == (False, "policy_changed")
    gone, _ = golden_palace()
    assert gone.provenance.check(t).reason == "unknown_policy"
    assert other.provenance.check(b).valid  # the default policy is the same everywhere


def test_a_tampered_bundle_body_fails(fixture):
    p, _, b = fixture
    check = p.provenance.check

    def reason(edit):
        doc = copy.deepcopy(b)
        edit(doc)
        return check(doc).reason

    assert reason(lambda d: d["turns"].pop()) == "snapshot_mismatch"
    assert reason(lambda d: d["edges"].pop()) == "slice_mismatch"
    assert reason(lambda d: d["turns"][1].update(content="Fixed: md5.")) == "content_mismatch"
    assert reason(lambda d: d["turns"][1].update(role="system")) == "turn_mismatch"
    assert reason(lambda d: d["turns"][1].update(content_hash="0" * 64)) == "turn_mismatch"
    assert reason(lambda d: d["turns"].append(d["turns"][1])) == "slice_mismatch"
    assert reason(lambda d: d["turns"][1].pop("depth")) == "malformed_bundle"
    # Fields outside the six are vouched for by this palace's own records of its turns.
    for name, value in (("phase", "synthesis"), ("salience", 0.123), ("depth", 7),
                        ("created_at", 0.0), ("drawer_id", "drawer_x")):
        assert reason(lambda d, n=name, v=value: d["turns"][2].update({n: v})) == \
            "turn_mismatch", name
    assert reason(lambda d: d["turns"][2].update(priority=9.0, distance=5)) == "ok"
    assert reason(lambda d: d.update(extra=1)) == "malformed_bundle"
    assert reason(lambda d: d["edges"][0].update(type="fork")) == "malformed_bundle"
    # Order and missing text are not tampering: the hashes use sorted ids and content hashes.
    assert reason(lambda d: d["turns"].reverse()) == "ok"
    assert reason(lambda d: [t.update(content=None) for t in d["turns"]]) == "ok"


def test_verification_compares_in_constant_time(fixture, monkeypatch):
    p, _, b = fixture
    calls = []
    real = hmac.compare_digest

    def spy(x, y):
        calls.append((x, y))
        return real(x, y)

    monkeypatch.setattr(prov.hmac, "compare_digest", spy)
    assert p.provenance.verify(b["provenance"], b["token"], b["key_id"]).valid
    assert calls == [(b["token"].encode(), b["token"].encode())]


# -- keys ------------------------------------------------------------------------------------

def test_rotation_keeps_old_tokens_valid_and_deletion_ends_them(fixture):
    p, ids, old = fixture
    pv = p.provenance
    new_key = pv.rotate_key()
    assert new_key.key_id != old["key_id"] and pv.keyring.current == new_key.key_id
    assert pv.keyring.get(old["key_id"]).retired_at == T0
    assert pv.check(old).valid
    fresh = pv.slice(ids[5]).to_dict()
    assert fresh["key_id"] == new_key.key_id and fresh["token"] != old["token"]
    assert fresh["provenance"] == old["provenance"]
    with pytest.raises(ValidationError, match="rotate_key first"):
        pv.delete_key(new_key.key_id)
    pv.delete_key(old["key_id"])
    v = pv.check(old)
    assert (v.valid, v.reason) == (False, "unknown_key")
    assert pv.check(fresh).valid
    with pytest.raises(NotFound):
        pv.delete_key(old["key_id"])


def test_keys_are_made_on_first_use_from_the_injected_source():
    drawn = []

    def entropy(n):
        drawn.append(n)
        return bytes([len(drawn)]) * n

    p, ids = golden_palace()
    p.provenance.keyring = Keyring(entropy)
    assert p.provenance.keyring.current is None and drawn == []
    b = p.provenance.slice(ids[5])
    assert drawn == [32] and b.key_id == key_id_of(b"\x01" * 32)
    assert p.provenance.keyring.keys[b.key_id].created_at == T0
    p.provenance.slice(ids[0])
    assert drawn == [32]  # the same key signs until rotation
    p.provenance.rotate_key()
    assert drawn == [32, 32] and p.provenance.keyring.current == key_id_of(b"\x02" * 32)
    assert p.provenance.keyring.revision == 2
    p.provenance.keyring = Keyring(lambda n: b"short")
    with pytest.raises(PalazzoError):
        p.provenance.slice(ids[5])
    with pytest.raises(ValidationError):
        Keyring.with_secret(b"too short")
    assert "secret" not in repr(Keyring.with_secret(KEY)) and KEY.hex() not in repr(
        Keyring.with_secret(KEY).keys)


def test_keyring_json_round_trip_for_local_storage(fixture):
    p, ids, b = fixture
    p.provenance.rotate_key()
    stored = json.loads(json.dumps(p.provenance.keyring_to_json()))
    assert stored["keys"][0]["secret"] == KEY.hex()
    q, _ = golden_palace()
    q.provenance.keyring = Keyring()
    assert q.provenance.check(b).reason == "unknown_key"
    q.provenance.keyring_from_json(stored)
    assert q.provenance.check(b).valid
    assert q.provenance.keyring_to_json() == stored
    bad = [
        {**stored, "format": "x"},
        {**stored, "current": "key_0000000000000000"},
        {**stored, "keys": [{**stored["keys"][0], "key_id": "key_0000000000000000"},
                            stored["keys"][1]]},
        {**stored, "keys": [{**stored["keys"][0], "secret": "00" * 16}]},
        {**stored, "keys": [{**stored["keys"][0], "secret": "zz" * 32}]},
        {**stored, "keys": [stored["keys"][0], stored["keys"][0]]},
        {**stored, "keys": [{**stored["keys"][0], "created_at": "now"}]},
        "keys",
    ]
    for value in bad:
        with pytest.raises(ValidationError):
            q.provenance.keyring_from_json(value)
        assert q.provenance.check(b).valid  # a refused keyring changed nothing


def test_bundles_come_only_from_the_verification_path(fixture):
    p, ids, b = fixture
    bundle = p.provenance.slice(ids[5])
    args = (bundle.fields, bundle.key_id, bundle.token, bundle.policy, bundle.turns,
            bundle.edges, bundle.sliced_at)
    with pytest.raises(TypeError):
        AdmissibleEvidenceBundle(*args)
    with pytest.raises(TypeError):
        AdmissibleEvidenceBundle(*args, object())
    with pytest.raises((TypeError, ValueError)):
        dataclasses.replace(bundle, token="0" * 64)
    admitted = p.provenance.admit(b)
    assert isinstance(admitted, AdmissibleEvidenceBundle) and admitted.to_dict() == b
    doc = copy.deepcopy(b)
    doc["token"] = "0" * 64
    with pytest.raises(NotAdmissible) as err:
        p.provenance.admit(doc)
    assert err.value.verdict.reason == "bad_signature" and err.value.code == "not_admissible"
    partial = {k: b[k] for k in ("provenance", "token", "key_id")}
    assert p.provenance.check(partial).valid  # fields and token alone verify...
    with pytest.raises(NotAdmissible, match="malformed_bundle"):
        p.provenance.admit(partial)  # ...but evidence needs its body


def test_forged_bundles_are_refused_on_use(fixture):
    """object.__new__ fills the slots without the seal; the bundle is then refused wherever
    it is used, and subclasses, copies and pickles are refused outright."""
    import pickle

    from palazzo.provenance.forms import render
    from palazzo.provenance.prov import prov_document

    p, ids, b = fixture
    real = p.provenance.slice(ids[5])
    assert prov.require_admissible(real) is real
    forged = object.__new__(AdmissibleEvidenceBundle)
    for name in ("fields", "key_id", "token", "policy", "turns", "edges", "sliced_at",
                 "budget"):
        object.__setattr__(forged, name, getattr(real, name))
    assert forged == real  # the same values...
    for use in (forged.to_dict, lambda: prov_document(forged), lambda: render(forged, "text"),
                lambda: prov.require_admissible(forged),
                lambda: prov.require_admissible(real.to_dict())):
        with pytest.raises(TypeError, match="admissible"):  # ...but not admissible
            use()
    with pytest.raises(TypeError):
        class Laxer(AdmissibleEvidenceBundle):  # a subclass could skip the check
            pass
    for duplicate in (copy.copy, copy.deepcopy, pickle.dumps):
        with pytest.raises(TypeError):
            duplicate(real)
    with pytest.raises(AttributeError):
        real.token = "0" * 64  # frozen
    with pytest.raises((AttributeError, TypeError)):
        real.extra = 1  # slots: no new attributes
    # Changing a real bundle (or a record inside it) behind frozen's back is caught on use.
    altered = p.provenance.slice(ids[5])
    object.__setattr__(altered, "token", "0" * 64)
    deep = p.provenance.slice(ids[5])
    object.__setattr__(deep.turns[1], "content", "Something else.")
    for bundle in (altered, deep):
        with pytest.raises(TypeError, match="altered"):
            bundle.to_dict()
        with pytest.raises(TypeError):
            prov_document(bundle)
    assert real.to_dict() == p.provenance.slice(ids[5]).to_dict()


def test_edited_drawers_leave_the_text_out_but_the_slice_stands(fixture):
    p, ids, b = fixture
    turn = p.conversations.turns[ids[4]]
    p.update_drawer(turn.drawer_id, content="Fixed: something else.")
    again = p.provenance.slice(ids[5]).to_dict()
    assert again["provenance"] == b["provenance"] and again["token"] == b["token"]
    texts = {t["id"]: t["content"] for t in again["turns"]}
    assert texts[ids[4]] is None and texts[ids[5]] == "Combine both plans."
    p.delete_drawer(p.conversations.turns[ids[5]].drawer_id)
    assert p.provenance.slice(ids[5]).turns[0].content is None


def test_a_grown_graph_keeps_old_tokens_valid_but_not_current(fixture):
    p, ids, b = fixture
    p.conversations.add_turn("launch", "assistant", "One more thought.", parents=[ids[5]])
    assert p.provenance.check(b).valid
    assert not p.provenance.is_current(ProvenanceFields(**b["provenance"]))
    assert p.provenance.slice(ids[5]).fields.slice_id != b["provenance"]["slice_id"]


# -- the palace file ---------------------------------------------------------------------------

def test_palace_file_keeps_policies_and_never_keys(fixture):
    p, ids, b = fixture
    p.provenance.register_policy(TIGHT)
    doc = export_palace(p, vectors=None, exported_at=0.0)
    section = doc["palace"]["provenance"]
    assert section == {"schema_version": "palazzo.slice.v1", "keys": "not exported",
                       "policies": [TIGHT.to_dict()],
                       "fingerprint": p.provenance.policies.fingerprint()}
    text = json.dumps(doc)
    assert KEY.hex() not in text and "secret" not in text
    q = Palace(clock=lambda: 5.0)
    call(q, "import", {"document": copy.deepcopy(doc)})
    assert export_palace(q, vectors=None, exported_at=0.0) == doc
    assert q.provenance.keyring.keys == {}  # the import kept q's own (empty) keyring
    assert q.provenance.check(b).reason == "unknown_key"
    # Importing into the palace that signed keeps its keys: its tokens still verify.
    call(p, "import", {"document": copy.deepcopy(doc)})
    assert p.provenance.check(b).valid
    assert p.provenance.slice(ids[5], "tight").fields.slice_id == GOLDEN["tight_slice_id"]


def test_import_rejects_bad_provenance_sections(fixture):
    p, _, _ = fixture
    p.provenance.register_policy(TIGHT)
    doc = export_palace(p, vectors=None, exported_at=0.0)

    def reject(edit, match):
        d = copy.deepcopy(doc)
        edit(d["palace"]["provenance"])
        with pytest.raises(ImportRejected, match=match):
            read_palace(d, lambda **kw: Palace(clock=lambda: 0.0, **kw))

    reject(lambda s: s.update(keys={"key_1": "00" * 32}), r"provenance\.keys")
    reject(lambda s: s.update(fingerprint="0" * 64), r"provenance\.fingerprint")
    reject(lambda s: s.update(schema_version="v9"), r"provenance\.schema_version")
    reject(lambda s: s.update(secret="x"), "unknown field")
    reject(lambda s: s["policies"][0].update(max_nodes=0), r"policies\[0\]")
    reject(lambda s: s["policies"][0].update(colour="red"), r"policies\[0\]")
    reject(lambda s: s["policies"].append({**TIGHT.to_dict(), "max_nodes": 9}),
           r"policies\[1\].*other parameters")
    reject(lambda s: s["policies"].append({**SlicePolicyV1().to_dict(), "max_nodes": 9}),
           r"policies\[1\]")
    reject(lambda s: s.update(policies={}), r"provenance\.policies")
    d = copy.deepcopy(doc)
    d["palace"]["provenance"] = []
    with pytest.raises(ImportRejected, match="provenance must be an object"):
        read_palace(d, lambda **kw: Palace(**kw))
    d["palace"].pop("provenance")  # a file from before issue 5
    assert read_palace(d, lambda **kw: Palace(**kw)).provenance.policies.registered() == []
