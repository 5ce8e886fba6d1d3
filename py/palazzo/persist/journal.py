"""The journal's record format: length-prefixed, checksummed JSON records, appended in order.

One record on disk::

    b"PZ" | u32 little-endian payload length | u32 little-endian CRC-32 of the payload | payload

The payload is UTF-8 JSON of ``{"seq", "op", "args", "clock"}`` and, when the operation
computed something replay must not compute again, ``"effects"``: the operation's name, its
validated arguments, the clock value it ran with, and what it did that depends on more than
those (the embedder it ran with and every vector it made: :mod:`palazzo.embed.recorded`).
Sequence numbers go on across generations: the first record after a snapshot follows the
last one the snapshot holds.

**Torn or damaged.** :func:`scan` reads every record that verifies, wherever it lies. A
crash during an append can leave only one thing: the last record in the file, incomplete
(shorter than its header says, or a header cut short). That is the *torn* tail, which was
never acknowledged and may be dropped. Anything else that fails — a bad magic, length or
checksum with data after it, a whole last record whose checksum fails, bytes that are no
record — is *damage*: :func:`scan` names each unreadable span and goes on at the next
offset where a whole record verifies, so the records after the damage are not lost. A record
whose header alone is damaged (its magic, or a length that no longer fits) but whose payload
still matches its checksum is read back too.

A CRC-32 (``zlib``, in every Python including Pyodide) catches torn and corrupted writes; it
is not a defence against someone forging a journal, which the palace's owner controls anyway.

**The tip.** A journal cut at a record boundary, or a journal file deleted, looks like a
shorter journal. The store therefore keeps, beside the journals, a 28-byte *tip*
(:class:`Tip`: the generation, the last acknowledged sequence number and the journal's
length then), rewritten after each acknowledged append. A journal shorter than its tip says,
or a generation the tip names without files, is damage.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any

MAGIC = b"PZ"
HEADER = struct.Struct("<2sII")
MAX_RECORD = 1 << 30  # a gigabyte: anything claiming more is corruption, not a record
TIP_MAGIC = b"PZTP"
TIP = struct.Struct("<4sIQQI")  # magic, generation, seq, journal length, CRC-32 of the rest


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
class Span:
    """Bytes ``start:end`` of a journal that hold no record that verifies, and why."""

    start: int
    end: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able span."""
        return {"start": self.start, "end": self.end, "reason": self.reason}


@dataclass(slots=True)
class Scan:
    """What :func:`scan` found: every record that verifies (in file order) with the byte
    offsets where each starts and ends, the damaged spans between or after them, and the
    torn tail, if the file ends in one."""

    records: list[Record]
    starts: list[int]
    ends: list[int]
    total_bytes: int
    damaged: list[Span] = field(default_factory=list)
    torn: Span | None = None
    repaired_headers: int = 0  # records read back although their header was damaged

    @property
    def problem(self) -> str | None:
        """Return the first thing wrong, in words (damage before a torn tail), or None."""
        if self.damaged:
            return self.damaged[0].reason
        return self.torn.reason if self.torn else None

    @property
    def good_bytes(self) -> int:
        """Return where the last record that verifies ends (0 without records)."""
        return self.ends[-1] if self.ends else 0

    @property
    def dropped_bytes(self) -> int:
        """Return how many bytes after the last record that verifies are not read."""
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


def _read(data: bytes, at: int) -> tuple[Record | None, str]:
    """Return (the whole record starting at ``at``, "") or (None, why it is not one)."""
    n = len(data)
    if n - at < HEADER.size:
        return None, f"torn record header at byte {at}"
    magic, length, crc = HEADER.unpack_from(data, at)
    if magic != MAGIC or length > MAX_RECORD:
        return None, f"bad record header at byte {at}"
    end = at + HEADER.size + length
    if end > n:
        return None, f"torn record at byte {at}"
    payload = data[at + HEADER.size:end]
    if zlib.crc32(payload) != crc:
        return None, f"checksum mismatch at byte {at}"
    record = _decode(payload)
    if record is None:
        return None, f"unreadable record at byte {at}"
    return record, ""


def _resync(data: bytes, after: int) -> int:
    """Return the first offset past ``after`` where a whole record verifies, or -1.
    Cost: a search for the magic, and a checksum at each place it is found."""
    at = data.find(MAGIC, after + 1)
    while at != -1:
        if _read(data, at)[0] is not None:
            return at
        at = data.find(MAGIC, at + 1)
    return -1


def _with_bad_header(data: bytes, at: int, end: int) -> Record | None:
    """Return the record at ``at`` if its payload, taken as everything up to ``end``,
    matches the header's checksum (the magic or length was damaged, not the data)."""
    if end - at <= HEADER.size:
        return None
    _, _, crc = HEADER.unpack_from(data, at)
    payload = data[at + HEADER.size:end]
    return _decode(payload) if zlib.crc32(payload) == crc else None


def _is_torn(data: bytes, at: int) -> bool:
    """Return whether the bytes from ``at`` to the end are what a crashed append leaves: a
    header cut short, or a header whose record runs past the end of the file."""
    rest = data[at:]
    if len(rest) < HEADER.size:
        return MAGIC.startswith(rest[:len(MAGIC)])
    magic, length, _ = HEADER.unpack_from(data, at)
    return magic == MAGIC and length <= MAX_RECORD and at + HEADER.size + length > len(data)


def scan(data: bytes) -> Scan:
    """Return every record of journal bytes ``data`` that verifies, and what does not.
    Never raises.

    Reading goes on past damage: at a bad place it looks for the next offset where a whole
    record verifies and records the span between as damaged (a record there whose header
    alone is damaged is read back). Bytes at the end that hold no record are the torn tail
    when they are an incomplete record, else damage. Sequence numbers are not checked here:
    the store orders records across generations. Cost: O(len(data)) for the checksums plus
    JSON parsing of each record; at damage, a search for the next record.
    """
    data = bytes(data)
    out = Scan([], [], [], len(data))
    at, n = 0, len(data)
    while at < n:
        record, why = _read(data, at)
        if record is not None:
            _, length, _ = HEADER.unpack_from(data, at)
            end = at + HEADER.size + length
            out.records.append(record)
            out.starts.append(at)
            out.ends.append(end)
            at = end
            continue
        nxt = _resync(data, at)
        stop = n if nxt == -1 else nxt
        healed = _with_bad_header(data, at, stop)
        if healed is not None:
            out.records.append(healed)
            out.starts.append(at)
            out.ends.append(stop)
            out.repaired_headers += 1
            out.damaged.append(Span(at, at + HEADER.size,
                                    f"damaged record header at byte {at} (its data verified)"))
        elif nxt == -1 and _is_torn(data, at):
            out.torn = Span(at, n, why)
        else:
            out.damaged.append(Span(at, stop, why if nxt == -1 else
                                    f"{why}; {stop - at} bytes unreadable before the next "
                                    f"record at byte {stop}"))
        at = stop
    return out


@dataclass(slots=True)
class Tip:
    """What was last acknowledged: the generation written to, the last record's sequence
    number and the length of that generation's journal then."""

    generation: int
    seq: int
    length: int

    def encode(self) -> bytes:
        """Return the tip's 28 bytes (magic, the three numbers, a CRC-32 of them)."""
        body = TIP.pack(TIP_MAGIC, self.generation, self.seq, self.length, 0)[:-4]
        return body + zlib.crc32(body).to_bytes(4, "little")

    @classmethod
    def decode(cls, data: bytes) -> Tip | None:
        """Return the tip in ``data``, or None when the bytes are not a whole tip."""
        if len(data) != TIP.size:
            return None
        magic, gen, seq, length, crc = TIP.unpack(data)
        if magic != TIP_MAGIC or zlib.crc32(data[:-4]) != crc:
            return None
        return cls(gen, seq, length)
