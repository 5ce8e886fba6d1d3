"""Conversation operations: turns in (one at a time or a whole conversation), conversations
and their turns out, and the turns around one turn (what a person reads around a hit).

The engine work is in :mod:`palazzo.memory.conversation` (the conversation DAG).
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import NotFound, ValidationError
from palazzo.memory.conversation import (
    DEFAULT_PHASE,
    DEFAULT_SALIENCE,
    PHASES,
    ROLES,
    TURN_KINDS,
    WING,
)
from palazzo.memory.sources import source_of
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


AROUND = {"type": "integer", "minimum": 0, "maximum": 200}
AROUND_TEXT = 20_000  # characters of a turn's text returned: a long answer is cut, and says so


@operation("conversation_around",
           "The turns around a conversation turn, in the order they were said: the turn "
           "whose text is drawer drawer_id (or the turn turn_id), up to before turns it "
           "follows and up to after turns that follow it (at a branch, the newest version), "
           "each with its role, time, text and drawer id; here marks the asked-for turn.",
           obj({"drawer_id": NAME, "turn_id": TURN, "before": AROUND, "after": AROUND}))
def _conversation_around(palace: Palace, args: dict[str, Any]) -> Result:
    if ("drawer_id" in args) == ("turn_id" in args):
        raise ValidationError("conversation_around needs exactly one of 'drawer_id' (a "
                              "drawer holding a turn's text) or 'turn_id'")
    conv = palace.conversations
    s = palace.drawers
    if "turn_id" in args:
        anchor = conv.get(args["turn_id"])
    else:
        row = palace.row(args["drawer_id"])  # NotFound for a drawer that is not there
        found = source_of(palace, row)
        if found["kind"] != "conversation" or found["turn_id"] is None:
            came = {"file": f"the file {found.get('path')}", "diary": "a diary"}.get(
                found["kind"], "no conversation")
            raise NotFound(f"drawer {args['drawer_id']} is not a conversation turn: it came "
                           f"from {came}")
        anchor = conv.get(found["turn_id"])
    turns, earlier, later = conv.thread(anchor.id, args.get("before", 5), args.get("after", 5))
    room = palace.rooms.get((WING, anchor.conversation))
    out = []
    for t in turns:
        row = s.lookup(t.drawer_id)
        text = None if row is None else s.content[row]
        out.append({"turn_id": t.id, "drawer_id": None if row is None else s.ids[row],
                    "role": t.role, "created_at": t.created_at, "kind": t.kind,
                    "turn": conv.place_of(t.id) + 1,
                    "text": None if text is None else text[:AROUND_TEXT],
                    "cut": text is not None and len(text) > AROUND_TEXT,
                    "versions": 1 + len(conv.siblings_of(t.id)),
                    "here": t.id == anchor.id})
    return {"conversation": anchor.conversation,
            "title": (room.description if room is not None else "") or anchor.conversation,
            "turn_id": anchor.id, "total": len(conv.by_conversation[anchor.conversation]),
            "earlier": earlier, "later": later, "turns": out}
