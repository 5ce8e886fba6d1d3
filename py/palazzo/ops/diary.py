"""Diary operations: an agent writes verbatim entries (optionally with their AAAK shorthand)
and reads them back by date.

The engine work is in :mod:`palazzo.memory.diary`.
"""

from __future__ import annotations

from typing import Any

from palazzo.errors import ValidationError
from palazzo.ops.registry import NAME, TEXT, Operations, Result, obj
from palazzo.palace import Palace

operation = Operations()

DAY = {"type": "string", "minLength": 10, "maxLength": 40}


@operation("diary_write", "Write a verbatim entry to an agent's diary (a drawer in its "
           "wing, so it is searchable); aaak adds the compact AAAK form beside it.",
           obj({"agent": NAME, "text": TEXT, "topic": NAME,
                 "importance": {"type": "number", "minimum": 0, "maximum": 1},
                 "aaak": {"type": "boolean"}, "codes": {"type": "object"}},
                ("agent", "text")), mutates=True)
def _diary_write(palace: Palace, args: dict[str, Any]) -> Result:
    codes = args.get("codes") or {}
    if not all(isinstance(v, str) and v.strip() for v in codes.values()):
        raise ValidationError("codes must map entity names to non-empty codes")
    return palace.diaries.write(args["agent"], args["text"], args.get("topic", "general"),
                                args.get("importance", 0.5), args.get("aaak", False), codes)


@operation("diary_read", "An agent's diary entries, latest first (limit, since/until "
           "ISO dates).",
           obj({"agent": NAME, "limit": {"type": "integer", "minimum": 1,
                                          "maximum": 1000},
                 "since": DAY, "until": DAY}, ("agent",)))
def _diary_read(palace: Palace, args: dict[str, Any]) -> Result:
    entries = palace.diaries.read(args["agent"], args.get("limit", 10), args.get("since"),
                                  args.get("until"))
    return {"agent": args["agent"], "entries": entries}

