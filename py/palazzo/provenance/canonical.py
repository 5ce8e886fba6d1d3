"""Canonical bytes and their hash: what every provenance fingerprint is computed over.

Everything hashed is first written as canonical JSON: keys sorted, no whitespace, ASCII only
(``\\uXXXX`` escapes), and no float anywhere: floats are quantised to ``round(x·10^6)``
integers (:func:`palazzo.memory.conversation.quantise`) before they get here, so the same
policy and slice hash alike in CPython, Pyodide or another language.

**Hashes** are sha256 (hashlib) everywhere. The seed uses xxHash64, which neither CPython's nor
Pyodide's standard library has; sha256 is in both and, unlike xxHash, is collision resistant,
which a fingerprint a token vouches for should be. This module is the bottom of the provenance
package: it imports nothing of palazzo.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _check_canonical(value: Any, path: str) -> None:
    """Return None if ``value`` is JSON without floats; else raise TypeError naming ``path``.
    Cost: O(size of value)."""
    if isinstance(value, float):
        raise TypeError(f"{path} is a float; quantise it before hashing")
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{path} has a key that is not a string")
            _check_canonical(v, f"{path}.{k}")
    elif isinstance(value, list | tuple):
        if all(type(v) is str for v in value):
            return  # the common case (sorted ids, hashes): nothing to look into
        for i, v in enumerate(value):
            _check_canonical(v, f"{path}[{i}]")
    elif not (value is None or isinstance(value, str | int)):
        raise TypeError(f"{path} is a {type(value).__name__}, not JSON")


def canonical_bytes(value: Any) -> bytes:
    """Return the canonical JSON bytes of ``value``: sorted keys, no whitespace, ASCII.

    Floats are refused (TypeError): they must be quantised first, so that no platform's float
    printing can change a hash. Cost: O(size of value).
    """
    _check_canonical(value, "value")
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                      allow_nan=False).encode("ascii")


def sha256_hex(data: bytes) -> str:
    """Return the sha256 hex digest of ``data``. Cost: O(len(data))."""
    return hashlib.sha256(data).hexdigest()
