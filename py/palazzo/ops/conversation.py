"""Conversation operations: turns in (one at a time or a whole conversation), conversations
and their turns out.

The engine work is in :mod:`palazzo.memory.conversation` (the conversation DAG).
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import ValidationError
from palazzo.memory.conversation import (
    DEFAULT_PHASE,
    DEFAULT_SALIENCE,
    PHASES,
    ROLES,
    TURN_KINDS,
)
from palazzo.ops.registry import LIMIT, NAME, Operations, Result, obj
from palazzo.palace import Palace

operation = Operations()

TURN = {"type": "string", "minLength": 1, "maxLength": 100}
ROLE = {"enum": list(ROLES)}
PHASE = {"enum": list(PHASES)}
SALIENCE = {"type": "number", "minimum": 0, "maximum": 1}
TIMESTAMP = {"type": ["number", "string"]}
CONTENT = {"type": ["string", "array"]}
MESSAGE = {
    "type": "object",
    "properties": {"role": ROLE, "content": CONTENT, "phase": PHASE, "salience": SALIENCE,
                   "timestamp": TIMESTAMP, "kind": {"enum": list(TURN_KINDS)},
                   "parents": {"type": "array", "items": {"type": ["integer", "string"]}}},
    "required": ["role", "content"],
}

def _edges_into(palace: Palace, tid: str) -> list[dict[str, str]]:
    conv = palace.conversations
    return [{"parent": p, "child": tid, "type": conv.edge_type(p, tid)}
            for p in conv.turns[tid].parents]


@operation("add_turn",
           "Add one conversation turn after its parent turns (none: a new root); its "
           "text becomes a drawer in wing 'conversations'. The same turn is stored "
           "once.",
           obj({"conversation": NAME, "role": ROLE, "content": CONTENT,
                 "parents": {"type": "array", "items": TURN}, "phase": PHASE,
                 "salience": SALIENCE, "timestamp": TIMESTAMP},
                ("conversation", "role", "content")), mutates=True)
def _add_turn(palace: Palace, args: dict[str, Any]) -> Result:
    turn, created = palace.conversations.add_turn(
        args["conversation"], args["role"], args["content"], parents=args.get("parents", []),
        phase=args.get("phase", DEFAULT_PHASE), salience=args.get("salience", DEFAULT_SALIENCE),
        created_at=args.get("timestamp"))
    return {"turn": turn.to_dict(), "created": created, "edges": _edges_into(palace, turn.id)}


@operation("import_conversation",
           "Add a whole conversation from a list of {role, content} messages "
           "(optional phase, salience, timestamp, kind, parents), or its JSON text; checked "
           "completely first, and importing it again adds nothing.",
           obj({"conversation": NAME,
                 "messages": {"type": "array", "items": MESSAGE},
                 "text": {"type": "string", "minLength": 1}, "after": TURN,
                 "phase": PHASE, "salience": SALIENCE}, ("conversation",)), mutates=True)
def _import_conversation(palace: Palace, args: dict[str, Any]) -> Result:
    if ("messages" in args) == ("text" in args):
        raise ValidationError("import_conversation needs exactly one of 'messages' (a list) "
                              "or 'text' (its JSON text)")
    conv = palace.conversations
    done = conv.import_messages(args["conversation"], args.get("messages", args.get("text")),
                                after=args.get("after"), phase=args.get("phase"),
                                salience=args.get("salience"))
    return {**done.to_dict(), "summary": conv.summary(done.conversation)}


@operation("list_conversations", "Every conversation with its turn, root, leaf and "
           "merge counts and deepest depth.", obj({}))
def _list_conversations(palace: Palace, args: dict[str, Any]) -> Result:
    conv = palace.conversations
    return {"conversations": [conv.summary(n) for n in conv.names()]}


@operation("list_turns", "The turns of a conversation in the order added, with their "
           "children, text and the reply/branch/merge edges among them.",
           obj({"conversation": NAME, "limit": LIMIT,
                 "offset": {"type": "integer", "minimum": 0},
                 "with_content": {"type": "boolean"}}, ("conversation",)))
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
