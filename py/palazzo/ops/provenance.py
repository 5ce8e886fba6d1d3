"""Provenance operations: slice policies, admissible context slices and their tokens, signing
keys and PROV-JSON export.

The engine work is in :mod:`palazzo.provenance`; the turns the slices are cut from come in
through :mod:`palazzo.ops.conversation`.

The key operations (``rotate_key``, ``delete_key``) change the keyring, which is local secret
state and not part of the palace: they are not marked ``mutates``, because replaying them from
a journal would make different random keys. A host stores ``Provenance.keyring_to_json()``
whenever ``keyring.revision`` has changed instead (the first slice also makes a key).
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import ValidationError
from palazzo.memory.conversation import PHASES
from palazzo.ops.conversation import TURN
from palazzo.ops.registry import Operations, Result, obj
from palazzo.palace import Palace
from palazzo.provenance.policy import (
    DEFAULT_POLICY,
    MAX_NODES,
    MAX_RADIUS,
    MAX_SIBLINGS,
    SlicePolicyV1,
)
from palazzo.provenance.prov import prov_document
from palazzo.provenance.records import ProvenanceFields

operation = Operations()

UNIT = {"type": "number", "minimum": 0, "maximum": 1}
POLICY_PROPS = {
    "name": {"type": "string", "minLength": 1, "maxLength": 64},
    "max_nodes": {"type": "integer", "minimum": 1, "maximum": MAX_NODES},
    "max_radius": {"type": "integer", "minimum": 0, "maximum": MAX_RADIUS},
    "phase_weights": {"type": "object", "properties": {p: UNIT for p in PHASES},
                      "additionalProperties": False},
    "salience_weight": UNIT,
    "distance_decay": {"type": "number", "minimum": 0.000001, "maximum": 1},
    "include_siblings": {"type": "boolean"},
    "max_siblings_per_node": {"type": "integer", "minimum": 0, "maximum": MAX_SIBLINGS},
}
POLICY_REF = {"type": "string", "minLength": 1, "maxLength": 64}
BUNDLE = {"type": "object"}
# Deliberately untyped: a malformed token or field set is a verdict, not an argument error.
ANY: dict[str, Any] = {}


def _policy_dict(palace: Palace, policy: SlicePolicyV1) -> Result:
    return {**policy.to_dict(), "params_hash": policy.params_hash,
            "builtin": policy.name == DEFAULT_POLICY}


@operation("register_policy",
           "Register a SlicePolicyV1 under a new name (parameters left out take the "
           "defaults); a name never changes meaning.",
           obj(POLICY_PROPS, ("name",)), mutates=True)
def _register_policy(palace: Palace, args: dict[str, Any]) -> Result:
    policy, created = palace.provenance.register_policy(SlicePolicyV1.from_dict(args))
    return {"policy": _policy_dict(palace, policy), "created": created,
            "fingerprint": palace.provenance.policies.fingerprint()}


@operation("list_policies", "The slice policies with their parameters and params "
           "hashes, and the registry fingerprint.", obj({}))
def _list_policies(palace: Palace, args: dict[str, Any]) -> Result:
    reg = palace.provenance.policies
    return {"policies": [_policy_dict(palace, p) for p in reg],
            "fingerprint": reg.fingerprint()}


@operation("slice_context",
           "The admissible evidence bundle of an anchor turn under a policy (default "
           "'default'): the turns selected by policy-weighted BFS, their edges, the "
           "six provenance fields and an HMAC admissibility token.",
           obj({"anchor": TURN, "policy": POLICY_REF,
                 "with_content": {"type": "boolean"}}, ("anchor",)))
def _slice_context(palace: Palace, args: dict[str, Any]) -> Result:
    bundle = palace.provenance.slice(args["anchor"], args.get("policy", DEFAULT_POLICY),
                                     with_content=args.get("with_content", True))
    return {"bundle": bundle.to_dict()}


@operation("verify_token",
           "Check an admissibility token: a whole bundle, or the six provenance fields "
           "with token and key_id. Returns valid and a reason; recompute also says "
           "whether slicing again now gives the same slice.",
           obj({"bundle": BUNDLE, "fields": ANY, "token": ANY, "key_id": ANY,
                 "recompute": {"type": "boolean"}}))
def _verify_token(palace: Palace, args: dict[str, Any]) -> Result:
    prov = palace.provenance
    loose = [k for k in ("fields", "token", "key_id") if k in args]
    if "bundle" in args:
        if loose:
            raise ValidationError("verify_token takes a 'bundle', or 'fields' + 'token' + "
                                  f"'key_id', not both (got {', '.join(loose)} too)")
        verdict = prov.check(args["bundle"])
        fields = args["bundle"].get("provenance")
    else:
        if len(loose) != 3:
            raise ValidationError("verify_token needs a 'bundle', or all of 'fields', "
                                  "'token' and 'key_id'")
        verdict = prov.verify(args["fields"], args["token"], args["key_id"])
        fields = args["fields"]
    out = verdict.to_dict()
    if args.get("recompute", False):
        out["current"] = verdict.valid and prov.is_current(ProvenanceFields.parse(fields))
    return out


@operation("rotate_key", "Make a new signing key; older keys keep verifying the tokens "
           "they signed.", obj({}))
def _rotate_key(palace: Palace, args: dict[str, Any]) -> Result:
    ring = palace.provenance.keyring
    before = ring.current
    key = palace.provenance.rotate_key()
    return {"key_id": key.key_id, "retired": before, "keys": ring.describe()}


@operation("delete_key", "Delete a retired signing key: its tokens stop verifying.",
           obj({"key_id": {"type": "string", "minLength": 1, "maxLength": 100}},
                ("key_id",)))
def _delete_key(palace: Palace, args: dict[str, Any]) -> Result:
    key = palace.provenance.delete_key(args["key_id"])
    return {"deleted": key.key_id, "keys": palace.provenance.keyring.describe()}


@operation("list_keys", "The signing keys' ids and dates (never the secrets).",
           obj({}))
def _list_keys(palace: Palace, args: dict[str, Any]) -> Result:
    ring = palace.provenance.keyring
    return {"current": ring.current, "keys": ring.describe()}


@operation("export_prov",
           "An admissible bundle (or a fresh slice of an anchor) as a W3C PROV-JSON "
           "document: turns and the slice as entities, the slicing as an activity, "
           "palazzo as the agent.",
           obj({"bundle": BUNDLE, "anchor": TURN, "policy": POLICY_REF}))
def _export_prov(palace: Palace, args: dict[str, Any]) -> Result:
    prov = palace.provenance
    if ("bundle" in args) == ("anchor" in args):
        raise ValidationError("export_prov needs exactly one of 'bundle' (from slice_context) "
                              "or 'anchor' (with an optional 'policy')")
    if "bundle" in args:
        if "policy" in args:
            raise ValidationError("'policy' goes with 'anchor'; a bundle names its own policy")
        bundle = prov.admit(args["bundle"])
    else:
        bundle = prov.slice(args["anchor"], args.get("policy", DEFAULT_POLICY))
    return {"format": "PROV-JSON", "document": prov_document(bundle)}
