"""Counts in sentences: "1 drawer matches", "32 drawers in 1 wing".

Every host sentence that counts something goes through :func:`plural` (the noun) and
:func:`verb` (a verb whose subject is the count), so no sentence says "1 drawers" or
"1 drawer match". Plain text: the caller escapes it for HTML.
"""

from __future__ import annotations


def plural(n: int, one: str, many: str | None = None) -> str:
    """Return ``n`` with thousands separators and the noun in the right number:
    ``plural(1, "drawer")`` is "1 drawer", ``plural(2, "entry", "entries")`` "2 entries"."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def verb(n: int, one: str, many: str) -> str:
    """Return the form of a verb whose subject is a count of ``n``: ``verb(1, "matches",
    "match")`` is "matches", and "match" for any other count (0 included)."""
    return one if n == 1 else many
