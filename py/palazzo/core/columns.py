"""Struct-of-arrays storage: drawers and edges as NumPy columns, rows reused after deletion.

Search, decay and scoring work on whole columns (one matmul over the embedding matrix, one
multiply per pheromone array), never on Python objects one drawer at a time. Rows grow
amortised (capacity doubles); a deleted row is marked dead, zeroed and put on a free list, so
it can never surface in a search.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from palazzo.core.model import BASE_COST, EdgeKind

# Columns of a drawer row other than the embedding matrix.
DRAWER_FLOATS = ("importance", "created_at", "accessed_at", "exploitation", "exploration")
EDGE_FLOATS = ("base_cost", "current_cost", "success", "traversal", "recency")


def _grow(array: np.ndarray, capacity: int) -> np.ndarray:
    out = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    out[: len(array)] = array
    return out


_UNREAD = object()


def join_texts(pieces: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Return (byte offsets, one block) of ``pieces`` (UTF-8 bytes or views of them, in row
    order): how a text column lies in a snapshot. Cost: one join of the pieces."""
    offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces)),
              out=offsets[1:])
    return offsets, np.frombuffer(b"".join(pieces), dtype=np.uint8)


class TextColumn:
    """A column of texts read from one UTF-8 block, each decoded when first asked for.

    Why: a big palace opened for one command (``status``, a search showing ten drawers)
    should not decode a hundred megabytes of text it never shows. It stands for a list of
    ``str``: ``len``, ``col[i]``, ``col[i] = text``, ``append`` and iteration (which decodes
    every text). Cost: O(rows) to make (one sentinel a row); a read decodes one text once.
    """

    __slots__ = ("_items", "_offsets", "_block", "_written")

    def __init__(self, offsets: np.ndarray, block: Any) -> None:
        """``offsets`` (rows + 1 byte offsets into ``block``) and ``block`` (a buffer of
        UTF-8 bytes, kept as it is: a view of a snapshot's buffer is not copied)."""
        self._items: list[Any] = [_UNREAD] * (len(offsets) - 1)
        self._offsets = offsets
        self._block = memoryview(block).cast("B") if len(block) else memoryview(b"")
        self._written: set[int] = set()  # rows given a new text since it was read

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, row: int) -> str:
        value = self._items[row]
        if value is _UNREAD:
            row = range(len(self._items))[row]
            a, b = int(self._offsets[row]), int(self._offsets[row + 1])
            value = self._items[row] = str(self._block[a:b], "utf-8")
        return value

    def __setitem__(self, row: int, value: str) -> None:
        self._items[row] = value
        self._written.add(range(len(self._items))[row])

    def append(self, value: str) -> None:
        self._items.append(value)

    def encoded(self) -> tuple[np.ndarray, np.ndarray]:
        """Return (byte offsets, UTF-8 block) of the column, as a snapshot stores it: the
        block it was read from when nothing was written since, else one built from the
        read block's bytes for the rows not written and new bytes for the others. Why: a
        compaction of a big palace need not decode and encode again every text it never
        changed. Cost: none when unchanged; else O(total bytes), encoding only new texts."""
        read = len(self._offsets) - 1
        if not self._written and len(self._items) == read:
            return self._offsets, np.frombuffer(self._block, dtype=np.uint8)
        at = self._offsets.tolist()
        block, written, items = self._block, self._written, self._items
        return join_texts([block[at[r]: at[r + 1]] if r < read and r not in written
                           else items[r].encode("utf-8") for r in range(len(items))])

    def __iter__(self) -> Any:
        return (self[row] for row in range(len(self._items)))

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, TextColumn | list) else \
            NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like the list it stands for


def text_lengths(column: Any, rows: np.ndarray) -> np.ndarray:
    """Return the length of each text of ``column`` (a :class:`TextColumn` or a list) at
    ``rows``: UTF-8 bytes for a text not decoded yet (read from the offsets, nothing is
    decoded), characters for the others. Good enough to tell short texts from long ones.
    Cost: O(len(rows))."""
    if not isinstance(column, TextColumn):
        return np.fromiter((len(column[int(r)]) for r in rows), dtype=np.int64, count=len(rows))
    off, items = column._offsets, column._items
    read = len(off) - 1
    return np.fromiter((int(off[r + 1]) - int(off[r]) if r < read and items[r] is _UNREAD
                        else len(items[r]) for r in (int(x) for x in rows)),
                       dtype=np.int64, count=len(rows))


WINDOW = 0  # a chunk kind: a window of the drawer's text
EVENT_OWN = 1  # an event sentence of the speaker's (or whose subject is not known)
EVENT_OTHER = 2  # an event sentence about someone else
# The opening window of a long drawer whose later windows are not embedded yet (a person's
# long turn, embedded opening first: Palace.embedding_queue); its only chunk.
OPENING = 3
EVENTS = (EVENT_OWN, EVENT_OTHER)


class ChunkTable:
    """Vectors of the chunks of long drawers (those cut into several windows).

    Struct-of-arrays: ``vectors`` (m, dim) float32, ``drawer_row`` (m) the drawer row a chunk
    belongs to, ``alive`` (m), ``kind`` (m) uint8; ``of_row`` maps a drawer row to its chunk
    indices (its windows in text order, then its event sentences). Freed chunk slots are
    zeroed, marked dead and reused; capacity doubles.

    ``kind`` is :data:`WINDOW` for a window of the drawer's text and :data:`EVENT_OWN` /
    :data:`EVENT_OTHER` for one of its event sentences (:mod:`palazzo.memory.events`): a
    drawer scores by its best window, and only a question's event clause is matched against
    event sentences (:mod:`palazzo.retrieval.events`). :data:`OPENING` marks the one chunk
    of a drawer that has its opening window's vector and is waiting for the rest (a window
    for scoring).
    """

    def __init__(self, dim: int, capacity: int = 16) -> None:
        self.dim = dim
        self.size = 0  # slots ever used (alive or free)
        self.free: list[int] = []
        self.of_row: dict[int, list[int]] = {}
        self.vectors = np.zeros((capacity, dim), dtype=np.float32)
        # np.intp, not int64: wasm32 NumPy refuses int64 indices in ufunc.at and bincount.
        self.drawer_row = np.zeros(capacity, dtype=np.intp)
        self.alive = np.zeros(capacity, dtype=bool)
        self.kind = np.zeros(capacity, dtype=np.uint8)

    def __len__(self) -> int:
        return self.size - len(self.free)

    def _slots(self, count: int) -> list[int]:
        taken = [self.free.pop() for _ in range(min(count, len(self.free)))]
        fresh = count - len(taken)
        self.reserve(self.size + fresh)
        taken += range(self.size, self.size + fresh)
        self.size += fresh
        return taken

    def reserve(self, slots: int) -> None:
        """Make room for ``slots`` chunks without growing again (capacity at least doubles
        when it grows). Cost: one copy of the table when it grows, else nothing."""
        if slots > len(self.alive):
            capacity = max(slots, 2 * len(self.alive))
            self.vectors = _grow(self.vectors, capacity)
            self.drawer_row = _grow(self.drawer_row, capacity)
            self.alive = _grow(self.alive, capacity)
            self.kind = _grow(self.kind, capacity)

    def put(self, row: int, vectors: np.ndarray, kinds: np.ndarray | None = None) -> None:
        """Give drawer ``row`` the chunk ``vectors`` (replacing any it had), of ``kinds``
        (all windows when None). O(chunks)."""
        self.drop(row)
        slots = self._slots(len(vectors))
        index = np.asarray(slots, dtype=np.intp)
        self.vectors[index] = vectors
        self.drawer_row[index] = row
        self.alive[index] = True
        self.kind[index] = WINDOW if kinds is None else kinds
        self.of_row[row] = slots

    def drop(self, row: int) -> None:
        """Free the chunks of drawer ``row`` (nothing when it has none). O(chunks)."""
        slots = self.of_row.pop(row, None)
        if not slots:
            return
        index = np.asarray(slots, dtype=np.intp)
        self.vectors[index] = 0.0
        self.alive[index] = False
        self.kind[index] = WINDOW
        self.free.extend(reversed(slots))

    def best(self, q: np.ndarray, size: int) -> np.ndarray:
        """Return, per drawer row in [0, size), the best cosine of its windows to ``q``
        (-inf for rows without chunks). Cost: one matvec over the chunk matrix plus one
        unbuffered ``np.maximum.at`` over the live windows."""
        m = self.size
        live = np.flatnonzero(self.alive[:m] & np.isin(self.kind[:m], (WINDOW, OPENING)))
        best = np.full(size, -np.inf, dtype=np.float32)
        sims = self.vectors[:m] @ q
        np.maximum.at(best, self.drawer_row[live], sims[live].astype(np.float32))
        return best

    def best_event(self, q: np.ndarray, size: int, other_penalty: float = 0.0) -> np.ndarray:
        """Return, per drawer row in [0, size), the best cosine of its event sentences to
        ``q``, ``other_penalty`` taken off for someone else's (-inf for rows without event
        sentences). Cost: a matvec over the event sentences only."""
        m = self.size
        live = np.flatnonzero(self.alive[:m] & np.isin(self.kind[:m], EVENTS))
        best = np.full(size, -np.inf, dtype=np.float32)
        if len(live):
            sims = self.vectors[live] @ q - other_penalty * (self.kind[live] == EVENT_OTHER)
            np.maximum.at(best, self.drawer_row[live], sims.astype(np.float32))
        return best

    def event_slots(self, row: int) -> np.ndarray:
        """Return the chunk slots of drawer ``row``'s event sentences, in the order they
        were put (:func:`palazzo.memory.events.event_texts` order). Cost: O(its chunks)."""
        slots = np.asarray(self.of_row.get(row, ()), dtype=np.intp)
        return slots[np.isin(self.kind[slots], EVENTS)] if len(slots) else slots

    def has_events(self) -> bool:
        """Return whether any live chunk is an event sentence. O(chunks)."""
        return self.event_count() > 0

    def event_count(self) -> int:
        """Return how many live chunks are event sentences. O(chunks)."""
        m = self.size
        return int(np.count_nonzero(self.alive[:m] & np.isin(self.kind[:m], EVENTS)))

    def opening_rows(self) -> np.ndarray:
        """Return the drawer rows that hold their opening window's vector only (an
        :data:`OPENING` chunk), ascending. O(chunks)."""
        m = self.size
        return np.sort(self.drawer_row[:m][self.alive[:m] & (self.kind[:m] == OPENING)])


class DrawerStore:
    """Drawer rows: texts in lists, numbers in NumPy arrays, vectors in one float32 matrix.

    ``vectors`` rows are L2-normalised; ``has_vector`` says which rows hold a vector made by
    the embedder whose fingerprint is ``fingerprint`` (vectors of another embedder are never
    kept side by side: see :meth:`set_fingerprint`). A drawer cut into several chunks keeps
    its chunk vectors in ``chunks`` and, in ``vectors``, their normalised mean.
    """

    def __init__(self, dim: int, capacity: int = 64) -> None:
        self.dim = dim
        self.fingerprint: str | None = None
        self.embedder_name: str | None = None
        self.size = 0  # rows ever used (alive or free)
        self.free: list[int] = []
        self.row_of: dict[str, int] = {}
        self.ids: list[str | None] = []
        self.content: list[str] = []
        self.wing: list[str] = []
        self.room: list[str] = []
        self.closet: list[str | None] = []
        self.source: list[str] = []
        self.source_file: list[str] = []
        self.key: list[str] = []  # identity keys ("" for most drawers): see model.drawer_id
        # Ids a drawer had before its text was edited -> its id now (references made with the
        # old id, such as a conversation turn's drawer, still find it).
        self.aliases: dict[str, str] = {}
        self.alive = np.zeros(capacity, dtype=bool)
        self.has_vector = np.zeros(capacity, dtype=bool)
        self.vectors = np.zeros((capacity, dim), dtype=np.float32)
        self.chunks = ChunkTable(dim)
        self.columns: dict[str, np.ndarray] = {
            name: np.zeros(capacity, dtype=np.float64) for name in DRAWER_FLOATS
        }

    def __len__(self) -> int:
        return len(self.row_of)

    @property
    def capacity(self) -> int:
        return len(self.alive)

    def reserve(self, rows: int) -> None:
        """Make room for ``rows`` drawers without growing again (capacity at least doubles
        when it grows). Cost: one copy of every per-drawer array when it grows."""
        self._ensure(rows)

    def _ensure(self, rows: int) -> None:
        if rows <= self.capacity:
            return
        capacity = max(rows, 2 * self.capacity)
        self.alive = _grow(self.alive, capacity)
        self.has_vector = _grow(self.has_vector, capacity)
        self.vectors = _grow(self.vectors, capacity)
        self.columns = {k: _grow(v, capacity) for k, v in self.columns.items()}

    def add(self, drawer_id: str, content: str, wing: str, room: str, closet: str | None,
            source: str, source_file: str, numbers: dict[str, float], key: str = "") -> int:
        """Store a new drawer and return its row (a freed row is reused first). O(1) amortised."""
        if self.free:
            row = self.free.pop()
        else:
            row = self.size
            self.size += 1
            self._ensure(self.size)
            for column in (self.ids, self.content, self.wing, self.room, self.closet,
                           self.source, self.source_file, self.key):
                column.append(None)  # type: ignore[arg-type]
        self.row_of[drawer_id] = row
        self.aliases.pop(drawer_id, None)  # an edited drawer's old text is back as its own
        self.ids[row] = drawer_id
        self.content[row] = content
        self.wing[row] = wing
        self.room[row] = room
        self.closet[row] = closet
        self.source[row] = source
        self.source_file[row] = source_file
        self.key[row] = key
        self.alive[row] = True
        self.has_vector[row] = False
        self.vectors[row] = 0.0
        for name in DRAWER_FLOATS:
            self.columns[name][row] = numbers.get(name, 0.0)
        return row

    def lookup(self, drawer_id: str) -> int | None:
        """Return the row of ``drawer_id`` (a current id or an alias of one), or None. O(1)."""
        row = self.row_of.get(drawer_id)
        if row is None and drawer_id in self.aliases:
            row = self.row_of.get(self.aliases[drawer_id])
        return row

    def rename(self, row: int, new_id: str) -> str:
        """Give the drawer at ``row`` the id ``new_id`` (which must be free); its old id
        becomes an alias of the new one, and aliases of the old id follow. Returns the old
        id. O(aliases of the old id)."""
        old = self.ids[row]
        assert old is not None and new_id not in self.row_of
        del self.row_of[old]
        self.row_of[new_id] = row
        self.ids[row] = new_id
        self.aliases.pop(new_id, None)  # edited back to an earlier text: that id is real again
        for alias, target in list(self.aliases.items()):
            if target == old:
                self.aliases[alias] = new_id
        self.aliases[old] = new_id
        return old

    def remove(self, drawer_id: str) -> int:
        """Delete a drawer and return the row it had; the row is zeroed and freed; aliases
        of it go too. O(1) plus O(aliases) when it had any."""
        row = self.row_of.pop(drawer_id)
        if drawer_id in self.aliases.values():
            self.aliases = {a: t for a, t in self.aliases.items() if t != drawer_id}
        self.ids[row] = None
        self.content[row] = ""
        self.key[row] = ""
        self.alive[row] = False
        self.has_vector[row] = False
        self.vectors[row] = 0.0
        self.chunks.drop(row)
        for name in DRAWER_FLOATS:
            self.columns[name][row] = 0.0
        self.free.append(row)
        return row

    def set_vector(self, row: int, vector: np.ndarray) -> None:
        """Store a normalised vector for ``row`` (made by the embedder of ``fingerprint``);
        chunk vectors it had are freed. O(dim)."""
        self.chunks.drop(row)
        self.vectors[row] = vector
        self.has_vector[row] = bool(np.any(vector))

    def set_chunks(self, row: int, vectors: np.ndarray, mean: np.ndarray | None = None,
                   kinds: np.ndarray | None = None) -> None:
        """Store the chunk vectors of ``row`` (of ``kinds``, see :class:`ChunkTable`; all
        windows when None); its row vector becomes the normalised mean of its windows (or
        ``mean`` as given, when restoring a file exactly). Zero chunk vectors (chunks without
        features, or vectors a replay did not record) are left out; a drawer left with one
        window and no event sentence has one vector and no chunk rows. O(chunks · dim)."""
        vectors = np.asarray(vectors, dtype=np.float32)
        kinds = (np.zeros(len(vectors), np.uint8) if kinds is None
                 else np.asarray(kinds, dtype=np.uint8))
        if len(kinds) == 1 and kinds[0] == OPENING:
            self.set_opening(row, vectors[0])
            return
        keep = np.any(vectors != 0.0, axis=1)
        vectors, kinds = vectors[keep], kinds[keep]
        windows = vectors[kinds == WINDOW]
        if mean is None:
            total = windows.sum(axis=0, dtype=np.float32)
            norm = float(np.linalg.norm(total))
            mean = total / norm if norm > 0 else np.zeros(self.dim, np.float32)
        if len(vectors) < 2 or len(windows) == 0:
            self.set_vector(row, windows[0] if len(windows) == 1 else mean)
            return
        self.set_vector(row, mean)
        self.chunks.put(row, vectors, kinds)

    def set_opening(self, row: int, vector: np.ndarray) -> None:
        """Store the vector of the opening window of long drawer ``row`` as its vector and
        mark it waiting for the rest (its one chunk, of kind :data:`OPENING`): searchable by
        meaning now, completed by a later embedding step. A zero vector is no vector.
        O(dim)."""
        self.set_vector(row, vector)
        if self.has_vector[row]:
            self.chunks.put(row, np.asarray(vector, np.float32)[None, :],
                            np.array([OPENING], np.uint8))

    def opening(self, row: int) -> bool:
        """Return whether drawer ``row`` holds its opening window's vector only. O(1)."""
        slots = self.chunks.of_row.get(row)
        return bool(slots) and len(slots) == 1 and self.chunks.kind[slots[0]] == OPENING

    def set_fingerprint(self, fingerprint: str, name: str | None = None) -> None:
        """Switch the index to another embedder: vectors of the previous one are dropped.

        Returns None. A palace never scores one embedder's query against another's vectors;
        ``reindex`` then fills the rows again. ``name`` is the embedder's name (for exports).
        """
        if name is not None:
            self.embedder_name = name
        if fingerprint != self.fingerprint:
            self.fingerprint = fingerprint
            self.has_vector[:] = False
            self.vectors[:] = 0.0
            self.chunks = ChunkTable(self.dim)

    def resize_vectors(self, dim: int) -> None:
        """Give the matrix ``dim`` columns; every vector is dropped (another embedder)."""
        self.dim = dim
        self.vectors = np.zeros((self.capacity, dim), dtype=np.float32)
        self.has_vector[:] = False
        self.chunks = ChunkTable(dim)

    def live_rows(self) -> np.ndarray:
        """Return the rows of live drawers, in row order."""
        return np.flatnonzero(self.alive[: self.size])

    def mask(self, wing: str | None = None, room: str | None = None) -> np.ndarray:
        """Return a boolean mask over rows [0, size) of live drawers in ``wing``/``room``."""
        mask = self.alive[: self.size].copy()
        if wing is not None:
            mask &= np.fromiter((w == wing for w in self.wing), bool, self.size)
        if room is not None:
            mask &= np.fromiter((r == room for r in self.room), bool, self.size)
        return mask


class EdgeTable:
    """Non-drawer graph edges as columns: kind/src/dst in lists, costs and pheromones arrays.

    ``out``/``inc`` map a node id to the edge indices leaving/entering it (adjacency) and
    ``index`` maps (kind, src, dst) to the live edge. Removing an edge marks it dead; dead
    edges are dropped from adjacency at once. A table read from a snapshot
    (:meth:`from_columns`) builds its adjacency when first asked for, so a command that never
    walks the graph never pays for it.
    """

    __slots__ = ("kind", "src", "dst", "props", "alive", "columns", "_out", "_inc", "_index")

    def __init__(self) -> None:
        self.kind: list[EdgeKind] = []
        self.src: list[str] = []
        self.dst: list[str] = []
        self.props: list[dict[str, Any]] = []
        self.alive = np.zeros(16, dtype=bool)
        self.columns: dict[str, np.ndarray] = {n: np.zeros(16, dtype=np.float64)
                                               for n in EDGE_FLOATS}
        self._out: dict[str, list[int]] | None = {}
        self._inc: dict[str, list[int]] | None = {}
        self._index: dict[tuple[str, str, str], int] | None = {}

    @classmethod
    def from_columns(cls, kind: list[EdgeKind], src: list[str], dst: list[str],
                     props: list[dict[str, Any]], alive: np.ndarray,
                     columns: dict[str, np.ndarray]) -> EdgeTable:
        """Return the table of these columns (one entry an edge, dead ones included), its
        adjacency to be built on first use. Cost: O(1); the arrays are taken as they are."""
        e = cls.__new__(cls)
        e.kind, e.src, e.dst, e.props, e.alive, e.columns = kind, src, dst, props, alive, \
            columns
        e._out = e._inc = e._index = None
        return e

    def _adjacency(self) -> tuple[dict[str, list[int]], dict[str, list[int]],
                                  dict[tuple[str, str, str], int]]:
        """Return (out, inc, index), building them from the live edges if not yet built.
        Cost: O(1) once built; O(edges) the first time after :meth:`from_columns`."""
        if self._out is None or self._inc is None or self._index is None:
            out: dict[str, list[int]] = {}
            inc: dict[str, list[int]] = {}
            index: dict[tuple[str, str, str], int] = {}
            kind, src, dst = self.kind, self.src, self.dst
            for i in np.flatnonzero(self.alive[: len(kind)]).tolist():
                out.setdefault(src[i], []).append(i)
                inc.setdefault(dst[i], []).append(i)
                index[(kind[i].value, src[i], dst[i])] = i
            self._out, self._inc, self._index = out, inc, index
        return self._out, self._inc, self._index

    @property
    def out(self) -> dict[str, list[int]]:
        return self._adjacency()[0]

    @property
    def inc(self) -> dict[str, list[int]]:
        return self._adjacency()[1]

    @property
    def index(self) -> dict[tuple[str, str, str], int]:
        return self._adjacency()[2]

    def __len__(self) -> int:
        return int(self.alive[: len(self.kind)].sum())

    def reserve(self, edges: int) -> None:
        """Make room for ``edges`` entries without growing again (capacity at least doubles
        when it grows). Cost: one copy of the edge arrays when it grows."""
        if edges > len(self.alive):
            capacity = max(16, edges, 2 * len(self.alive))
            self.alive = _grow(self.alive, capacity)
            self.columns = {k: _grow(v, capacity) for k, v in self.columns.items()}

    def find(self, kind: EdgeKind, src: str, dst: str) -> int | None:
        """Return the index of the live ``kind`` edge from ``src`` to ``dst``, or None."""
        return self.index.get((kind.value, src, dst))

    def add(self, kind: EdgeKind, src: str, dst: str, props: dict[str, Any] | None = None,
            base_cost: float | None = None) -> int:
        """Add an edge (or return the existing live one of that kind and ends). O(1) amortised."""
        existing = self.find(kind, src, dst)
        if existing is not None:
            return existing
        i = len(self.kind)
        self.reserve(i + 1)
        self.kind.append(kind)
        self.src.append(src)
        self.dst.append(dst)
        self.props.append(dict(props or {}))
        cost = BASE_COST[kind] if base_cost is None else base_cost
        self.alive[i] = True
        for name in EDGE_FLOATS:
            self.columns[name][i] = 0.0
        self.columns["base_cost"][i] = cost
        self.columns["current_cost"][i] = cost
        out, inc, index = self._adjacency()
        out.setdefault(src, []).append(i)
        inc.setdefault(dst, []).append(i)
        index[(kind.value, src, dst)] = i
        return i

    def remove(self, i: int) -> None:
        """Mark edge ``i`` dead and take it out of the adjacency lists."""
        if not self.alive[i]:
            return
        out, inc, index = self._adjacency()
        self.alive[i] = False
        for adjacency, node in ((out, self.src[i]), (inc, self.dst[i])):
            adjacency[node].remove(i)
            if not adjacency[node]:  # a node without edges has no entry (as after a load)
                del adjacency[node]
        del index[(self.kind[i].value, self.src[i], self.dst[i])]

    def rename_node(self, old: str, new: str) -> None:
        """Re-point every live edge at ``old`` to ``new``, keeping kind, props and every
        float column (pheromones, costs). Cost: O(edges touching ``old``)."""
        for i in self.touching(old):
            if not self.alive[i]:
                continue
            kind, props = self.kind[i], self.props[i]
            src = new if self.src[i] == old else self.src[i]
            dst = new if self.dst[i] == old else self.dst[i]
            values = {n: float(self.columns[n][i]) for n in EDGE_FLOATS}
            self.remove(i)
            j = self.add(kind, src, dst, props)
            for n, v in values.items():
                self.columns[n][j] = v

    def touching(self, node: str) -> list[int]:
        """Return the live edges that leave or enter ``node``."""
        return [*self.out.get(node, []), *self.inc.get(node, [])]

    def live(self) -> list[int]:
        """Return the indices of live edges in insertion order."""
        return [int(i) for i in np.flatnonzero(self.alive[: len(self.kind)])]


NODE_FLOATS = ("exploitation", "exploration")


class NodeTable:
    """The node pheromones of every node that is not a drawer (wings, rooms, closets,
    entities, the palace node): seed 000 gives every node two pheromone scalars, drawers keep
    theirs in :class:`DrawerStore`'s columns and the others keep them here.

    Struct-of-arrays like the drawer store: ``ids`` (row -> node id), ``row_of`` (node id ->
    row) and one float64 array a pheromone in ``columns``, so decay is one multiply a column.
    A node gets a row the first time something is deposited on it (most nodes never are);
    capacity doubles. Reading a node without a row reads 0. Cost: O(1) amortised a new node.
    """

    __slots__ = ("ids", "row_of", "columns")

    def __init__(self, capacity: int = 16) -> None:
        self.ids: list[str] = []
        self.row_of: dict[str, int] = {}
        self.columns: dict[str, np.ndarray] = {n: np.zeros(capacity, dtype=np.float64)
                                               for n in NODE_FLOATS}

    @property
    def size(self) -> int:
        return len(self.ids)

    def __len__(self) -> int:
        return len(self.ids)

    def rows(self, nodes: list[str], create: bool = False) -> np.ndarray:
        """Return the rows (np.intp) of ``nodes``: -1 for a node without one, or a new zeroed
        row when ``create``. Cost: O(len(nodes)) dict lookups."""
        if create:
            fresh = [n for n in dict.fromkeys(nodes) if n not in self.row_of]
            if fresh:
                need = len(self.ids) + len(fresh)
                capacity = len(self.columns[NODE_FLOATS[0]])
                if need > capacity:
                    capacity = max(need, 2 * capacity)
                    self.columns = {k: _grow(v, capacity) for k, v in self.columns.items()}
                for n in fresh:
                    self.row_of[n] = len(self.ids)
                    self.ids.append(n)
        get = self.row_of.get
        return np.fromiter((get(n, -1) for n in nodes), dtype=np.intp, count=len(nodes))

    def values(self, kind: str, nodes: list[str]) -> np.ndarray:
        """Return pheromone ``kind`` of each of ``nodes`` (0 for a node without a row).
        Cost: O(len(nodes))."""
        rows = self.rows(nodes)
        out = np.zeros(len(nodes), dtype=np.float64)
        known = rows >= 0
        out[known] = self.columns[kind][rows[known]]
        return out

    def value(self, kind: str, node: str) -> float:
        """Return pheromone ``kind`` of ``node`` (0 when it has none). O(1)."""
        row = self.row_of.get(node)
        return 0.0 if row is None else float(self.columns[kind][row])

    def live(self) -> tuple[list[str], dict[str, np.ndarray]]:
        """Return (ids, columns) of the rows where some pheromone is not zero, in row order:
        what a file stores (rows decayed to zero are left out). Cost: O(rows)."""
        n = len(self.ids)
        keep = np.zeros(n, dtype=bool)
        for column in self.columns.values():
            keep |= column[:n] != 0.0
        index = np.flatnonzero(keep)
        return ([self.ids[i] for i in index.tolist()],
                {k: v[:n][index] for k, v in self.columns.items()})

    @classmethod
    def from_columns(cls, ids: list[str], columns: dict[str, np.ndarray]) -> NodeTable:
        """Return the table of these ids and columns (missing columns read zero). Cost:
        O(rows) for the id index; the arrays are copied into growable ones."""
        t = cls(max(16, len(ids)))
        t.ids = list(ids)
        t.row_of = {n: i for i, n in enumerate(t.ids)}
        if len(t.row_of) != len(t.ids):
            raise ValueError("node pheromone ids repeat")
        for k in NODE_FLOATS:
            if k in columns:
                t.columns[k][: len(ids)] = np.asarray(columns[k], dtype=np.float64)
        return t
