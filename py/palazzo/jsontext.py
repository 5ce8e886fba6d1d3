"""JSON text in, with a nesting limit checked before the parser runs.

Python's JSON parser recurses once per nesting level. In Pyodide the WebAssembly stack is far
smaller than a native one, and a file of ``[[[[…`` overflows it before Python can raise
RecursionError, killing the worker. So depth is measured first: strings blanked by a regex,
every byte but brackets deleted, then a NumPy running sum over what is left. O(n) time, no
recursion, and memory proportional to the brackets (a palace file is mostly long strings).
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from palazzo.errors import ValidationError

MAX_DEPTH = 100
# A JSON string, written as an unrolled loop so long strings match without backtracking.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def depth(text: str) -> int:
    """Return the deepest bracket nesting of JSON ``text`` (brackets inside strings ignored)."""
    bare = _STRING.sub("", text).encode("utf-8", "ignore").translate(None, _NOT_BRACKETS)
    b = np.frombuffer(bare, dtype=np.uint8)
    step = np.where((b == ord("[")) | (b == ord("{")), 1, -1).astype(np.int32)
    return int(np.cumsum(step).max()) if len(step) else 0


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
    if depth(text) > MAX_DEPTH:
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
