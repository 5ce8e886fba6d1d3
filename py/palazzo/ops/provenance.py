"""Provenance operations: slice policies, admissible context slices (budgeted, in the forms a
model reads) and their tokens, the atlas of many slices, signing keys and PROV-JSON export.

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
from palazzo.memory.wakeup import tokens
from palazzo.ops.conversation import TURN
from palazzo.ops.registry import NAME, Operations, Result, obj
from palazzo.palace import Palace
from palazzo.provenance.atlas import MAX_ANCHORS, SAMPLES, build_atlas
from palazzo.provenance.forms import FORMS, render
from palazzo.provenance.kernel import turn_tokens
from palazzo.provenance.policy import (
    DEFAULT_POLICY,
    MAX_NODES,
    MAX_RADIUS,
    MAX_SIBLINGS,
    SlicePolicyV1,
)
from palazzo.provenance.prov import prov_document
from palazzo.provenance.records import MAX_BUDGET, ProvenanceFields

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
BUDGET = {"type": "integer", "minimum": 1, "maximum": MAX_BUDGET,
          "description": "tokens: ceil(characters / 4) + 4 a turn"}
FORM = {"enum": list(FORMS)}
DEFAULT_ATLAS_ANCHORS = 200
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
           "six provenance fields and an HMAC admissibility token. 'budget' keeps the "
           "best turns that fit in that many tokens (signed with the slice); 'form' adds "
           "the context as 'messages', 'text' or 'triples'.",
           obj({"anchor": TURN, "policy": POLICY_REF, "with_content": {"type": "boolean"},
                "budget": BUDGET, "form": FORM}, ("anchor",)))
def _slice_context(palace: Palace, args: dict[str, Any]) -> Result:
    form = args.get("form")
    if form in ("messages", "text") and args.get("with_content") is False:
        raise ValidationError(f"form {form!r} shows the turns' text: leave with_content out "
                              "(or true)", field="with_content")
    bundle = palace.provenance.slice(args["anchor"], args.get("policy", DEFAULT_POLICY),
                                     with_content=args.get("with_content", True),
                                     budget=args.get("budget"))
    out: Result = {"bundle": bundle.to_dict()}
    if form is not None:
        context = render(bundle, form, palace.kg.triples.values())
        out["form"] = form
        out["context"] = context
        out["tokens"] = (tokens(context) if form == "text" else
                         sum(turn_tokens(m["content"]) for m in context)
                         if form == "messages" else None)
    return out


@operation("verify_token",
           "Check an admissibility token: a whole bundle, or the six provenance fields "
           "with token and key_id. Returns valid and a reason; recompute also says "
           "whether slicing again now gives the same slice.",
           obj({"bundle": BUNDLE, "fields": ANY, "token": ANY, "key_id": ANY,
                 "recompute": {"type": "boolean"}, "budget": BUDGET}))
def _verify_token(palace: Palace, args: dict[str, Any]) -> Result:
    prov = palace.provenance
    loose = [k for k in ("fields", "token", "key_id") if k in args]
    if "bundle" in args:
        if loose:
            raise ValidationError("verify_token takes a 'bundle', or 'fields' + 'token' + "
                                  f"'key_id', not both (got {', '.join(loose)} too)")
        if "budget" in args:
            raise ValidationError("a bundle names its own budget; 'budget' goes with 'fields'")
        verdict = prov.check(args["bundle"])
        fields = args["bundle"].get("provenance")
        budget = args["bundle"].get("budget")
        budget = budget.get("max_tokens") if isinstance(budget, dict) else None
    else:
        if len(loose) != 3:
            raise ValidationError("verify_token needs a 'bundle', or all of 'fields', "
                                  "'token' and 'key_id'")
        verdict = prov.verify(args["fields"], args["token"], args["key_id"])
        fields = args["fields"]
        budget = args.get("budget")
    out = verdict.to_dict()
    if args.get("recompute", False):
        out["current"] = verdict.valid and prov.is_current(ProvenanceFields.parse(fields),
                                                           budget)
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
           obj({"bundle": BUNDLE, "anchor": TURN, "policy": POLICY_REF, "budget": BUDGET}))
def _export_prov(palace: Palace, args: dict[str, Any]) -> Result:
    prov = palace.provenance
    if ("bundle" in args) == ("anchor" in args):
        raise ValidationError("export_prov needs exactly one of 'bundle' (from slice_context) "
                              "or 'anchor' (with an optional 'policy')")
    if "bundle" in args:
        if "policy" in args or "budget" in args:
            raise ValidationError("'policy' and 'budget' go with 'anchor'; a bundle names its "
                                  "own")
        bundle = prov.admit(args["bundle"])
    else:
        bundle = prov.slice(args["anchor"], args.get("policy", DEFAULT_POLICY),
                            budget=args.get("budget"))
    return {"format": "PROV-JSON", "document": prov_document(bundle)}


def _atlas_anchors(palace: Palace, args: dict[str, Any]) -> tuple[list[str], int]:
    """Return (the anchors the atlas arguments name, how many turns they were chosen from)."""
    conv = palace.conversations
    if "anchors" in args:
        if "conversation" in args or "limit" in args:
            raise ValidationError("atlas takes 'anchors', or 'conversation' and/or 'limit' "
                                  "to choose them, not both")
        anchors = args["anchors"]
        if not 1 <= len(anchors) <= MAX_ANCHORS:
            raise ValidationError(f"anchors must list 1 to {MAX_ANCHORS} turn ids",
                                  field="anchors")
        return list(anchors), len(anchors)
    pool = ([t.id for t in conv.of(args["conversation"])] if "conversation" in args
            else list(conv.turns))
    if not pool:
        raise ValidationError("the palace has no conversation turns to slice: import a "
                              "conversation first")
    limit = args.get("limit", DEFAULT_ATLAS_ANCHORS)
    if len(pool) <= limit:
        return pool, len(pool)
    # Evenly spaced over the turns in the order they were added: deterministic, and every
    # part of a long history is represented.
    return [pool[i * len(pool) // limit] for i in range(limit)], len(pool)


@operation("atlas",
           "Slice many anchor turns at once and analyse the slices: their overlap (Jaccard "
           "matrix) and each turn's influence (frequency across slices, betweenness "
           "centrality, bridge score). Anchors: a list, or every turn of a conversation "
           "(or of the palace), evenly sampled down to 'limit' (default 200). Returns a "
           "summary, or with output 'bundle' the whole deterministic atlas bundle.",
           obj({"anchors": {"type": "array", "items": TURN}, "conversation": NAME,
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_ANCHORS},
                "policy": POLICY_REF, "budget": BUDGET,
                "output": {"enum": ["summary", "bundle"]},
                "top": {"type": "integer", "minimum": 1, "maximum": 1000},
                "samples": {"type": "integer", "minimum": 1, "maximum": 10_000}}),
           packages=("scipy",), heavy=True)
def _atlas(palace: Palace, args: dict[str, Any]) -> Result:
    anchors, pool = _atlas_anchors(palace, args)
    atlas = build_atlas(palace.provenance, anchors, args.get("policy", DEFAULT_POLICY),
                        budget=args.get("budget"), samples=args.get("samples", SAMPLES))
    if args.get("output", "summary") == "bundle":
        return {"atlas": atlas.to_dict(), "chosen_from": pool}
    return {**atlas.summary(args.get("top", 10)), "chosen_from": pool}
