"""What boot and repair decide when a palace's files are not what was written.

A palace's files can be wrong in two ways. A crash leaves a *torn* tail: the last journal
record incomplete, or a snapshot a compaction had not finished (newer than the tip). That was
never acknowledged, and boot drops it quietly. Anything else is *damage* (a disk or file
system fault, a sync tool, a half-copied backup, a file deleted by hand): acknowledged writes
may be gone, so boot says exactly what is damaged and what is still readable, opens the palace
read-only, and nothing touches the files until the person repairs it
(:meth:`palazzo.persist.palacestore.PalaceStore.repair`).

This module holds the decisions that need no palace: each thing found wrong
(:class:`Finding`), putting the records of several journals in sequence order and naming
what is missing, duplicated or out of order (:func:`order`), checking the journals against the
tip (:func:`check_tip`), describing a record set aside so a person can read it
(:func:`describe`), and keeping what still verifies of a damaged ``keys.json``
(:func:`salvage_keys`).
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass
from typing import Any

from palazzo.errors import ValidationError
from palazzo.persist import journal
from palazzo.persist.journal import Record, Tip
from palazzo.provenance.keys import Keyring

ASIDE = "damaged-"  # a damaged file is renamed with this prefix, never deleted
EXCERPT = 200  # characters of a set-aside record's text shown in a report


@dataclass(slots=True)
class Finding:
    """One thing wrong with a palace's files: which file, and what, in words."""

    file: str
    what: str

    def to_dict(self) -> dict[str, str]:
        """Return the JSON-able finding."""
        return {"file": self.file, "what": self.what}


@dataclass(slots=True)
class Entry:
    """A record that verified, and where it lies: its journal's generation and bytes."""

    record: Record
    generation: int
    start: int
    end: int


@dataclass(slots=True)
class Order:
    """What :func:`order` made of a chain of journals: the records to replay, in sequence
    order; the ones set aside (a second, different record with a sequence number already
    taken); the sequence ranges missing; and the findings."""

    kept: list[Entry]
    conflicts: list[Entry]
    missing: list[tuple[int, int]]
    findings: list[Finding]


def order(entries: list[Entry], base_seq: int | None, name_of: Any) -> Order:
    """Return the records of ``entries`` (in file order, oldest generation first) to replay
    after a snapshot that holds everything up to ``base_seq`` (None: a snapshot written before
    snapshots kept their sequence number; the first record then starts the count).

    A record repeated byte for byte is kept once; two different records with one sequence
    number keep the first (the second is a conflict, set aside); records already in the
    snapshot are skipped; records out of order are put back in order. Each of these, and
    each gap, is a finding (``name_of(generation)`` names the journal). Cost: a sort.
    """
    findings: list[Finding] = []
    # Going back at the start of the next generation's journal is expected: a compaction
    # aside copies the records written meanwhile there (repeats are checked below).
    back = [i for i, (a, b) in enumerate(zip(entries, entries[1:], strict=False))
            if b.record.seq < a.record.seq and b.generation != a.generation + 1]
    seen_order = [e.record.seq for e in entries]
    if back:
        at = back[0]
        e = entries[at + 1]
        findings.append(Finding(name_of(e.generation),
                                f"record {e.record.seq} at byte {e.start} is out of order "
                                f"(after record {seen_order[at]})"))
    kept: list[Entry] = []
    conflicts: list[Entry] = []
    for e in sorted(entries, key=lambda e: (e.record.seq, e.generation, e.start)):
        seq = e.record.seq
        if base_seq is not None and seq <= base_seq:
            findings.append(Finding(name_of(e.generation),
                                    f"record {seq} at byte {e.start} is older than the "
                                    f"snapshot it follows (which holds up to {base_seq})"))
            continue
        if kept and kept[-1].record.seq == seq:
            same = journal.encode(kept[-1].record) == journal.encode(e.record)
            if same and e.generation == kept[-1].generation + 1:
                continue  # a compaction aside copied it to the next journal: expected
            findings.append(Finding(name_of(e.generation),
                                    f"record {seq} appears twice (at byte {e.start})" if same
                                    else f"two different records are numbered {seq} (the "
                                    f"one at byte {e.start} is set aside)"))
            if not same:
                conflicts.append(e)
            continue
        kept.append(e)
    missing: list[tuple[int, int]] = []
    expected = base_seq + 1 if base_seq is not None else (
        kept[0].record.seq if kept else None)
    for e in kept:
        if expected is not None and e.record.seq > expected:
            missing.append((expected, e.record.seq - 1))
            findings.append(Finding(name_of(e.generation), "record(s) " + _range(
                expected, e.record.seq - 1) + f" missing before byte {e.start}"))
        expected = e.record.seq + 1
    return Order(kept, conflicts, missing, findings)


def _range(a: int, b: int) -> str:
    return str(a) if a == b else f"{a}-{b}"


def check_tip(tip: Tip, lengths: dict[int, int], generations: set[int], last_seq: int,
              name_of: Any) -> list[Finding]:
    """Return what the tip says is missing: the tip names generation ``tip.generation``;
    ``lengths`` maps each generation to its journal's length (absent: no journal),
    ``generations`` holds every generation with a snapshot or journal, ``last_seq`` is the
    highest sequence number found (in records or the base snapshot). Cost: O(1)."""
    out = []
    gen = tip.generation
    if gen and gen not in generations:
        out.append(Finding(f"generation {gen}", "its snapshot and journal are missing (the "
                           "tip says writes were acknowledged there)"))
        return out
    length = lengths.get(gen)
    if length is None and tip.length:
        out.append(Finding(name_of(gen), f"missing: it held {tip.length} acknowledged bytes"))
    elif length is not None and length < tip.length:
        out.append(Finding(name_of(gen), f"{length} bytes, but {tip.length} were "
                           "acknowledged: its end is missing"))
    if last_seq < tip.seq:
        out.append(Finding(name_of(gen), f"records up to {tip.seq} were acknowledged; the "
                           f"last one readable is {last_seq}"))
    return out


def describe(record: Record, why: str) -> dict[str, Any]:
    """Return a record set aside as a person reads it: its number, operation, time, why it
    was set aside and the first characters of the text it carried (a drawer's content, a
    turn, a diary entry), if any."""
    texts = [v for k in ("content", "text", "entry", "message")
             if isinstance(v := record.args.get(k), str)]
    if record.op == "batch":
        for c in record.args.get("calls", []) or []:
            a = c.get("args") if isinstance(c, dict) else None
            if isinstance(a, dict) and isinstance(a.get("content"), str):
                texts.append(a["content"])
    text = " | ".join(texts)
    return {"seq": record.seq, "op": record.op, "clock": record.clock, "why": why,
            "text": text[:EXCERPT] + ("…" if len(text) > EXCERPT else "")}


def aside_name(name: str, names: set[str]) -> str:
    """Return the name a damaged file is moved to: ``damaged-<name>``, with ``-2``, ``-3``
    … before it when that name is taken."""
    base = f"{ASIDE}{name}"
    out, k = base, 2
    while out in names:
        out, k = f"{ASIDE}{k}-{name}", k + 1
    return out


# -- signing keys -----------------------------------------------------------------------------

def keys_bytes(keys: dict[str, Any]) -> bytes:
    """Return ``keys.json``'s bytes: the keyring with ``check``, a CRC-32 of its canonical
    JSON, so a flipped byte in a time or a name is found too (a secret's own key id already
    catches a flipped secret)."""
    body = json.dumps(keys, sort_keys=True, separators=(",", ":")).encode("utf-8")
    return json.dumps({**keys, "check": zlib.crc32(body)}, sort_keys=True).encode("utf-8")


def read_keys(data: bytes) -> dict[str, Any]:
    """Return the keyring JSON of ``keys.json`` bytes; raise ValidationError, in words,
    when they are not a whole, verified keyring (files written before ``check`` existed are
    read without it)."""
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise ValidationError("not JSON") from None
    if not isinstance(value, dict):
        raise ValidationError("not a keyring")
    if "check" in value:
        keys = {k: v for k, v in value.items() if k != "check"}
        body = json.dumps(keys, sort_keys=True, separators=(",", ":")).encode("utf-8")
        if value["check"] != zlib.crc32(body):
            raise ValidationError("its checksum does not match")
        value = keys
    Keyring.from_json(value)
    return value


def salvage_keys(data: bytes) -> tuple[dict[str, Any] | None, int]:
    """Return (the keyring made of every key in damaged ``keys.json`` bytes that still
    verifies — its id is the hash of its secret —, how many keys were dropped). None when
    nothing could be read. Cost: one JSON parse."""
    try:
        value = json.loads(data.decode("utf-8", errors="replace"))
    except (ValueError, RecursionError):
        return None, 0
    keys = value.get("keys") if isinstance(value, dict) else None
    if not isinstance(keys, list):
        return None, 0
    good = []
    for k in keys:
        try:
            Keyring.from_json({"format": "palazzo-keyring", "version": 1, "current": None,
                               "keys": [*good, k]})
        except (ValidationError, TypeError, ValueError):
            continue
        good.append(k)
    ids = {k["key_id"] for k in good}
    current = value.get("current") if value.get("current") in ids else None
    return ({"format": "palazzo-keyring", "version": 1, "current": current, "keys": good},
            len(keys) - len(good))
