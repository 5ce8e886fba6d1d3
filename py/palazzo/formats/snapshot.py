"""The binary, columnar palace snapshot: how a palace lies on disk (and in OPFS/IndexedDB).

The palace JSON (:mod:`palazzo.formats.palacefile`) is the exchange format: validated field by
field, readable anywhere, and slow to open at real size (every drawer re-tokenised, every edge
added one by one). A snapshot is the palace as it lives in memory: every per-drawer and
per-edge column is an array written as its bytes, texts are one UTF-8 block with offsets, and
derived structures (the BM25 postings and their term-major layout, the chunk table) are stored,
not recomputed. Opening is mapping buffers: the palace's arrays are views of the file's bytes
(:meth:`~palazzo.persist.storage.DirectorySpace.load` maps them copy-on-write), drawer texts
are decoded when first read, edge adjacency is built when first walked, and the knowledge
graph, conversations, provenance and diaries are parsed when first used. A command on a
100,000-drawer palace reads what it needs, not the whole palace.

Layout (little-endian)::

    magic   8 bytes  b"PZSNAP\x00\x01"
    prefix  u64 length of the meta JSON, u32 CRC-32 of every byte after the prefix
    meta    JSON: {"version", "arrays": {name: [dtype, shape, offset, nbytes]}, "palace": {…},
            "store": {…}}
    pad     to a multiple of 8
    arrays  each at its offset (from the start of this area), 8-byte aligned
    pages   (version 3) u32 CRC-32s: the meta with its padding, then every 4 KiB page of
            each array in the meta's order
    trailer (version 3) u64 offset of the pages, u64 length of the meta, u32 CRC-32 of the
            pages and these 16 bytes, b"PZPT"

``meta["palace"]`` holds what is small or tree-shaped: name, settings, wings, rooms, closets,
entities, agents, the value tables of the repeated drawer columns (wing, room, closet,
source, source file), edge properties, the tunnel proposals and the query trails (left out
by snapshots written before them, which read as none); the node pheromones of
wings, rooms, closets and entities are arrays ``n.*`` (left out by snapshots written before
them, which read as none). The knowledge-graph, conversation, provenance and
diary sections are byte arrays ``s.<name>`` of their palace-JSON form (version 2; version 1,
still read, held them in the header), stored again as they were read when never used.
``meta["store"]`` is what the persistence layer keeps beside the palace (the journal record
the snapshot holds up to).

**Damage is found where it is.** Version 3 checks each 4 KiB page of each array on its own
(the pages and the trailer at the end, found from the end of the file), so a damaged page
names the array and the bytes it hit: :func:`open_snapshot` raises
:class:`~palazzo.errors.SnapshotDamaged` carrying what still verifies (``partial``), from
which :mod:`palazzo.formats.salvage` rebuilds the palace around the damage when nothing
better is at hand. The CRC-32 over the whole file stays in the prefix for older palazzo
versions, which then see a whole snapshot of a version they do not read (and open the palace
read-only) instead of a damaged one; :func:`whole` checks it.

A snapshot is the store's own file, checked by its CRCs: it is not validated field by field
like an imported file (a damaged one is refused, and boot falls back as for any damaged
snapshot). Writing is O(drawers + edges + postings) plus two CRC-32 passes; opening is a
CRC-32 over the file, page by page, plus O(drawers + edges) for ids, names and edge ends.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from palazzo.core.columns import (
    DRAWER_FLOATS,
    EDGE_FLOATS,
    NODE_FLOATS,
    ChunkTable,
    DrawerStore,
    EdgeTable,
    NodeTable,
    TextColumn,
    join_texts,
)
from palazzo.core.model import Agent, Closet, EdgeKind, Entity, Later, Room, Wing, room_id
from palazzo.errors import ImportRejected, SnapshotDamaged
from palazzo.memory.conversation import Conversations
from palazzo.memory.diary import Diaries
from palazzo.memory.kg import KnowledgeGraph
from palazzo.provenance.kernel import Provenance
from palazzo.retrieval.bm25 import BM25Index, Tokenizer
from palazzo.stigmergy.trails import QueryTrails
from palazzo.stigmergy.tunnels import TunnelProposals

MAGIC = b"PZSNAP\x00\x01"
PREFIX = struct.Struct("<8sQI")
TRAILER = struct.Struct("<QQI4s")
TRAILER_MAGIC = b"PZPT"
PAGE = 4096
VERSION = 3
# Version 1 held the sections in the header; 2 holds them as byte arrays; 3 adds the pages.
READS = (1, 2, 3)
# The parts of a palace kept as JSON (their palace-JSON form), read when first used.
SECTIONS = ("kg", "conversations", "provenance", "diaries")
ALIGN = 8
KINDS = [k.value for k in EdgeKind]
KIND_CODE = {k: i for i, k in enumerate(EdgeKind)}


def is_snapshot(data: bytes) -> bool:
    """Return whether ``data`` is a columnar snapshot: it starts with the magic, or ends with
    version 3's trailer (so a damaged first page still reads as one)."""
    return data[: len(MAGIC)] == MAGIC or (
        len(data) >= PREFIX.size + TRAILER.size and data[-4:] == TRAILER_MAGIC)


# -- the container ----------------------------------------------------------------------------

def _page_crcs(raw: memoryview) -> list[int]:
    """Return the CRC-32 of each 4 KiB page of ``raw``. Cost: one CRC pass."""
    return [zlib.crc32(raw[i:i + PAGE]) for i in range(0, len(raw), PAGE)]


def parts(meta: dict[str, Any], arrays: dict[str, np.ndarray],
          store: dict[str, Any] | None = None) -> list[memoryview]:
    """Return the snapshot of ``meta`` (JSON-able) and the named ``arrays`` as the byte
    pieces of the file, in order: prefix, header, each array (views, not copies) and its
    padding, the pages and the trailer. Written one after the other they are the file, so a
    space can write a snapshot without ever holding it whole. ``store`` is what the store
    keeps beside the palace (the journal sequence number the snapshot holds up to). Cost:
    two CRC-32 passes over the arrays (the pages, the whole file); nothing is copied."""
    table: dict[str, list[Any]] = {}
    pieces: list[memoryview] = []
    pages: list[int] = []
    offset = 0
    for name, array in arrays.items():
        array = np.ascontiguousarray(array)
        table[name] = [array.dtype.str, list(array.shape), offset, array.nbytes]
        raw = memoryview(array.reshape(-1).view(np.uint8))
        pieces.append(raw)
        pages += _page_crcs(raw)
        pad = -array.nbytes % ALIGN
        if pad:
            pieces.append(memoryview(b"\x00" * pad))
        offset += array.nbytes + pad
    head = json.dumps({"version": VERSION, "arrays": table, "palace": meta,
                       **({"store": store} if store is not None else {})},
                      ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
    head += b" " * (-(PREFIX.size + len(head)) % ALIGN)
    table_bytes = np.asarray([zlib.crc32(head), *pages], dtype="<u4").tobytes()
    at = PREFIX.size + len(head) + offset
    ends = struct.pack("<QQ", at, len(head))
    trailer = TRAILER.pack(at, len(head), zlib.crc32(ends, zlib.crc32(table_bytes)),
                           TRAILER_MAGIC)
    crc = zlib.crc32(head)
    for piece in (*pieces, table_bytes, trailer):
        crc = zlib.crc32(piece, crc)
    prefix = PREFIX.pack(MAGIC, len(head), crc)
    return [memoryview(prefix), memoryview(head), *pieces, memoryview(table_bytes),
            memoryview(trailer)]


def joined(pieces: list[memoryview] | list[bytes]) -> bytearray:
    """Return ``pieces`` one after the other in one new buffer, each copied once into it.

    Why not ``bytearray(b"".join(pieces))``: that holds the file twice at once (the joined
    bytes, then the buffer copied from them), and in the browser a WebAssembly memory keeps
    its high-water mark for good: with one copy, the tab rose 109–157 MB less at each of a
    20k palace's compactions (``tests/bench/import_scale.py``, docs/browser.md). Cost: one
    copy."""
    views = [memoryview(p).cast("B") for p in pieces]
    out = bytearray(sum(v.nbytes for v in views))
    into = memoryview(out)
    at = 0
    for v in views:
        into[at:at + v.nbytes] = v
        at += v.nbytes
    into.release()
    return out


def pack(meta: dict[str, Any], arrays: dict[str, np.ndarray],
         store: dict[str, Any] | None = None) -> bytearray:
    """Return the snapshot bytes of ``meta`` and ``arrays`` in one buffer (:func:`parts`
    joined). Cost: one copy of every array."""
    return joined(parts(meta, arrays, store))


@dataclass(slots=True)
class Opened:
    """A snapshot's parts once its checksums verified: the palace meta, the named arrays
    (views into the file's bytes) and what the store kept beside the palace (``{}`` in
    snapshots written before it kept anything). In a damaged snapshot's ``partial``,
    ``bad`` maps each array with damaged pages to the byte ranges (from the array's start)
    that failed, and ``prefix`` says the first 20 bytes are damaged."""

    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]
    store: dict[str, Any]
    bad: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    prefix: bool = False


def _trailer(data: Any) -> tuple[int, int, np.ndarray] | None:
    """Return (where the pages start, the meta's length, the page CRCs) when ``data`` ends
    with a version-3 trailer that verifies, else None."""
    n = len(data)
    if n < PREFIX.size + TRAILER.size or bytes(data[-4:]) != TRAILER_MAGIC:
        return None
    at, head_len, crc, _ = TRAILER.unpack_from(data, n - TRAILER.size)
    end = n - TRAILER.size
    if not PREFIX.size <= at <= end or (end - at) % 4 or head_len > at - PREFIX.size:
        return None
    view = memoryview(data)
    if zlib.crc32(view[end:end + 16], zlib.crc32(view[at:end])) != crc:
        return None
    return at, head_len, np.frombuffer(view[at:end], dtype="<u4")


def whole(data: Any) -> bool:
    """Return whether the CRC-32 of the prefix matches every byte after it (what a palazzo
    before version 3 checks). Cost: one CRC pass."""
    if len(data) < PREFIX.size:
        return False
    return zlib.crc32(memoryview(data)[PREFIX.size:]) == PREFIX.unpack_from(data)[2]


def open_snapshot(data: bytes | bytearray | Any) -> Opened:
    """Return the parts of a snapshot; raise :class:`SnapshotDamaged` when the bytes are not a
    whole one (for version 3, carrying ``partial``: what still verifies, when its meta and
    pages do), and ImportRejected for a whole one of a version this palazzo does not read.

    The arrays are views into ``data``, writable when ``data`` is (:func:`read_snapshot`
    keeps them as the palace's own arrays). Cost: a CRC-32 over the file, page by page;
    nothing is copied."""
    found = _trailer(data)
    if found is None:
        return _open_whole(data)
    at, head_len, pages = found
    view = memoryview(data)
    head_bytes = view[PREFIX.size:PREFIX.size + head_len]
    if zlib.crc32(head_bytes) != int(pages[0]):
        raise SnapshotDamaged("the snapshot's header is damaged")
    head = _head(head_bytes)
    arrays: dict[str, np.ndarray] = {}
    bad: dict[str, list[tuple[int, int]]] = {}
    k = 1
    for name, (dtype, shape, offset, nbytes) in head["arrays"].items():
        start = PREFIX.size + head_len + offset
        if start + nbytes > at or k + -(-nbytes // PAGE) > len(pages):
            raise SnapshotDamaged(f"array {name!r} runs past the end of the snapshot")
        for i in range(0, nbytes, PAGE):
            if zlib.crc32(view[start + i:start + min(i + PAGE, nbytes)]) != int(pages[k]):
                bad.setdefault(name, []).append((i, min(i + PAGE, nbytes)))
            k += 1
        arrays[name] = np.frombuffer(view, dtype=dtype, count=nbytes // np.dtype(
            dtype).itemsize, offset=start).reshape(shape)
    damaged_prefix = bytes(view[:len(MAGIC)]) != MAGIC or PREFIX.unpack_from(data)[1] != head_len
    opened = Opened(head["palace"], arrays, head.get("store") or {}, bad, damaged_prefix)
    if bad or damaged_prefix:
        where = ", ".join(f"{len(r)} of {name}" for name, r in bad.items())
        raise SnapshotDamaged(f"pages fail their checksums ({where})" if where else
                              "its first bytes are damaged", partial=opened)
    return opened


def _head(raw: Any) -> dict[str, Any]:
    try:
        head = json.loads(bytes(raw))
    except ValueError as err:
        raise SnapshotDamaged(f"the snapshot's header is not JSON: {err}") from None
    if head.get("version") not in READS:  # whole, but from another palazzo: not damage
        raise ImportRejected(f"snapshot version {head.get('version')!r} is not read here "
                             f"(this palazzo reads versions up to {VERSION})")
    return head


def _open_whole(data: Any) -> Opened:
    """Open a snapshot checked by its one CRC (versions 1 and 2)."""
    if len(data) < PREFIX.size or data[:len(MAGIC)] != MAGIC:
        raise SnapshotDamaged("not a columnar palace snapshot")
    _, head_len, crc = PREFIX.unpack_from(data)
    if PREFIX.size + head_len > len(data):
        raise SnapshotDamaged("the snapshot is shorter than its header says")
    buffer = memoryview(data)[PREFIX.size:]
    if zlib.crc32(buffer) != crc:
        raise SnapshotDamaged("the snapshot's checksum does not match (a torn or damaged file)")
    head = _head(buffer[:head_len])
    arrays = {}
    for name, (dtype, shape, offset, nbytes) in head["arrays"].items():
        start = head_len + offset
        if start + nbytes > len(buffer):
            raise SnapshotDamaged(f"array {name!r} runs past the end of the snapshot")
        count = nbytes // np.dtype(dtype).itemsize
        arrays[name] = np.frombuffer(buffer, dtype=dtype, count=count,
                                     offset=start).reshape(shape)
    return Opened(head["palace"], arrays, head.get("store") or {})


def unpack(data: bytes | bytearray) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Return (the palace meta, the named arrays) of a snapshot (:func:`open_snapshot`)."""
    opened = open_snapshot(data)
    return opened.meta, opened.arrays


# -- text columns -----------------------------------------------------------------------------

def _texts(values: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Return (byte offsets, UTF-8 block) of a list of texts. O(total length)."""
    return join_texts([v.encode("utf-8") for v in values])


def _read_texts(offsets: np.ndarray, block: np.ndarray) -> list[str]:
    """Return the texts of :func:`_texts`' output. O(total length)."""
    raw = block.tobytes()
    at = offsets.tolist()
    return [raw[a:b].decode("utf-8") for a, b in zip(at[:-1], at[1:], strict=False)]


def _codes(values: list[Any]) -> tuple[np.ndarray, list[Any]]:
    """Return (int32 codes, the distinct values in first-seen order) of a column whose values
    repeat (wings, rooms, node ids). O(len(values))."""
    table: dict[Any, int] = {}
    codes = np.fromiter((table.setdefault(v, len(table)) for v in values), dtype=np.int32,
                        count=len(values))
    return codes, list(table)


# -- writing ----------------------------------------------------------------------------------

def write_snapshot(palace: Any) -> bytearray:
    """Return the snapshot bytes of ``palace`` (everything :func:`read_snapshot` needs to
    give back the same palace) in one buffer. Cost: :func:`snapshot_parts` plus the copy."""
    return joined(snapshot_parts(palace))


def snapshot_parts(palace: Any, store: dict[str, Any] | None = None) -> list[memoryview]:
    """Return the snapshot of ``palace`` as the file's byte pieces (:func:`parts`): what a
    store writes, holding only the encoded texts and index arrays besides the palace
    (``store``: what the store keeps beside it, read back as :attr:`Opened.store`).
    Cost: O(drawers + edges + postings · log postings)."""
    arrays: dict[str, np.ndarray] = {}
    meta: dict[str, Any] = {
        "name": palace.name, "created_at": palace.created_at, "seed": palace.seed,
        "settings": {"similar_threshold": palace.similar_threshold,
                     "similar_limit": palace.similar_limit, "chunk_size": palace.chunk_size},
        "wings": [[w.name, w.description, w.created_at] for w in palace.wings.values()],
        "rooms": [[r.wing, r.name, r.description, r.created_at,
                   *([r.source] if r.source else [])] for r in palace.rooms.values()],
        "closets": [[c.wing, c.room, c.name, c.summary, c.created_at]
                    for c in palace.closets.values()],
        "entities": [[e.id, e.name, e.type, e.properties] for e in palace.entities.values()],
        "agents": [[a.id, a.name, a.focus, a.archetype, a.created_at, a.state]
                   for a in palace.agents.values()],
        "drawers": _drawers(palace.drawers, arrays),
        "edges": _edges(palace.edges, arrays),
        "bm25": _bm25(palace.text_index, arrays),
        "tunnel_proposals": palace.tunnel_proposals.to_json(),
        "trails": palace.trails.to_json(),
    }
    _node_pheromones(palace.node_pheromones, arrays)
    for name in SECTIONS:
        arrays[f"s.{name}"] = _section(palace, name)
    return parts(meta, arrays, store)


def _section(palace: Any, name: str) -> np.ndarray:
    """Return section ``name`` of ``palace`` as the UTF-8 bytes of its palace-JSON form: the
    bytes it was read from when it was never made since (nothing to encode), else encoded
    now. Cost: O(section) for one that was made; none otherwise."""
    later = palace.unread(name)
    if later is not None and later.raw is not None:
        return np.frombuffer(later.raw, dtype=np.uint8)
    value = getattr(palace, name).to_json()
    return np.frombuffer(json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                                    allow_nan=False).encode(), dtype=np.uint8)


def _drawers(s: DrawerStore, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    n = s.size
    arrays["d.alive"] = s.alive[:n]
    arrays["d.has_vector"] = s.has_vector[:n]
    arrays["d.vectors"] = s.vectors[:n]
    for name in DRAWER_FLOATS:
        arrays[f"d.{name}"] = s.columns[name][:n]
    arrays["d.free"] = np.asarray(s.free, dtype=np.int64)
    for name in ("ids", "content", "key"):
        column = getattr(s, name)
        arrays[f"d.{name}.offsets"], arrays[f"d.{name}.block"] = (
            column.encoded() if isinstance(column, TextColumn)
            else _texts([v or "" for v in column]))
    tables = {}
    for name in ("wing", "room", "closet", "source", "source_file"):
        arrays[f"d.{name}"], tables[name] = _codes(getattr(s, name))
    c = s.chunks
    m = c.size
    arrays["c.vectors"] = c.vectors[:m]
    arrays["c.drawer_row"] = c.drawer_row[:m].astype(np.int64)
    arrays["c.alive"] = c.alive[:m]
    arrays["c.kind"] = c.kind[:m]
    arrays["c.free"] = np.asarray(c.free, dtype=np.int64)
    rows = list(c.of_row)
    arrays["c.of_row.rows"] = np.asarray(rows, dtype=np.int64)
    arrays["c.of_row.counts"] = np.asarray([len(c.of_row[r]) for r in rows], dtype=np.int64)
    arrays["c.of_row.slots"] = np.asarray([x for r in rows for x in c.of_row[r]],
                                          dtype=np.int64)
    return {"dim": s.dim, "fingerprint": s.fingerprint, "embedder": s.embedder_name,
            "tables": tables, "aliases": s.aliases}


def _edges(e: EdgeTable, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    n = len(e.kind)
    arrays["e.alive"] = e.alive[:n]
    for name in EDGE_FLOATS:
        arrays[f"e.{name}"] = e.columns[name][:n]
    arrays["e.kind"] = np.fromiter((KIND_CODE[k] for k in e.kind), dtype=np.int8, count=n)
    codes, nodes = _codes([*e.src, *e.dst])
    arrays["e.src"], arrays["e.dst"] = codes[:n], codes[n:]
    arrays["e.nodes.offsets"], arrays["e.nodes.block"] = _texts(nodes)
    return {"kinds": KINDS, "props": {str(i): p for i, p in enumerate(e.props) if p}}


def _node_pheromones(table: NodeTable, arrays: dict[str, np.ndarray]) -> None:
    """Store the non-zero rows of the node pheromones of wings, rooms, closets and entities
    as ``n.ids`` (a text column) and one ``n.<pheromone>`` array each. O(rows)."""
    ids, columns = table.live()
    arrays["n.ids.offsets"], arrays["n.ids.block"] = _texts(ids)
    for name in NODE_FLOATS:
        arrays[f"n.{name}"] = columns[name]


def _bm25(index: BM25Index, arrays: dict[str, np.ndarray]) -> dict[str, Any]:
    state = index.state()
    scalars = {}
    for name, value in state.items():
        if isinstance(value, np.ndarray):
            arrays[f"t.{name}"] = value
        elif name == "vocab":
            arrays["t.vocab.offsets"], arrays["t.vocab.block"] = _texts(value)
        else:
            scalars[name] = value
    return scalars


# -- reading ----------------------------------------------------------------------------------

def _retokenised(palace: Any, old: BM25Index) -> BM25Index:
    """Return the text index of ``palace``'s drawers tokenised as BM25 now tokenises (an
    index saved before stemming is rebuilt when the palace opens; a writing store then saves
    it at once: :meth:`~palazzo.persist.palacestore.PalaceStore.boot`). Cost: tokenising every
    drawer once, about 3 s at 20k drawers (docs/benchmarks.md, "Stemming")."""
    new = BM25Index(old.k1, old.b, tokenizer=Tokenizer(old.tokenizer.stopwords))
    new.reserve(old.capacity)
    for row in palace.drawers.live_rows():
        new.add(int(row), palace.drawers.content[row])
    new.retokenised = True
    return new


def read_snapshot(data: bytes | bytearray | Any, make_palace: Callable[..., Any]) -> Any:
    """Return the palace a snapshot holds; raise :class:`SnapshotDamaged` for bytes that are
    not a whole snapshot.

    ``make_palace(name=…, seed=…, similar_threshold=…, similar_limit=…, chunk_size=…)``
    makes the empty palace, as for :func:`palazzo.formats.palacefile.read_palace`; vectors are
    kept only under their own embedder (the palace's has another fingerprint: they are
    dropped, for ``reindex``).

    The palace's arrays are views of ``data`` (which it then keeps alive): give a writable
    buffer of the caller's own (a ``bytearray``, a private mapping); read-only bytes are
    copied once first. Drawer texts are decoded when first read
    (:class:`~palazzo.core.columns.TextColumn`), edge adjacency is built when first walked,
    and the knowledge graph, conversations, provenance and diaries are parsed when first used
    (:class:`~palazzo.core.model.Later`). Cost: a CRC-32 over the file plus O(drawers +
    edges) for ids, names and edge ends; nothing is copied from a writable buffer.
    """
    if memoryview(data).readonly:
        data = bytearray(data)
    return palace_of(open_snapshot(data), make_palace)


def palace_of(opened: Opened, make_palace: Callable[..., Any]) -> Any:
    """Return the palace an opened snapshot holds (:func:`read_snapshot` after the checksum);
    the palace's arrays are the opened arrays. Cost: O(drawers + edges)."""
    meta, a = opened.meta, opened.arrays
    settings = meta["settings"]
    palace = make_palace(name=meta["name"], seed=meta["seed"],
                         similar_threshold=settings["similar_threshold"],
                         similar_limit=settings["similar_limit"],
                         chunk_size=settings["chunk_size"])
    palace.created_at = meta["created_at"]
    palace.wings = {w[0]: Wing(*w) for w in meta["wings"]}
    palace.rooms = {(r[0], r[1]): Room(*r) for r in meta["rooms"]}
    palace.closets = {(c[0], c[1], c[2]): Closet(*c) for c in meta["closets"]}
    palace.entities = {e[0]: Entity(*e) for e in meta["entities"]}
    palace.agents = {x[0]: Agent(*x) for x in meta["agents"]}
    palace.drawers = _read_drawers(meta["drawers"], a, palace.drawers)
    palace.edges = _read_edges(meta["edges"], a)
    if "n.ids.offsets" in a:  # snapshots before node pheromones of rooms have none
        palace.node_pheromones = NodeTable.from_columns(
            _read_texts(a["n.ids.offsets"], a["n.ids.block"]),
            {name: a[f"n.{name}"] for name in NODE_FLOATS})
    palace.tunnel_proposals = TunnelProposals.from_json(
        meta.get("tunnel_proposals", []), {room_id(*k) for k in palace.rooms},
        "snapshot.tunnel_proposals")
    palace.trails = QueryTrails.from_json(meta.get("trails", []), "snapshot.trails")
    bm25 = {name[2:]: value for name, value in a.items() if name.startswith("t.")}
    bm25["vocab"] = _read_texts(bm25.pop("vocab.offsets"), bm25.pop("vocab.block"))
    palace.text_index = BM25Index.from_state({**meta["bm25"], **bm25})
    if palace.text_index.tokenizer != Tokenizer(palace.text_index.tokenizer.stopwords):
        palace.text_index = _retokenised(palace, palace.text_index)
    for name in SECTIONS:
        raw = a.get(f"s.{name}")
        if raw is None and name in meta:  # version 1: the section is in the header
            setattr(palace, name, _make_section(palace, name, meta[name]))
        elif raw is not None:  # (none at all: salvage left a damaged one out, empty)
            setattr(palace, name, Later(_maker(palace, name, raw), memoryview(raw)))
    return palace


def _make_section(palace: Any, name: str, value: Any) -> Any:
    """Return section ``name`` made from its palace-JSON form ``value``: conversations as
    this palazzo wrote them (no checks: the file passed its checksum), the others through
    their readers."""
    where = f"snapshot.{name}"
    if name == "conversations":
        return Conversations.restore(palace, value)
    kinds = {"kg": KnowledgeGraph, "provenance": Provenance, "diaries": Diaries}
    return kinds[name].from_json(palace, value, where)


def _maker(palace: Any, name: str, raw: np.ndarray) -> Callable[[], Any]:
    def make() -> Any:
        try:
            value = json.loads(raw.tobytes())
        except ValueError as err:
            raise SnapshotDamaged(f"the snapshot's {name} section is not JSON: {err}") \
                from None
        return _make_section(palace, name, value)
    return make


def _view(array: np.ndarray, dtype: Any) -> np.ndarray:
    """Return ``array`` as ``dtype``: itself (a view of the snapshot) when it already is,
    else a converted copy (int64 indices on wasm32, where np.intp is int32)."""
    return array.astype(dtype, copy=False)


def _read_drawers(meta: dict[str, Any], a: dict[str, np.ndarray], made: DrawerStore
                  ) -> DrawerStore:
    n = len(a["d.alive"])
    s = DrawerStore(meta["dim"], capacity=1)
    s.size = n
    s.alive = _view(a["d.alive"], bool)
    s.has_vector = _view(a["d.has_vector"], bool)
    s.vectors = _view(a["d.vectors"], np.float32)
    s.columns = {name: _view(a[f"d.{name}"], np.float64) for name in DRAWER_FLOATS}
    s.free = a["d.free"].tolist()
    ids = _read_texts(a["d.ids.offsets"], a["d.ids.block"])
    alive = a["d.alive"].tolist()
    s.ids = [i if live else None for i, live in zip(ids, alive, strict=True)]
    s.row_of = {i: row for row, (i, live) in enumerate(zip(ids, alive, strict=True)) if live}
    s.content = TextColumn(a["d.content.offsets"], a["d.content.block"])
    s.key = TextColumn(a["d.key.offsets"], a["d.key.block"])
    for name, values in meta["tables"].items():
        setattr(s, name, [values[c] for c in a[f"d.{name}"].tolist()])
    s.aliases = dict(meta["aliases"])
    c = ChunkTable(s.dim, capacity=1)
    c.size = len(a["c.alive"])
    c.vectors = _view(a["c.vectors"], np.float32)
    c.drawer_row = _view(a["c.drawer_row"], np.intp)
    c.alive = _view(a["c.alive"], bool)
    # Snapshots written before event sentences hold windows only.
    c.kind = (_view(a["c.kind"], np.uint8) if "c.kind" in a
              else np.zeros(c.size, dtype=np.uint8))
    c.free = a["c.free"].tolist()
    slots = a["c.of_row.slots"].tolist()
    at = 0
    for row, count in zip(a["c.of_row.rows"].tolist(), a["c.of_row.counts"].tolist(),
                          strict=True):
        c.of_row[row] = slots[at: at + count]
        at += count
    s.chunks = c
    s.fingerprint, s.embedder_name = meta["fingerprint"], meta["embedder"]
    if made.fingerprint is not None and (made.fingerprint != s.fingerprint or
                                         made.dim != s.dim):
        # The palace was made with another embedder: its vectors are not these.
        s.dim = made.dim
        s.vectors = np.zeros((s.capacity, made.dim), dtype=np.float32)
        s.has_vector = np.zeros(s.capacity, dtype=bool)
        s.chunks = ChunkTable(made.dim)
        s.fingerprint, s.embedder_name = made.fingerprint, made.embedder_name
    return s


def _read_edges(meta: dict[str, Any], a: dict[str, np.ndarray]) -> EdgeTable:
    n = len(a["e.alive"])
    nodes = _read_texts(a["e.nodes.offsets"], a["e.nodes.block"])
    kinds = [EdgeKind(k) for k in meta["kinds"]]
    props: list[dict[str, Any]] = [{} for _ in range(n)]
    for i, p in meta["props"].items():
        props[int(i)] = p
    return EdgeTable.from_columns(
        kind=[kinds[k] for k in a["e.kind"].tolist()],
        src=[nodes[i] for i in a["e.src"].tolist()],
        dst=[nodes[i] for i in a["e.dst"].tolist()],
        props=props, alive=_view(a["e.alive"], bool),
        columns={name: _view(a[f"e.{name}"], np.float64) for name in EDGE_FLOATS})
