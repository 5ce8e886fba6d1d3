"""The fuzz corpus: seeded hostile inputs for every door bad data comes in by, and a runner.

Families (each a generator of inputs from ``(seed, index)``, the same on every machine):

- ``palace-document``: a valid exported palace (every section filled) with one to three
  mutations: a value of another type, a number no palace holds (NaN, ±inf, 1e308, 3e38, a
  400-digit integer), deep nesting, a duplicated or dropped list item, a dropped key, a drawer
  whose id no longer matches its content, a reversed or self-loop edge, huge or invalid
  (lone surrogate) text, damaged vectors, a shuffled list, a bad envelope or alias. Given to
  the ``import`` operation as a document, as a host that parsed JSON would.
- ``palace-text``: the same file as JSON text, damaged as text: truncated, numbers spelled
  ``NaN``/``Infinity``/``1e400``/400 digits, invalid UTF-8 bytes, lone surrogate escapes,
  nesting past the limit, a byte order mark, flipped bytes. Given as ``import``'s ``text``
  (bytes go through :func:`palazzo.formats.palacefile.parse`, as the browser's file reader does).
- ``chats``: plain JSON, JSONL, ChatGPT, Claude and zipped ChatGPT exports with the same
  document mutations plus repeated message ids, parent cycles, huge timestamps and damaged
  zips (bad CRC, the encryption flag, an unknown compression method, truncation); run as the
  CLI does: :func:`palazzo.importers.chats.plan_chats`, then
  :func:`palazzo.importers.apply`.
- ``graphpalace``: a GraphPalace export with the same document mutations plus parent-map
  cycles, orphans and self-parents, ids that are objects, and times and confidences out of
  range; run as ``palazzo import-graphpalace`` does.
- ``folder``: folders with repeated blocks, CRLF, byte order marks, binary and non-UTF-8
  files, non-UTF-8 file names, deep nesting, symlink loops and hostile ``.gitignore`` /
  ``--exclude`` globs (``[z-a]``, ``a*a*…a*b``); run as ``palazzo index`` does, twice (the
  second time against the palace the first made).

Each input runs against a fresh palace and ends as one of :data:`OUTCOMES`: ``error`` (a
:class:`~palazzo.errors.PalazzoError`, what bad input should get), ``accepted``,
``traceback`` (any other exception) or ``hang`` (over the time limit). Inputs run in a worker
process with a watchdog: a hang kills the worker and a new one takes the next input. A
failed import must leave the palace as it was (``changed`` counts those that did not), and
an accepted palace file must keep its invariants: export, import and export again gives the
same document, every drawer id is the id of its content, and reading it (status, search,
diaries, taxonomy, graph export) raises nothing but PalazzoErrors (``invariant`` counts
inputs that broke one).

``palazzo bench fuzz --count 2000 --out bench-results/fuzz.json`` writes the counts;
``tests/palazzo/test_fuzz.py`` runs a seeded sample in CI.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import io
import json
import multiprocessing
import os
import random
import struct
import sys
import tempfile
import time
import traceback
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from palazzo.errors import PalazzoError
from palazzo.ops import bind, call

OUTCOMES = ("error", "accepted", "traceback", "hang")
FAMILIES = ("palace-document", "palace-text", "chats", "graphpalace", "folder")
TIMEOUT = 10.0  # seconds one input may take before it counts as a hang


@dataclass(slots=True)
class Case:
    """One generated input: what it is made of and how it was damaged."""

    family: str
    index: int
    mutation: str
    payload: Any  # a document, JSON text or bytes, or a folder/file description


@dataclass(slots=True)
class Result:
    """What one input did."""

    family: str
    index: int
    mutation: str
    outcome: str
    detail: str = ""
    changed: bool = False  # a failed import left the palace different
    problems: list[str] = field(default_factory=list)  # invariants an accepted input broke
    seconds: float = 0.0


# -- the palace the palace families start from ---------------------------------------------------

def _clock() -> float:
    return 1_700_000_000.0


def base_palace() -> Any:
    """Return a small palace with every section of the file filled: drawers in rooms and a
    closet, a long (chunked) drawer, keyed twins, an edited drawer (an alias), facts, an
    agent's diary, a branching conversation. Deterministic. Cost: a few milliseconds."""
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.palace import Palace

    p = Palace(name="fuzz", embedder=HashEmbedder(dim=64), clock=_clock,
               similar_threshold=0.2)
    p.add_drawer("projects", "search", "BM25 over drawers as sparse algebra", source="notes")
    p.add_drawer("projects", "search", "RRF fuses the vector and keyword rankings")
    p.add_drawer("projects", "ui", "Panel renders from the worker", closet="boot")
    p.add_drawer("people", "search", "Ada asked about recall at five", importance=0.9)
    p.add_drawer("projects", "notes", " ".join(f"Sentence {i} is about topic {i % 7}."
                                               for i in range(120)))
    p.add_drawer("projects", "files", "the same block", key="notes.md#0")
    p.add_drawer("projects", "files", "the same block", key="notes.md#1")
    p.add_drawer("projects", "search", "the launch is on friday")
    call(p, "bulk_replace", {"find": "friday", "replace": "monday"})
    call(p, "kg_add", {"subject": "Ada", "predicate": "works_on", "object": "recall"})
    call(p, "kg_add", {"subject": "Ada", "predicate": "knows", "object": "Grace"})
    call(p, "diary_write", {"agent": "scout", "text": "found the BM25 notes", "topic": "search"})
    root = call(p, "add_turn", {"conversation": "chat", "role": "user", "content": "hello"})
    tid = root["turn"]["id"]
    call(p, "add_turn", {"conversation": "chat", "role": "assistant", "content": "hi there",
                        "parents": [tid]})
    call(p, "add_turn", {"conversation": "chat", "role": "assistant", "content": "hello!",
                        "parents": [tid]})
    p.edges.columns["success"][0] = 0.25  # pheromone on an edge, as use leaves it
    p.drawers.columns["exploitation"][0] = 0.5
    return p


def fresh_palace() -> Any:
    """Return the palace an input is imported into: small, with an embedder, never shared."""
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.palace import Palace

    p = Palace(name="target", embedder=HashEmbedder(dim=64), clock=_clock)
    p.add_drawer("home", "inbox", "a drawer that must survive a failed import")
    return p


_BASE: dict[str, Any] = {}


def base_document() -> dict[str, Any]:
    """Return (a copy of) the exported :func:`base_palace`, made once a process."""
    from palazzo.formats.palacefile import export_palace

    if "doc" not in _BASE:
        _BASE["doc"] = export_palace(base_palace(), exported_at=1.0)
    return copy.deepcopy(_BASE["doc"])


# -- mutations of JSON-like documents -------------------------------------------------------------

HOSTILE_NUMBERS: list[Any] = [float("nan"), float("inf"), float("-inf"), 1e308, -1e308, 3e38,
                              10**400, -(10**400), 2**63, 2**64, -1, -0.0, 1e-320, 1e40,
                              1.7e12, 253402300800]
HOSTILE_VALUES: list[Any] = [None, True, False, 0, 1.5, "", " ", "x", "\ud800", "\x00",
                             "a" * 300, [], [None], {}, {"a": {}}, [[[]]], {"$ref": "#"}]
TEXT_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 400, "1e-400",
                "-0", "3e38", "1e308"]


def _paths(doc: Any) -> list[tuple[Any, ...]]:
    """Return the path (keys and indices) of every value below ``doc``, in document order."""
    out: list[tuple[Any, ...]] = []
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        if path:
            out.append(path)
        if isinstance(value, dict):
            stack.extend((v, (*path, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*path, i)) for i, v in enumerate(value))
    out.reverse()
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _set(doc: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(doc, path[:-1])[path[-1]] = value


def _pick(rng: random.Random, doc: Any, want: Callable[[Any], bool]) -> tuple[Any, ...] | None:
    paths = [p for p in _paths(doc) if want(_get(doc, p))]
    return rng.choice(paths) if paths else None


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _type_swap(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: True)
    if path is None:
        return "type-swap(none)"
    old = _get(doc, path)
    value = rng.choice([v for v in HOSTILE_VALUES if type(v) is not type(old)])
    _set(doc, path, copy.deepcopy(value))
    return f"type-swap {_show(path)}"


def _number(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, _is_number) or _pick(rng, doc, lambda v: True)
    if path is None:
        return "number(none)"
    _set(doc, path, rng.choice(HOSTILE_NUMBERS))
    return f"number {_show(path)}"


def _nest(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: True)
    if path is None:
        return "nest(none)"
    depth = rng.choice([3, 99, 101, 3000])
    value: Any = _get(doc, path)
    for i in range(depth):
        value = [value] if i % 2 else {"x": value}
    _set(doc, path, value)
    return f"nest {depth} {_show(path)}"


def _duplicate(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: isinstance(v, list) and v)
    if path is None:
        return "duplicate(none)"
    items = _get(doc, path)
    item = copy.deepcopy(rng.choice(items))
    if isinstance(item, dict) and item and rng.random() < 0.5:  # a near-duplicate
        key = rng.choice(sorted(item, key=str))
        if isinstance(item[key], str):
            item[key] += "-copy"
    items.insert(rng.randrange(len(items) + 1), item)
    return f"duplicate {_show(path)}"


def _drop(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: isinstance(v, list | dict) and v)
    if path is None:
        return "drop(none)"
    box = _get(doc, path)
    if isinstance(box, list):
        del box[rng.randrange(len(box))]
    else:
        del box[rng.choice(sorted(box))]
    return f"drop {_show(path)}"


def _huge_text(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: isinstance(v, str))
    if path is None:
        return "huge-text(none)"
    size = rng.choice([201, 1025, 100_000, 5_000_001])
    _set(doc, path, "z" * size)
    return f"huge-text {size} {_show(path)}"


def _surrogate(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: isinstance(v, str))
    if path is None:
        return "surrogate(none)"
    _set(doc, path, _get(doc, path) + rng.choice(["\ud800", "\udfff", "\ud83d"]))
    return f"surrogate {_show(path)}"


def _shuffle(rng: random.Random, doc: Any) -> str:
    path = _pick(rng, doc, lambda v: isinstance(v, list) and len(v) > 1)
    if path is None:
        return "shuffle(none)"
    rng.shuffle(_get(doc, path))
    return f"shuffle {_show(path)}"


DOCUMENT_MUTATIONS: list[Callable[[random.Random, Any], str]] = [
    _type_swap, _number, _nest, _duplicate, _drop, _huge_text, _surrogate, _shuffle]


def _show(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)[:120]


# -- palace-specific mutations ---------------------------------------------------------------------

def _drawer_mismatch(rng: random.Random, doc: Any) -> str:
    d = rng.choice(doc["palace"]["drawers"])
    field_ = rng.choice(["content", "wing", "room", "key", "id"])
    if field_ == "id":
        other = rng.choice(doc["palace"]["drawers"])
        d["id"] = other["id"] if other is not d else "drawer_" + "0" * 24
    elif field_ == "key":
        d["key"] = "k" if "key" not in d else d["key"] + "x"
    else:
        d[field_] = d[field_] + " (changed)"
    return f"drawer-mismatch {field_}"


def _edge_flip(rng: random.Random, doc: Any) -> str:
    e = rng.choice(doc["palace"]["edges"])
    how = rng.choice(["reverse", "self-loop", "kind", "retarget"])
    if how == "reverse":
        e["src"], e["dst"] = e["dst"], e["src"]
    elif how == "self-loop":
        e["dst"] = e["src"]
    elif how == "kind":
        e["kind"] = rng.choice(["HAS_WING", "HAS_ROOM", "HAS_CLOSET", "HAS_DRAWER", "HALL"])
    else:
        e["dst"] = rng.choice(doc["palace"]["edges"])["src"]
    return f"edge-{how} {e['kind']}"


def _vectors(rng: random.Random, doc: Any) -> str:
    import numpy as np

    section = rng.choice(["vectors", "chunk_vectors"])
    v = doc["palace"].get(section)
    if not isinstance(v, dict):
        return f"vectors(no {section})"
    m = np.frombuffer(base64.b64decode(v["data"]), "<f4").copy()
    how = rng.choice(["zero-row", "huge", "nan", "scale", "bytes", "dim", "ids"])
    if how == "zero-row":
        m[:64] = 0.0
    elif how == "huge":
        m[rng.randrange(len(m))] = 3e38
    elif how == "nan":
        m[rng.randrange(len(m))] = np.nan
    elif how == "scale":
        m *= 1.5
    elif how == "dim" and section == "vectors":
        v["dim"] = rng.choice([0, 63, 65, 10**400, -1])
    elif how == "ids":
        v["ids"] = list(reversed(v["ids"]))
    if how == "bytes":
        v["data"] = base64.b64encode(rng.randbytes(rng.choice([3, 256, len(m) * 4]))).decode()
    else:
        v["data"] = base64.b64encode(m.astype("<f4").tobytes()).decode()
    return f"{section}-{how}"


def _envelope(rng: random.Random, doc: Any) -> str:
    how = rng.choice(["format", "version", "version-1", "aliases", "seed", "settings"])
    body = doc["palace"]
    if how == "format":
        doc["format"] = rng.choice(["palazzo2", None, 1])
    elif how == "version":
        doc["version"] = rng.choice([0, 3, "2", 2.0, True, 10**400])
    elif how == "version-1":  # the old format: edited drawers there are healed, not refused
        doc["version"] = 1
        body.pop("drawer_aliases", None)
    elif how == "aliases":
        ids = [d["id"] for d in body["drawers"]]
        body["drawer_aliases"] = rng.choice([
            {"drawer_x": "drawer_nowhere"}, {ids[0]: ids[1]}, {"a": ids[0], "b": "a"},
            [ids[0]], {"\ud800": ids[0]}])
    elif how == "seed":
        body["seed"] = rng.choice([-1, 2**63, 10**400, 1.5, "0"])
    else:
        body["settings"] = rng.choice([{"chunk_size": 10**400}, {"similar_threshold": 2},
                                       {"similar_limit": -5}, {"chunk_size": 1.5}, []])
    return f"envelope-{how}"


PALACE_MUTATIONS = [*DOCUMENT_MUTATIONS, _drawer_mismatch, _edge_flip, _vectors, _envelope]


def _mutate(rng: random.Random, doc: Any, mutations: list[Callable[..., str]]) -> str:
    """Apply one to three mutations to ``doc`` in place; return what was done. A mutation
    that no longer fits (an earlier one replaced what it looks for, or nested it too deep to
    copy) is skipped."""
    done = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        mutation = rng.choice(mutations)
        try:
            done.append(mutation(rng, doc))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, RecursionError):
            done.append(f"{mutation.__name__.strip('_')}(skipped)")
    return "; ".join(done)


def _palace_document(rng: random.Random) -> tuple[str, Any]:
    doc = base_document()
    return _mutate(rng, doc, PALACE_MUTATIONS), doc


def _palace_text(rng: random.Random) -> tuple[str, Any]:
    doc = base_document()
    label = ""
    if rng.random() < 0.3:
        label = _mutate(rng, doc, PALACE_MUTATIONS) + "; "
    text = _dumps(doc, ensure_ascii=rng.random() < 0.5)
    how = rng.choice(["truncate", "number", "utf8", "surrogate", "deep", "bom", "flip",
                      "duplicate-key"])
    if how == "truncate":
        return label + how, text[: rng.randrange(len(text))]
    if how == "number":
        spots = [i for i, ch in enumerate(text) if ch == ":" and text[i + 2: i + 3].isdigit()]
        if spots:
            at = rng.choice(spots) + 2
            end = at
            while end < len(text) and text[end] in "0123456789.eE+-":
                end += 1
            word = rng.choice(TEXT_NUMBERS)
            return f"{label}number {word[:12]}", text[:at] + word + text[end:]
        return label + how, text
    if how == "utf8":
        raw = bytearray(text.encode("utf-8", "surrogatepass"))
        bad = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\x80",
                          b"\xc0\xaf"])
        at = rng.randrange(len(raw))
        return label + how, bytes(raw[:at] + bad + raw[at:])
    if how == "surrogate":
        at = text.index('"content": "') + len('"content": "')
        return label + how, text[:at] + rng.choice(["\\ud800", "\\udc00x", "\\ud83d"]) + text[at:]
    if how == "deep":
        n = rng.choice([99, 100, 101, 100_000])
        at = text.index('"name": ')
        return f"{label}deep {n}", text[:at] + '"x": ' + "[" * n + "]" * n + ", " + text[at:]
    if how == "bom":
        return label + how, "\ufeff" + text
    if how == "flip":
        raw = bytearray(text.encode("utf-8", "surrogatepass"))
        for _ in range(rng.choice([1, 3, 20])):
            raw[rng.randrange(len(raw))] = rng.randrange(256)
        return label + how, bytes(raw)
    at = text.index('"name": ')
    return label + how, text[:at] + '"name": "shadow", ' + text[at:]


# -- chat exports ----------------------------------------------------------------------------------

def _chat_sources(rng: random.Random) -> tuple[str, Any]:
    """Return (shape, document) of a small valid export of a random shape."""
    t0 = 1_700_000_000.0
    shape = rng.choice(["plain", "jsonl", "chatgpt", "claude", "zip"])
    if shape in ("plain", "jsonl"):
        return shape, [{"role": r, "content": f"message {i}", "timestamp": t0 + i}
                       for i, r in enumerate(["user", "assistant", "user", "assistant"])]
    if shape == "claude":
        msgs = []
        parent = None
        for i in range(5):
            uid = f"m{i}"
            msgs.append({"uuid": uid, "sender": "human" if i % 2 == 0 else "assistant",
                         "text": f"claude message {i}", "created_at": "2024-05-01T10:00:0"
                         f"{i}Z", **({"parent_message_uuid": parent} if parent else {})})
            parent = uid
        return shape, [{"uuid": "c1", "name": "a chat", "chat_messages": msgs}]
    mapping: dict[str, Any] = {"root": {"id": "root", "message": None, "parent": None,
                                        "children": ["n0"]}}
    prev = "root"
    for i in range(5):
        nid = f"n{i}"
        mapping[nid] = {"id": nid, "parent": prev, "children": [f"n{i + 1}"] if i < 4 else [],
                        "message": {"id": nid, "author": {"role": "user" if i % 2 == 0
                                                          else "assistant"},
                                    "content": {"content_type": "text",
                                                "parts": [f"chatgpt message {i}"]},
                                    "create_time": t0 + i, "recipient": "all"}}
        prev = nid
    return shape, [{"id": "conv1", "title": "a chat", "create_time": t0, "mapping": mapping}]


def _chat_specific(rng: random.Random, shape: str, doc: Any) -> str:
    how = rng.choice(["repeat-id", "cycle", "timestamp", "id-object"])
    if shape == "claude":
        msgs = doc[0]["chat_messages"]
        if how == "repeat-id":
            msgs[rng.randrange(1, len(msgs))]["uuid"] = msgs[0]["uuid"]
        elif how == "cycle":
            msgs[0]["parent_message_uuid"] = msgs[-1]["uuid"]
        elif how == "timestamp":
            msgs[1]["created_at"] = rng.choice([1e40, 10**400, "99999-01-01", float("nan")])
        else:
            msgs[2]["parent_message_uuid"] = {"uuid": "m1"}
    elif shape in ("chatgpt", "zip"):
        mapping = doc[0]["mapping"]
        if how == "repeat-id":
            mapping["n3"]["children"].append("n1")
        elif how == "cycle":
            mapping["n0"]["parent"] = "n4"
            mapping["n4"]["children"].append("n0")
        elif how == "timestamp":
            mapping["n2"]["message"]["create_time"] = rng.choice([1e40, 10**400, -1e308,
                                                                  float("inf")])
        else:
            mapping["n2"]["parent"] = ["n1"]
    else:
        if how == "timestamp":
            doc[1]["timestamp"] = rng.choice([1e40, 10**400, float("nan"), -1e308])
        else:
            doc[0]["role"] = rng.choice([{"r": 1}, ["user"], None])
    return f"{shape}-{how}"


def _dumps(doc: Any, ensure_ascii: bool = True) -> str:
    """Return ``doc`` as JSON text, however deep a mutation nested it (the encoder recurses
    once a level; the 3000 levels :func:`_nest` makes fit in a larger limit)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20_000))
    try:
        return json.dumps(doc, ensure_ascii=ensure_ascii)
    finally:
        sys.setrecursionlimit(limit)


def _encode_chat(shape: str, doc: Any) -> bytes:
    if shape == "jsonl" and isinstance(doc, list):
        return "".join(_dumps(m) + "\n" for m in doc).encode()
    raw = _dumps(doc).encode()
    if shape != "zip":
        return raw
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("export/conversations.json", raw)
    return out.getvalue()


def _damage_zip(rng: random.Random, data: bytes) -> tuple[str, bytes]:
    raw = bytearray(data)
    how = rng.choice(["crc", "encrypted", "method", "truncate"])
    if how == "crc":  # flip a byte of the compressed member, so its CRC no longer matches
        start = 30 + struct.unpack("<H", raw[26:28])[0] + struct.unpack("<H", raw[28:30])[0]
        raw[start + rng.randrange(8)] ^= 0x55
    elif how == "encrypted":
        flags = struct.unpack("<H", raw[6:8])[0] | 1
        raw[6:8] = struct.pack("<H", flags)
        central = raw.find(b"PK\x01\x02")
        raw[central + 8: central + 10] = struct.pack("<H", flags)
    elif how == "method":
        raw[8:10] = struct.pack("<H", 99)
        central = raw.find(b"PK\x01\x02")
        raw[central + 10: central + 12] = struct.pack("<H", 99)
    else:
        raw = raw[: rng.randrange(len(raw))]
    return f"zip-{how}", bytes(raw)


def _chats(rng: random.Random) -> tuple[str, Any]:
    shape, doc = _chat_sources(rng)
    roll = rng.random()
    if roll < 0.35:
        label = _chat_specific(rng, shape, doc)
    elif roll < 0.75:
        label = f"{shape} " + _mutate(rng, doc, DOCUMENT_MUTATIONS)
    else:
        label = shape
    data = _encode_chat(shape, doc)
    if shape == "zip" and rng.random() < 0.5:
        how, data = _damage_zip(rng, data)
        label += f"; {how}"
    elif rng.random() < 0.2:
        cut = rng.choice(["truncate", "utf8"])
        if cut == "truncate":
            data = data[: rng.randrange(max(1, len(data)))]
        else:
            at = rng.randrange(max(1, len(data)))
            data = data[:at] + b"\xff\xfe" + data[at:]
        label += f"; {cut}"
    name = {"jsonl": "chat.jsonl", "zip": "export.zip"}.get(shape, "conversations.json")
    return label, {"name": name, "data": data}


# -- GraphPalace exports ----------------------------------------------------------------------

def _graphpalace_source() -> dict[str, Any]:
    """Return a small valid GraphPalace export (serde's PalaceExport: id-keyed maps, a
    parent map, RFC 3339 times, relationships between entity ids)."""
    emb = [0.0] * 8
    pher = {"exploitation": 0.25, "exploration": 0.0}

    def at(second: int) -> str:
        return f"2026-01-05T10:00:{second:02d}.123456789Z"

    def node(nid: str, name: str, second: int, **extra: Any) -> dict[str, Any]:
        return {"id": nid, "name": name, "embedding": emb, "pheromones": pher,
                "created_at": at(second), **extra}

    drawers = {f"drawer_{i}": {"id": f"drawer_{i}", "content": text, "embedding": emb,
                               "source": "file", "source_file": "notes.md",
                               "importance": 0.5, "pheromones": pher, "created_at": at(i),
                               "accessed_at": at(i)}
               for i, text in ((4, "Light is fast."), (5, "Entropy grows."))}
    return {"version": 1, "exported_at": at(30), "data": {
        "wings": {"wing_1": node("wing_1", "Science", 1, wing_type="domain",
                                 description="")},
        "rooms": {"room_2": node("room_2", "Physics", 2, hall_type="facts", description="")},
        "closets": {"closet_3": node("closet_3", "General", 3, summary="", drawer_count=2)},
        "drawers": drawers,
        "entities": {e: node(e, name, 6, entity_type="person", description=name)
                     for e, name in (("entity_6", "Einstein"), ("entity_7", "Bern"))},
        "relationships": [{"id": "rel_8", "subject": "entity_6", "predicate": "lived_in",
                           "object": "entity_7", "confidence": 0.8,
                           "valid_from": "1902-06-23T00:00:00+00:00", "valid_to": None,
                           "observed_at": at(8), "invalidated_at": None,
                           "statement_type": "fact"}],
        "parent_map": {"room_2": "wing_1", "closet_3": "room_2", "drawer_4": "closet_3",
                       "drawer_5": "closet_3"},
        "edge_pheromones": {"wing_1:room_2": {"success": 0.4, "traversal": 1.0,
                                              "recency": 0.9}},
        "edge_costs": {"wing_1:room_2": {"base_cost": 0.3, "current_cost": 0.25}},
        "similarity_edges": {"drawer_4:drawer_5": 0.42}, "halls": {}, "tunnels": {},
        "agents": {"agent_9": {"id": "agent_9", "name": "Curie", "domain": "physics",
                               "focus": "explorer", "goal_embedding": emb, "temperature": 1.0,
                               "diary": "[2026-01-05 10:00] Visited Physics.",
                               "created_at": at(9)}},
        "next_id": 10, "schema_initialized": True}}


def _graphpalace_specific(rng: random.Random, doc: Any) -> str:
    data = doc["data"]
    how = rng.choice(["cycle", "orphan", "self-parent", "object-id", "time", "confidence"])
    if how == "cycle":
        data["parent_map"]["wing_1"] = "closet_3"
    elif how == "orphan":
        data["parent_map"]["drawer_4"] = "closet_99"
    elif how == "self-parent":
        data["parent_map"]["room_2"] = "room_2"
    elif how == "object-id":
        data["parent_map"]["drawer_5"] = rng.choice([{"id": "closet_3"}, ["closet_3"], 3])
    elif how == "time":
        data["drawers"]["drawer_4"]["created_at"] = rng.choice(
            ["99999-01-01T00:00:00Z", "1e400", 1e40, 10**400])
    else:
        data["relationships"][0]["confidence"] = rng.choice([float("nan"), 10**400, -1, 2])
    return f"graphpalace-{how}"


def _graphpalace(rng: random.Random) -> tuple[str, Any]:
    doc = _graphpalace_source()
    label = (_graphpalace_specific(rng, doc) if rng.random() < 0.4
             else _mutate(rng, doc, DOCUMENT_MUTATIONS))
    data = _dumps(doc).encode()
    if rng.random() < 0.1:
        data = data[: rng.randrange(len(data))]
        label += "; truncate"
    return label, {"name": "palace-export.json", "data": data}


# -- folders -----------------------------------------------------------------------------------

HOSTILE_GLOBS = ["[z-a]", "a*" * 22 + "b", "**/**/**/*", "\\", "!", "[", "[!]", "***", "/",
                 "*.md", "docs/", "!keep.md", "[[:alpha:]]", "a" * 5000, "**", "#comment",
                 " ", "\\!x", "x/**/y", "?" * 300]


def _folder(rng: random.Random) -> tuple[str, Any]:
    """Return (label, spec): files as relative path -> bytes (None: a symlink to '.'),
    plus include/exclude globs."""
    files: dict[Any, bytes | None] = {}
    block = ("Traceback (most recent call last):\n  File 'x.py', line 1\nValueError: no\n" * 30)
    labels = []
    for i in range(rng.randint(1, 5)):
        kind = rng.choice(["repeat", "crlf", "bom", "binary", "latin1", "mixed", "empty",
                           "long-line"])
        labels.append(kind)
        text = {"repeat": block * rng.choice([1, 4]),
                "crlf": "line one\r\nline two\r\n" * 200,
                "bom": "\ufeffhello with a byte order mark\n",
                "mixed": "a\nb\r\nc\rd\n" * 500,
                "long-line": "word " * 5000,
                "empty": ""}.get(kind)
        if kind == "binary":
            data = b"\x00\x01binary" * 100
        elif kind == "latin1":
            data = "caf\xe9 cr\xe8me\n".encode("latin-1") * 50
        else:
            data = (text or "").encode("utf-8")
        files[f"d{i % 2}/f{i}.md"] = data
    extra = rng.choice(["gitignore", "deep", "badname", "loop", "exclude", "none"])
    labels.append(extra)
    include: list[str] = []
    exclude: list[str] = []
    if extra == "gitignore":
        files[".gitignore"] = "\n".join(rng.sample(HOSTILE_GLOBS, 3)).encode()
    elif extra == "deep":
        depth = rng.choice([40, 1100])
        files["/".join(["n"] * depth) + "/deep.md"] = b"at the bottom\n"
        labels[-1] = f"deep {depth}"
    elif extra == "badname":
        files[b"bad\xff\xfename.md"] = b"a file whose name is not UTF-8\n"
    elif extra == "loop":
        files["loop"] = None
    elif extra == "exclude":
        exclude = rng.sample(HOSTILE_GLOBS, 2)
        if rng.random() < 0.5:
            include = rng.sample(HOSTILE_GLOBS, 1)
    return ", ".join(labels), {"files": files, "include": include, "exclude": exclude}


GENERATORS: dict[str, Callable[[random.Random], tuple[str, Any]]] = {
    "palace-document": _palace_document, "palace-text": _palace_text, "chats": _chats,
    "graphpalace": _graphpalace, "folder": _folder}


def generate(family: str, seed: int, index: int) -> Case:
    """Return input ``index`` of ``family`` for ``seed``: the same on every run and machine.
    Cost: a deep copy of the base palace file (palace families) or a few KB of data."""
    rng = random.Random(f"{seed}:{family}:{index}")
    mutation, payload = GENERATORS[family](rng)
    return Case(family, index, mutation, payload)


# -- running one input -----------------------------------------------------------------------------

def run_case(case: Case) -> Result:
    """Run ``case`` against a fresh palace in this process and return its Result (a hang is
    the caller's to catch: see :func:`run`). Never raises for what the input does."""
    start = time.perf_counter()
    result = Result(case.family, case.index, case.mutation, "accepted")
    try:
        RUNNERS[case.family](case, result)
    except PalazzoError as err:
        result.outcome, result.detail = "error", f"{err.code}: {_line(err)}"
    except Exception as err:  # noqa: BLE001 - what the fuzz is looking for
        result.outcome = "traceback"
        frames = traceback.extract_tb(err.__traceback__)
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else "?"
        result.detail = f"{type(err).__name__} at {where}: {_line(err)}"
    result.seconds = round(time.perf_counter() - start, 4)
    return result


def _line(err: BaseException) -> str:
    text = str(err).splitlines()[0] if str(err) else ""
    return text[:300]


def _run_palace(case: Case, result: Result) -> None:
    from palazzo.formats.palacefile import export_palace, parse

    target = fresh_palace()
    before = export_palace(target, exported_at=0.0)
    try:
        if isinstance(case.payload, bytes):
            call(target, "import", {"document": parse(case.payload), "reindex": False})
        elif isinstance(case.payload, str):
            call(target, "import", {"text": case.payload, "reindex": False})
        else:
            call(target, "import", {"document": case.payload, "reindex": False})
    except BaseException:
        result.changed = export_palace(target, exported_at=0.0) != before
        raise
    result.problems = palace_problems(target)


def palace_problems(palace: Any) -> list[str]:
    """Return the invariants ``palace`` (just imported) breaks: its export must import into
    a fresh palace and export the same, every drawer id must be the id of its content, and
    reading it must raise nothing but PalazzoErrors. Cost: one export and import, a search."""
    from palazzo.core.model import drawer_id
    from palazzo.formats.palacefile import export_palace

    problems = []
    s = palace.drawers
    for r in s.live_rows():
        r = int(r)
        if s.ids[r] != drawer_id(s.content[r], s.wing[r], s.room[r], s.key[r]):
            problems.append(f"drawer {s.ids[r]} does not have the id of its content")
            break
    reads: list[tuple[str, dict[str, Any]]] = [
        ("palace_status", {}), ("get_taxonomy", {}), ("list_wings", {}),
        ("search", {"query": "recall notes"}), ("kg_stats", {}), ("list_conversations", {}),
        ("export_graph", {"format": "d3"}), ("pheromone_status", {}), ("list_agents", {})]
    reads += [("diary_read", {"agent": a.name}) for a in palace.agents.values()]
    for name, args in reads:
        try:
            json.dumps(call(palace, name, args), allow_nan=False)
        except PalazzoError:
            pass
        except Exception as err:  # noqa: BLE001 - an accepted file must be readable
            problems.append(f"{name} raised {type(err).__name__}: {_line(err)}")
    try:
        doc = export_palace(palace, exported_at=1.0)
        again = fresh_palace()
        call(again, "import", {"document": copy.deepcopy(doc), "reindex": False})
        if export_palace(again, exported_at=1.0) != doc:
            problems.append("export, import, export is not the same document")
    except Exception as err:  # noqa: BLE001 - PalazzoErrors too: it must round-trip
        problems.append(f"round trip raised {type(err).__name__}: {_line(err)}")
    return problems


def _run_chats(case: Case, result: Result) -> None:
    from palazzo.importers.chats import plan_chats

    _run_file(plan_chats, case, result)


def _run_graphpalace(case: Case, result: Result) -> None:
    from palazzo.importers.graphpalace import plan_graphpalace

    _run_file(plan_graphpalace, case, result)


def _run_file(plan_file: Callable[[Path], Any], case: Case, result: Result) -> None:
    """Write the input file, plan its import as the CLI does and apply the plan."""
    from palazzo.formats.palacefile import export_palace
    from palazzo.importers import apply

    with tempfile.TemporaryDirectory(prefix="palazzo-fuzz-") as tmp:
        path = Path(tmp) / case.payload["name"]
        path.write_bytes(case.payload["data"])
        target = fresh_palace()
        before = export_palace(target, exported_at=0.0)
        try:
            plan = plan_file(path)
        except BaseException:
            result.changed = export_palace(target, exported_at=0.0) != before
            raise
        apply(plan, bind(target))


def _run_folder(case: Case, result: Result) -> None:
    from palazzo.formats.palacefile import export_palace
    from palazzo.importers import apply
    from palazzo.importers.folder import plan_index

    spec = case.payload
    tmp = tempfile.mkdtemp(prefix="palazzo-fuzz-", dir=_MEMORY_DIR if os.access(
        _MEMORY_DIR, os.W_OK) else None)
    try:
        root = Path(tmp) / "notes"
        root.mkdir()
        for rel, data in spec["files"].items():
            path = os.path.join(os.fsencode(root), rel if isinstance(rel, bytes)
                                else os.fsencode(rel))
            _make_folders(os.path.dirname(path))
            if data is None:
                os.symlink(".", path)
            else:
                with open(path, "wb") as f:
                    f.write(data)
        target = fresh_palace()
        for _ in range(2):  # the second run meets the palace the first one made
            before = export_palace(target, exported_at=0.0)
            try:
                plan = plan_index(root, wing="notes", include=spec["include"] or None,
                                  exclude=spec["exclude"] or None, palace=target)
            except BaseException:
                result.changed = export_palace(target, exported_at=0.0) != before
                raise
            apply(plan, bind(target))
    finally:
        _remove_tree(os.fsencode(tmp))


RUNNERS: dict[str, Callable[[Case, Result], None]] = {
    "palace-document": _run_palace, "palace-text": _run_palace, "chats": _run_chats,
    "graphpalace": _run_graphpalace, "folder": _run_folder}


# Folders 1,100 deep take seconds to make and delete on a disk, milliseconds in memory.
_MEMORY_DIR = "/dev/shm"


def _make_folders(path: bytes) -> None:
    """Create ``path`` and its missing parents one level at a time, each relative to the one
    above it (``os.makedirs`` recurses once a level, and a path of 1,100 folders resolved
    from the root for every one of them costs seconds). Changes the working directory
    only while it runs."""
    here = os.getcwd()
    try:
        os.chdir(b"/")
        for part in path.strip(b"/").split(b"/"):
            if not os.path.isdir(part):
                os.mkdir(part)
            os.chdir(part)
    finally:
        os.chdir(here)


def _remove_tree(root: bytes) -> None:
    """Delete the folder ``root`` and everything in it, deepest first, without recursion
    and moving one level at a time (``shutil.rmtree`` recurses once a level); symbolic
    links are removed, never followed. Changes the working directory only while it runs."""
    here = os.getcwd()
    try:
        os.chdir(root)
        depth = 0
        while True:
            sub = None
            with os.scandir(".") as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        sub = entry.name
                    else:
                        os.unlink(entry.name)
            if sub is not None:
                os.chdir(sub)
                depth += 1
                continue
            if depth == 0:
                break
            name = os.path.basename(os.getcwd())
            os.chdir("..")
            os.rmdir(name)
            depth -= 1
        os.chdir(here)
        os.rmdir(root)
    finally:
        os.chdir(here)


# -- running many, with a watchdog ---------------------------------------------------------------

def _worker(conn: Any, seed: int) -> None:
    """Worker process: run the (family, index) inputs the parent sends, reply with Results."""
    _limit_memory()
    while True:
        job = conn.recv()
        if job is None:
            return
        family, index = job
        try:
            case = generate(family, seed, index)
        except Exception as err:  # noqa: BLE001 - a bug of the fuzz, reported as one
            conn.send(asdict(Result(family, index, "(generator failed)", "traceback",
                                    f"the generator raised {type(err).__name__}: {err}")))
            continue
        conn.send(asdict(run_case(case)))


def _limit_memory(extra: int = 3 << 30) -> None:
    """Cap the worker's address space (what it has now plus ``extra`` bytes), so an input
    that makes memory grow fails with MemoryError instead of taking the machine with it."""
    try:
        import resource

        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[0])
        now = pages * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (now + extra, now + extra))
    except (ImportError, OSError, ValueError):
        pass  # no /proc or no rlimits here: the time limit still ends a runaway input


class _Pool:
    """One worker process, replaced when an input hangs it or kills it."""

    def __init__(self, seed: int) -> None:
        methods = multiprocessing.get_all_start_methods()
        self.ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        self.seed = seed
        self.proc: Any = None
        self.conn: Any = None

    def _start(self) -> None:
        self.conn, child = self.ctx.Pipe()
        self.proc = self.ctx.Process(target=_worker, args=(child, self.seed), daemon=True)
        self.proc.start()
        child.close()

    def run(self, family: str, index: int, timeout: float) -> dict[str, Any] | str:
        """Return the Result dict of one input, or "hang"/"died: …" when the worker did
        not answer within ``timeout`` seconds or exited."""
        if self.proc is None or not self.proc.is_alive():
            self._start()
        self.conn.send((family, index))
        answered = False
        try:
            answered = self.conn.poll(timeout)
            if answered:
                return self.conn.recv()
        except (EOFError, OSError):
            pass  # the worker is gone: it closed its end of the pipe
        code = self.stop()
        return f"the worker died (exit code {code})" if answered else "hang"

    def stop(self) -> int | None:
        """End the worker (killed if it still runs); return its exit code."""
        code = None
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
            code = self.proc.exitcode
        if self.conn is not None:
            self.conn.close()
        self.proc = self.conn = None
        return code

    def close(self) -> None:
        if self.proc is not None and self.proc.is_alive():
            with contextlib.suppress(OSError):
                self.conn.send(None)
            self.proc.join(5)
        self.stop()


def cases(count: int, families: tuple[str, ...] = FAMILIES) -> Iterator[tuple[str, int]]:
    """Yield ``count`` (family, index) pairs, the families taking turns."""
    for i in range(count):
        yield families[i % len(families)], i // len(families)


def run(count: int, seed: int = 0, families: tuple[str, ...] = FAMILIES,
        timeout: float = TIMEOUT, progress: Callable[[int, int], None] | None = None
        ) -> dict[str, Any]:
    """Run ``count`` inputs (the families taking turns) in a worker process and return the
    report: counts by family and outcome, failed imports that changed the palace, accepted
    inputs that broke an invariant, PalazzoError codes, and every input that did not end
    cleanly (family, index, mutation, outcome, detail) so it can be replayed with
    :func:`generate` and :func:`run_case`. Cost: about ``count`` × 20 ms, plus ``timeout``
    for each hang."""
    unknown = sorted(set(families) - (set(GENERATORS) & set(RUNNERS)))
    if unknown:
        raise PalazzoError(f"unknown fuzz families: {', '.join(unknown)} (known: "
                           f"{', '.join(GENERATORS)})")
    pool = _Pool(seed)
    counts = {f: Counter({o: 0 for o in OUTCOMES}) for f in families}
    changed: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    codes: Counter[str] = Counter()
    findings: list[dict[str, Any]] = []
    start = time.perf_counter()
    try:
        for done, (family, index) in enumerate(cases(count, families), start=1):
            answer = pool.run(family, index, timeout)
            if isinstance(answer, str):
                try:
                    mutation = generate(family, seed, index).mutation
                except Exception as err:  # noqa: BLE001 - the report still names the input
                    mutation = f"(not regenerated: {type(err).__name__})"
                outcome = "hang" if answer == "hang" else "traceback"
                answer = asdict(Result(family, index, mutation, outcome,
                                       f"over {timeout:g} s" if outcome == "hang" else answer))
            counts[family][answer["outcome"]] += 1
            if answer["outcome"] == "error":
                codes[answer["detail"].split(":", 1)[0]] += 1
            changed[family] += answer["changed"]
            broken[family] += bool(answer["problems"])
            if answer["outcome"] in ("traceback", "hang") or answer["changed"] or \
                    answer["problems"]:
                findings.append(answer)
            if progress is not None:
                progress(done, count)
    finally:
        pool.close()
    return {
        "benchmark": "fuzz",
        "seed": seed,
        "count": count,
        "timeout_seconds": timeout,
        "seconds": round(time.perf_counter() - start, 2),
        "families": {f: {**counts[f], "changed": changed[f], "invariant": broken[f]}
                     for f in families},
        "totals": {**{o: sum(c[o] for c in counts.values()) for o in OUTCOMES},
                   "changed": sum(changed.values()), "invariant": sum(broken.values())},
        "error_codes": dict(codes.most_common()),
        "findings": findings,
    }
