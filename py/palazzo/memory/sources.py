"""Where a drawer came from, as a person reads it.

Every search hit, listed drawer and opened drawer carries a ``source`` object (the
``search``, ``enrich``, ``get_drawer`` and ``list_drawers`` operations):

- a **file** (a drawer with a ``source_file``: ``palazzo index``, a dropped folder, a
  MemPalace or GraphPalace import): ``{"kind": "file", "path", "name", "part", "via",
  "created_at"}`` — the path as the importer recorded it (relative to the indexed folder),
  its last part, and for a large file cut into pieces the piece's number (``part``, from 1;
  None for a whole file; an indexed file's chunk k is stored as ``path#chunk-k``), ``via``
  the drawer's ``source`` ("index", "mempalace", …);
- a **conversation turn** (a drawer of the ``conversations`` wing with source
  ``"conversation"``): ``{"kind": "conversation", "conversation", "title", "role",
  "turn_id", "turn", "turns", "created_at", "text_kind"}`` — the conversation's name (its
  room), its title (the room's description, which chat importers fill with the chat's
  title; else the name), who spoke, the turn's id and place (``turn`` counts from 1 in the
  order added, of ``turns``), when it was said and what its text is ("text", "voice",
  "code", …);
- anything else: ``{"kind": "diary" | "added", "via", "created_at"}`` (``via`` the drawer's
  ``source`` when it has one, e.g. "demo").

Cost: O(1) a drawer once :meth:`Conversations.turn_of_drawer` has made its map of the turns
(O(turns), once until a turn is added); nothing here reads a drawer that was not asked about,
and a palace whose conversations were never read (a snapshot keeps them unparsed) reads them
only when a conversation drawer is asked about.
"""

from __future__ import annotations

from typing import Any

from palazzo.memory.conversation import WING

CHUNK_MARK = "#chunk-"  # an indexed file's chunk k: source_file "path#chunk-k"
CONVERSATION = "conversation"  # the drawer source of a conversation turn
DIARY = "diary"


def split_source_file(source_file: str) -> tuple[str, int]:
    """Return (file path, chunk position) of a drawer's ``source_file``; position 0 means
    the drawer is the whole file."""
    base, mark, k = source_file.rpartition(CHUNK_MARK)
    if mark and k.isdigit() and base:
        return base, int(k)
    return source_file, 0


def source_of(palace: Any, row: int) -> dict[str, Any]:
    """Return where the live drawer at ``row`` came from (the shapes of the module
    docstring). Cost: O(1), plus one O(turns) pass the first time a conversation drawer is
    asked about after a turn was added."""
    s = palace.drawers
    created = float(s.columns["created_at"][row])
    via = s.source[row] or ""
    if via == CONVERSATION and s.wing[row] == WING:
        found = _turn(palace, s.ids[row])
        name = s.room[row] if found is None else found[0].conversation
        room = palace.rooms.get((WING, name))
        out = {"kind": "conversation", "conversation": name,
               "title": (room.description if room is not None else "") or name,
               "role": None, "turn_id": None, "turn": None,
               "turns": len(palace.conversations.by_conversation.get(name, ())),
               "created_at": created, "text_kind": None}
        if found is not None:  # else a turn-less drawer (never made by palazzo itself)
            turn, place = found
            out.update(role=turn.role, turn_id=turn.id, turn=place + 1,
                       created_at=turn.created_at, text_kind=turn.kind)
        return out
    path = s.source_file[row] or ""
    if path:
        base, part = split_source_file(path)
        return {"kind": "file", "path": base, "name": base.replace("\\", "/").rsplit("/", 1)[-1],
                "part": part or None, "via": via, "created_at": created}
    return {"kind": DIARY if via == DIARY else "added", "via": via, "created_at": created}


def _turn(palace: Any, drawer_id: str) -> Any:
    """Return (turn, place) of the turn whose text is drawer ``drawer_id``, trying the ids
    the drawer had before an edit (its aliases) when its own id names none; None when no
    turn has it. Cost: O(1), or O(aliases) for a drawer no turn names by its id."""
    conv = palace.conversations
    found = conv.turn_of_drawer(drawer_id)
    if found is None:
        for old, now in palace.drawers.aliases.items():
            if now == drawer_id and (found := conv.turn_of_drawer(old)) is not None:
                break
    return found
