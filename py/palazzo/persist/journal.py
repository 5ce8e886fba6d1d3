"""The journal's record format: length-prefixed, checksummed JSON records, appended in order.

One record on disk::

    b"PZ" | u32 little-endian payload length | u32 little-endian CRC-32 of the payload | payload

The payload is UTF-8 JSON of ``{"seq", "op", "args", "clock"}`` and, when the operation
computed something replay must not compute again, ``"effects"``: the operation's name, its
validated arguments, the clock value it ran with, and what it did that depends on more than
those (the embedder it ran with and every vector it made: :mod:`palazzo.embed.recorded`).
:func:`scan` reads records from the start and stops at the first one that is torn (shorter
than its header says), has a bad magic, a bad checksum or a payload that is not such an
object; everything from there on is the *tail* that boot drops. A CRC-32 (``zlib``, in every
Python including Pyodide) catches torn and corrupted writes; it is not a defence against
someone forging a journal, which the palace's owner controls anyway.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from typing import Any

MAGIC = b"PZ"
HEADER = struct.Struct("<2sII")
MAX_RECORD = 1 << 30  # a gigabyte: anything claiming more is corruption, not a record


@dataclass(slots=True)
class Record:
    """One journaled operation."""

    seq: int
    op: str
    args: dict[str, Any]
    clock: float
    effects: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able payload (``effects`` only when there are some, so records
        without them are byte-identical to those written before effects existed)."""
        d = {"seq": self.seq, "op": self.op, "args": self.args, "clock": self.clock}
        if self.effects is not None:
            d["effects"] = self.effects
        return d


def encode(record: Record) -> bytes:
    """Return the on-disk bytes of ``record`` (header + canonical JSON payload)."""
    payload = json.dumps(record.to_dict(), ensure_ascii=False, sort_keys=True,
                         separators=(",", ":"), allow_nan=False).encode("utf-8")
    return HEADER.pack(MAGIC, len(payload), zlib.crc32(payload)) + payload


@dataclass(slots=True)
class Scan:
    """What :func:`scan` found: the good records, the byte offset where each one ends, and
    why reading stopped."""

    records: list[Record]
    ends: list[int]
    total_bytes: int
    problem: str | None

    @property
    def good_bytes(self) -> int:
        """Return how many bytes the good records take from the start."""
        return self.ends[-1] if self.ends else 0

    @property
    def dropped_bytes(self) -> int:
        """Return how many bytes after the last good record are dropped."""
        return self.total_bytes - self.good_bytes


def _decode(payload: bytes) -> Record | None:
    try:
        d = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(d, dict) or not isinstance(d.get("op"), str) or \
            not isinstance(d.get("args"), dict) or isinstance(d.get("seq"), bool) or \
            not isinstance(d.get("seq"), int) or isinstance(d.get("clock"), bool) or \
            not isinstance(d.get("clock"), int | float) or \
            not isinstance(d.get("effects", {}), dict):
        return None
    return Record(d["seq"], d["op"], d["args"], float(d["clock"]), d.get("effects"))


def scan(data: bytes) -> Scan:
    """Return the records of journal bytes ``data`` up to the first bad one. Never raises.

    Sequence numbers must increase by one from the first record; a record out of sequence
    (say, a stale block after a crash) ends the scan like a bad checksum does.
    Cost: O(len(data)) for the checksums plus JSON parsing of each record.
    """
    records: list[Record] = []
    ends: list[int] = []
    at = 0
    n = len(data)
    while at < n:
        if n - at < HEADER.size:
            return Scan(records, ends, n, f"torn record header at byte {at}")
        magic, length, crc = HEADER.unpack_from(data, at)
        if magic != MAGIC or length > MAX_RECORD:
            return Scan(records, ends, n, f"bad record header at byte {at}")
        end = at + HEADER.size + length
        if end > n:
            return Scan(records, ends, n, f"torn record at byte {at}")
        payload = bytes(data[at + HEADER.size:end])
        if zlib.crc32(payload) != crc:
            return Scan(records, ends, n, f"checksum mismatch at byte {at}")
        record = _decode(payload)
        if record is None:
            return Scan(records, ends, n, f"unreadable record at byte {at}")
        if records and record.seq != records[-1].seq + 1:
            return Scan(records, ends, n, f"record out of sequence at byte {at}")
        records.append(record)
        ends.append(end)
        at = end
    return Scan(records, ends, n, None)
