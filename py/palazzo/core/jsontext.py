"""JSON text in, with a nesting limit checked before the parser runs; and JSON text out in
pieces (:func:`chunks`), for files too big to hold as one string.

Python's JSON parser recurses once per nesting level. In Pyodide the WebAssembly stack is far
smaller than a native one, and a file of ``[[[[…`` overflows it before Python can raise
RecursionError, killing the worker. So depth is measured first: escapes and strings removed
by byte replaces and a pattern that cannot backtrack, every byte but brackets deleted, then a
NumPy running sum over what is left. O(n) time, no recursion.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from palazzo.errors import ImportRejected, ValidationError

MAX_DEPTH = 100
_BYTES_STRING = re.compile(rb'"[^"]*"')  # a JSON string once its escapes are gone
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")
_STEPS = 1 << 20  # brackets summed at a time


def _brackets(data: bytes) -> bytes:
    """Return the brackets of JSON ``data`` outside strings, in order. Escapes go first with
    C-speed replaces (``\\\\`` before ``\\"``, so in ``\\\\"`` the quote still closes its
    string), then strings with a one-class pattern that cannot backtrack."""
    bare = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    return _BYTES_STRING.sub(b"", bare).translate(None, _NOT_BRACKETS)


def depth(text: str | bytes, limit: int | None = None) -> int:
    """Return the deepest bracket nesting of JSON ``text`` (brackets inside strings ignored).

    With ``limit`` it answers only whether the nesting passes ``limit``: a result above it
    means it does, one at or below it means it does not (then it may be an upper bound).

    Cost: O(n), about 1 s for 64 MB whatever it holds (60 MB of backslashes once took 31 s
    with a per-escape pattern); nothing beyond two counts when there are fewer opening
    brackets than ``limit``; memory about two copies of the text, 1 M steps at a time.
    """
    data = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
    if limit is not None and data.count(b"[") + data.count(b"{") <= limit:
        return min(data.count(b"[") + data.count(b"{"), limit)
    import numpy as np  # (here: a small document never needs it, nor its import's 60 ms)

    bare = _brackets(data)
    level = deepest = 0
    for start in range(0, len(bare), _STEPS):
        chunk = np.frombuffer(bare, np.uint8, min(_STEPS, len(bare) - start), start)
        running = level + np.cumsum(np.where((chunk == ord("[")) | (chunk == ord("{")), 1, -1))
        deepest = max(deepest, int(running.max()))
        if limit is not None and deepest > limit:
            return deepest
        level = int(running[-1])
    return deepest


def loads(text: str | bytes, what: str = "JSON", error: type[ValidationError] | Any = None
          ) -> Any:
    """Return the parsed JSON ``text``; too deep or invalid text raises ``error`` (a
    PalazzoError class, ValidationError by default) with a message naming ``what``."""
    error = error or ValidationError
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as err:
            raise error(f"{what} is not UTF-8 text (byte {err.start})") from None
    if depth(text, MAX_DEPTH) > MAX_DEPTH:
        raise error(f"{what} nests deeper than {MAX_DEPTH} levels; refusing to read it")
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise error(
            f"{what} is not valid JSON at line {err.lineno}, column {err.colno}: {err.msg} "
            "(is it truncated?)"
        ) from None
    except (RecursionError, ValueError) as err:
        raise error(f"{what} is not readable JSON: {type(err).__name__}") from None


def records(value: Any, where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Yield ``(place, record)`` for each item of a palace file's list of records, ``place``
    naming it in errors (``where[i]``). Raises ImportRejected when ``value`` is not a list or
    an item is not an object. Why: each section reader validates its records the same way.
    Cost: O(items)."""
    if not isinstance(value, list):
        raise ImportRejected(f"{where} must be a list")
    for i, rec in enumerate(value):
        at = f"{where}[{i}]"
        if not isinstance(rec, dict):
            raise ImportRejected(f"{at} must be an object")
        yield at, rec


CHUNK = 1 << 20  # bytes a piece of :func:`chunks` holds, about


def chunks(value: Any, size: int = CHUNK) -> Iterator[bytes]:
    """Yield ``value`` as UTF-8 JSON text in pieces of about ``size`` bytes: joined, they are
    byte for byte ``json.dumps(value, ensure_ascii=False).encode()``.

    Exists so a big document (a palace file) is written or sent on without one string and
    one bytes object of its whole text at once (in the browser each is tens of MB, copied
    again on its way to the page). Objects and lists are walked at their two top levels and
    wherever they hold many items; smaller parts are dumped whole. Cost: as ``json.dumps``,
    plus O(items walked); holds one piece at a time (and a string bigger than ``size``
    whole).
    """
    buf: list[str] = []
    held = 0
    for piece in _pieces(value, 0):
        buf.append(piece)
        held += len(piece)
        if held >= size:
            yield "".join(buf).encode("utf-8")
            buf, held = [], 0
    if buf:
        yield "".join(buf).encode("utf-8")


_WALK = 256  # a container with more items than this is walked at any depth


def _pieces(value: Any, depth: int) -> Iterator[str]:
    walk = depth < 2 or (isinstance(value, (dict, list)) and len(value) > _WALK)
    if walk and isinstance(value, dict) and value and all(isinstance(k, str) for k in value):
        first = True
        for key, item in value.items():
            yield ("{" if first else ", ") + json.dumps(key, ensure_ascii=False) + ": "
            first = False
            yield from _pieces(item, depth + 1)
        yield "}"
    elif walk and isinstance(value, list) and value:
        for i, item in enumerate(value):
            yield ", " if i else "["
            yield from _pieces(item, depth + 1)
        yield "]"
    else:
        yield json.dumps(value, ensure_ascii=False)
