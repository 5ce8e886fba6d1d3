"""Operations of conversations and provenance: turns in, admissible context slices out.

:func:`register` adds them to a :class:`palazzo.ops.Registry`; the engine work is in
:mod:`palazzo.conversation` (the DAG) and :mod:`palazzo.provenance` (policies, slices, tokens).

The key operations (``rotate_key``, ``delete_key``) change the keyring, which is local secret
state and not part of the palace: they are not marked ``mutates``, because replaying them from
a journal would make different random keys. A host stores ``Provenance.keyring_to_json()``
whenever ``keyring.revision`` has changed instead (the first slice also makes a key).
"""

from __future__ import annotations

from typing import Any

from palazzo.conversation import DEFAULT_PHASE, DEFAULT_SALIENCE, PHASES, ROLES
from palazzo.errors import ValidationError
from palazzo.ops import LIMIT, NAME, Operation, Registry, Result, _obj
from palazzo.palace import Palace
from palazzo.provenance import (
    DEFAULT_POLICY,
    MAX_NODES,
    MAX_RADIUS,
    MAX_SIBLINGS,
    ProvenanceFields,
    SlicePolicyV1,
    prov_document,
)

TURN = {"type": "string", "minLength": 1, "maxLength": 100}
ROLE = {"enum": list(ROLES)}
PHASE = {"enum": list(PHASES)}
SALIENCE = {"type": "number", "minimum": 0, "maximum": 1}
TIMESTAMP = {"type": ["number", "string"]}
CONTENT = {"type": ["string", "array"]}
MESSAGE = {
    "type": "object",
    "properties": {"role": ROLE, "content": CONTENT, "phase": PHASE, "salience": SALIENCE,
                   "timestamp": TIMESTAMP,
                   "parents": {"type": "array", "items": {"type": ["integer", "string"]}}},
    "required": ["role", "content"],
}
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


def _edges_into(palace: Palace, tid: str) -> list[dict[str, str]]:
    conv = palace.conversations
    return [{"parent": p, "child": tid, "type": conv.edge_type(p, tid)}
            for p in conv.turns[tid].parents]


def _add_turn(palace: Palace, args: dict[str, Any]) -> Result:
    turn, created = palace.conversations.add_turn(
        args["conversation"], args["role"], args["content"], parents=args.get("parents", []),
        phase=args.get("phase", DEFAULT_PHASE), salience=args.get("salience", DEFAULT_SALIENCE),
        created_at=args.get("timestamp"))
    return {"turn": turn.to_dict(), "created": created, "edges": _edges_into(palace, turn.id)}


def _import_conversation(palace: Palace, args: dict[str, Any]) -> Result:
    if ("messages" in args) == ("text" in args):
        raise ValidationError("import_conversation needs exactly one of 'messages' (a list) "
                              "or 'text' (its JSON text)")
    conv = palace.conversations
    done = conv.import_messages(args["conversation"], args.get("messages", args.get("text")),
                                after=args.get("after"), phase=args.get("phase"),
                                salience=args.get("salience"))
    return {**done.to_dict(), "summary": conv.summary(done.conversation)}


def _list_conversations(palace: Palace, args: dict[str, Any]) -> Result:
    conv = palace.conversations
    return {"conversations": [conv.summary(n) for n in conv.names()]}


def _list_turns(palace: Palace, args: dict[str, Any]) -> Result:
    conv = palace.conversations
    turns = conv.of(args["conversation"])
    offset = args.get("offset", 0)
    page = turns[offset: offset + args.get("limit", 100)]
    ids = [t.id for t in page]
    s = palace.drawers
    out = []
    for t in page:
        d = {**t.to_dict(), "children": conv.children_of(t.id)}
        if args.get("with_content", True):
            row = s.lookup(t.drawer_id)
            d["content"] = None if row is None else s.content[row]
        out.append(d)
    return {"conversation": args["conversation"], "total": len(turns), "offset": offset,
            "turns": out, "edges": [{"parent": p, "child": c, "type": k}
                                    for p, c, k in conv.edges_among(ids)]}


def _policy_dict(palace: Palace, policy: SlicePolicyV1) -> Result:
    return {**policy.to_dict(), "params_hash": policy.params_hash,
            "builtin": policy.name == DEFAULT_POLICY}


def _register_policy(palace: Palace, args: dict[str, Any]) -> Result:
    policy, created = palace.provenance.register_policy(SlicePolicyV1.from_dict(args))
    return {"policy": _policy_dict(palace, policy), "created": created,
            "fingerprint": palace.provenance.policies.fingerprint()}


def _list_policies(palace: Palace, args: dict[str, Any]) -> Result:
    reg = palace.provenance.policies
    return {"policies": [_policy_dict(palace, p) for p in reg],
            "fingerprint": reg.fingerprint()}


def _slice_context(palace: Palace, args: dict[str, Any]) -> Result:
    bundle = palace.provenance.slice(args["anchor"], args.get("policy", DEFAULT_POLICY),
                                     with_content=args.get("with_content", True))
    return {"bundle": bundle.to_dict()}


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


def _rotate_key(palace: Palace, args: dict[str, Any]) -> Result:
    ring = palace.provenance.keyring
    before = ring.current
    key = palace.provenance.rotate_key()
    return {"key_id": key.key_id, "retired": before, "keys": ring.describe()}


def _delete_key(palace: Palace, args: dict[str, Any]) -> Result:
    key = palace.provenance.delete_key(args["key_id"])
    return {"deleted": key.key_id, "keys": palace.provenance.keyring.describe()}


def _list_keys(palace: Palace, args: dict[str, Any]) -> Result:
    ring = palace.provenance.keyring
    return {"current": ring.current, "keys": ring.describe()}


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


def register(reg: Registry) -> None:
    """Add the conversation and provenance operations to ``reg``. Returns None; a second
    call raises."""
    add = reg.add
    add(Operation("add_turn",
                  "Add one conversation turn after its parent turns (none: a new root); its "
                  "text becomes a drawer in wing 'conversations'. The same turn is stored "
                  "once.",
                  _obj({"conversation": NAME, "role": ROLE, "content": CONTENT,
                        "parents": {"type": "array", "items": TURN}, "phase": PHASE,
                        "salience": SALIENCE, "timestamp": TIMESTAMP},
                       ("conversation", "role", "content")), _add_turn, mutates=True))
    add(Operation("import_conversation",
                  "Add a whole conversation from a list of {role, content} messages "
                  "(optional phase, salience, timestamp, parents), or its JSON text; checked "
                  "completely first, and importing it again adds nothing.",
                  _obj({"conversation": NAME,
                        "messages": {"type": "array", "items": MESSAGE},
                        "text": {"type": "string", "minLength": 1}, "after": TURN,
                        "phase": PHASE, "salience": SALIENCE}, ("conversation",)),
                  _import_conversation, mutates=True))
    add(Operation("list_conversations", "Every conversation with its turn, root, leaf and "
                  "merge counts and deepest depth.", _obj({}), _list_conversations))
    add(Operation("list_turns", "The turns of a conversation in the order added, with their "
                  "children, text and the reply/branch/merge edges among them.",
                  _obj({"conversation": NAME, "limit": LIMIT,
                        "offset": {"type": "integer", "minimum": 0},
                        "with_content": {"type": "boolean"}}, ("conversation",)),
                  _list_turns))
    add(Operation("register_policy",
                  "Register a SlicePolicyV1 under a new name (parameters left out take the "
                  "defaults); a name never changes meaning.",
                  _obj(POLICY_PROPS, ("name",)), _register_policy, mutates=True))
    add(Operation("list_policies", "The slice policies with their parameters and params "
                  "hashes, and the registry fingerprint.", _obj({}), _list_policies))
    add(Operation("slice_context",
                  "The admissible evidence bundle of an anchor turn under a policy (default "
                  "'default'): the turns selected by policy-weighted BFS, their edges, the "
                  "six provenance fields and an HMAC admissibility token.",
                  _obj({"anchor": TURN, "policy": POLICY_REF,
                        "with_content": {"type": "boolean"}}, ("anchor",)), _slice_context))
    add(Operation("verify_token",
                  "Check an admissibility token: a whole bundle, or the six provenance fields "
                  "with token and key_id. Returns valid and a reason; recompute also says "
                  "whether slicing again now gives the same slice.",
                  _obj({"bundle": BUNDLE, "fields": ANY, "token": ANY, "key_id": ANY,
                        "recompute": {"type": "boolean"}}), _verify_token))
    add(Operation("rotate_key", "Make a new signing key; older keys keep verifying the tokens "
                  "they signed.", _obj({}), _rotate_key))
    add(Operation("delete_key", "Delete a retired signing key: its tokens stop verifying.",
                  _obj({"key_id": {"type": "string", "minLength": 1, "maxLength": 100}},
                       ("key_id",)), _delete_key))
    add(Operation("list_keys", "The signing keys' ids and dates (never the secrets).",
                  _obj({}), _list_keys))
    add(Operation("export_prov",
                  "An admissible bundle (or a fresh slice of an anchor) as a W3C PROV-JSON "
                  "document: turns and the slice as entities, the slicing as an activity, "
                  "palazzo as the agent.",
                  _obj({"bundle": BUNDLE, "anchor": TURN, "policy": POLICY_REF}),
                  _export_prov))
