"""The palace: Palace > Wing > Room > Closet > Drawer, with its graph, vectors and text index.

All mutation goes through methods here (and, for users, through :mod:`palazzo.ops.palace`), so the
embedding matrix, the BM25 index and the graph never drift apart.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from palazzo.core.chunking import chunks
from palazzo.core.columns import (
    OPENING,
    WINDOW,
    DrawerStore,
    EdgeTable,
    NodeTable,
    text_lengths,
)
from palazzo.core.model import (
    CHUNK_SIZE,
    MAX_CONTENT,
    MAX_KEY,
    PALACE_ID,
    Agent,
    Closet,
    Drawer,
    EdgeKind,
    Entity,
    Later,
    Progress,
    Room,
    Wing,
    clean_name,
    drawer_id,
)
from palazzo.embed import Embedder
from palazzo.errors import NotFound, ValidationError, VectorsPending
from palazzo.memory.communities import CommunityCache
from palazzo.memory.conversation import Conversations
from palazzo.memory.diary import Diaries, written_date
from palazzo.memory.events import event_sentences, event_texts
from palazzo.memory.extraction import extract, sure_mentions
from palazzo.memory.kg import KnowledgeGraph, entity_id
from palazzo.memory.summary import Summaries
from palazzo.provenance.kernel import Provenance
from palazzo.retrieval import scripts
from palazzo.retrieval.bm25 import BM25Index
from palazzo.stigmergy.trails import QueryTrails
from palazzo.stigmergy.tunnels import TunnelProposals

drawer_id_of = drawer_id  # update_drawer's parameter is called drawer_id

Clock = Callable[[], float]

DEFAULT_DIM = 384
HALL_LIMIT = 8  # HALLs a new room gets, to the rooms of its wing made last
TUNNEL_LIMIT = 8  # TUNNELs a new room gets, to same-named rooms of other wings made last
EMBED_BLOCK = 256  # drawers embedded (and linked) together in a deferred batch
# How sure a REFERENCES edge is, by how the entity was recognised: a known alias is nearly
# certain, a code identifier is a name by its shape, a capitalised span may be a sentence's
# emphasis. Dates and amounts are not entities.
MENTION_CONFIDENCE = {"alias": 0.9, "code": 0.8, "name": 0.6}
MAX_MENTIONS = 12  # entities one drawer links to: a long pasted text must not link to all


class _Section:
    """A palace attribute that may hold a :class:`~palazzo.core.model.Later`: the part is
    made the first time it is read (a snapshot leaves its knowledge graph, conversations,
    provenance and diaries unread until an operation needs them). Cost: one dict lookup a
    read."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, palace: Any, owner: type | None = None) -> Any:
        if palace is None:
            return self
        value = palace.__dict__[self.slot]
        if isinstance(value, Later):
            value = palace.__dict__[self.slot] = value.make()
        return value

    def __set__(self, palace: Any, value: Any) -> None:
        palace.__dict__[self.slot] = value


class Palace:
    """An in-memory palace. Clock, randomness and embedder are injected for reproducibility.

    ``similar_threshold``: drawers whose cosine to a new drawer is at least this get a
    SIMILAR_TO edge (at most ``similar_limit`` per new drawer); None disables the links.
    ``chunk_size``: drawers longer than this many characters are embedded as overlapping
    chunks (:func:`palazzo.core.chunking.chunks`, overlap a sixth of ``chunk_size``) and score
    by their best chunk; None embeds every drawer whole (a long one is then read from its
    start only).
    """

    kg = _Section()
    conversations = _Section()
    provenance = _Section()
    diaries = _Section()

    def unread(self, name: str) -> Later | None:
        """Return the :class:`~palazzo.core.model.Later` section ``name`` (``kg``,
        ``conversations``, ``provenance``, ``diaries``) still waits as, or None once it was
        made: a snapshot writer then stores the section's bytes again without making it."""
        value = self.__dict__["_" + name]
        return value if isinstance(value, Later) else None

    def __init__(
        self,
        name: str = "palace",
        embedder: Embedder | None = None,
        clock: Clock = time.time,
        seed: int = 0,
        similar_threshold: float | None = 0.9,
        similar_limit: int = 5,
        chunk_size: int | None = CHUNK_SIZE,
        extract_on_add: bool = True,
    ) -> None:
        if chunk_size is not None and chunk_size < 100:
            raise ValidationError("chunk_size must be at least 100 characters (or None)")
        self.name = name
        self.clock = clock
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.created_at = float(clock())
        self.embedder = embedder
        self.similar_threshold = similar_threshold
        self.similar_limit = similar_limit
        self.chunk_size = chunk_size
        # (turns' dict and count, the ids of assistant and of user turns' drawers): see
        # _turn_roles()
        self._roles: tuple[tuple[int, int], frozenset[str], frozenset[str]] | None = None
        self.wings: dict[str, Wing] = {}
        self.rooms: dict[tuple[str, str], Room] = {}
        # add_room's index of the rooms by wing and by name (see _room_index).
        self._by_wing: dict[str, list[Room]] = {}
        self._by_name: dict[str, list[Room]] = {}
        self._rooms_indexed: tuple[dict[tuple[str, str], Room], int] = (self.rooms, 0)
        self.closets: dict[tuple[str, str, str], Closet] = {}
        self.entities: dict[str, Entity] = {}
        self.agents: dict[str, Agent] = {}
        dim = embedder.dim if embedder is not None else DEFAULT_DIM
        self.drawers = DrawerStore(dim)
        if embedder is not None:
            self.drawers.set_fingerprint(embedder.fingerprint, embedder.name)
        self.edges = EdgeTable()
        # Node pheromones of every node but the drawers (which keep theirs in their columns).
        self.node_pheromones = NodeTable()
        self.tunnel_proposals = TunnelProposals()  # generalist agents' suggested TUNNELs
        self.trails = QueryTrails()  # rewards kept with the queries that earned them
        self.text_index = BM25Index()
        self.kg = KnowledgeGraph(self)
        self.conversations = Conversations(self)
        self.provenance = Provenance(self)
        self.diaries = Diaries(self)
        self.summaries = Summaries(self)
        self.communities = CommunityCache(self)
        # Rows added inside :meth:`deferred`, embedded and linked together when it ends.
        self._pending: list[int] | None = None
        # Extraction on add (memory/extraction.py): entities, REFERENCES edges and facts of
        # every new drawer; rows whose text may give mentions but no facts (an assistant's
        # "I" is not the user) are kept in _no_facts until they are extracted.
        self.extract_on_add = extract_on_add
        self._no_facts: set[int] = set()

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Within the block, new drawers are stored and indexed at once but embedded and
        linked (SIMILAR_TO) together when it ends: one embedder call over all their texts and
        blocked matrix products instead of one embedding and one pass over the palace a
        drawer. Exists for batches (imports); what is linked is what adding the drawers one
        by one links (each to the drawers that had a vector before it), only the edges come
        after all of the batch's drawers. Nested blocks join the outer one. Reading vectors
        inside the block (search, duplicates, paths) does not see the new drawers yet.
        """
        if self._pending is not None:
            yield
            return
        self._pending = []
        try:
            yield
        finally:
            rows, self._pending = self._pending, None
            self._extract_new(rows)
            self._embed_and_link(rows)

    def _extract_new(self, rows: list[int]) -> None:
        """Run extraction on drawers just added (when :attr:`extract_on_add`)."""
        if self.extract_on_add and rows:
            self.extract_rows(rows)
        self._no_facts.difference_update(rows)

    def extract_rows(self, rows: list[int], facts: bool = True) -> dict[str, int]:
        """Extract entities and facts from the drawers at ``rows`` into the palace and return
        counts (``drawers``, ``mentions`` linked, ``entities`` new, ``facts`` new, ``facts_seen``).

        Each entity the text names (a capitalised name, a known alias, a code identifier) gets
        an entity and a REFERENCES edge drawer -> entity carrying the mention's confidence;
        each fact becomes a knowledge-graph observation with the drawer as its evidence
        (``source_drawer``) and its date as ``valid_from`` when the text dates it, else the day
        the drawer was written (known since then, not since forever). A drawer's text is dated
        by its ``created_at`` ("yesterday" means the day before it was written).
        Running it twice adds nothing the second time (edges and facts are found again, not
        doubled). ``facts`` False (and rows in ``_no_facts``) take no facts, and of the
        mentions only the known aliases. Cost: the
        extraction (docs/benchmarks.md, "Extraction": about a megabyte of text a second on
        CPython) plus one knowledge-graph insert a new fact.
        """
        kg = self.kg
        s = self.drawers
        counts = {"drawers": 0, "mentions": 0, "entities": 0, "facts": 0, "facts_seen": 0}
        for row in dict.fromkeys(rows):
            if not s.alive[row]:
                continue
            did = s.ids[row]
            assert did is not None
            today = written_date(float(s.columns["created_at"][row]))
            counts["drawers"] += 1
            linked: set[str] = set()
            # An assistant's text (no facts) links only the known aliases it names: not every
            # capitalised word of a long answer ("Step", "Note", a heading), nor the
            # identifiers of the code it wrote; and it skips the name and fact patterns
            # (most of a chat's text is answers: this halves extraction's cost at import).
            speaker = facts and row not in self._no_facts
            if speaker:
                found = extract(s.content[row], kg.aliases, today=today)
                mentions = found.mentions
            else:
                found, mentions = None, sure_mentions(s.content[row], kg.aliases, code=False)
            for m in mentions:
                if m.kind not in MENTION_CONFIDENCE or m.key in linked:
                    continue
                if len(linked) >= MAX_MENTIONS:
                    break
                try:
                    eid = entity_id(kg.resolve(m.name))
                    if eid not in self.entities:
                        kg.set_entity(m.name, "code" if m.kind == "code" else None)
                        counts["entities"] += 1
                except ValidationError:
                    continue  # a name the graph refuses (too long, control characters)
                linked.add(m.key)
                if self.edges.find(EdgeKind.REFERENCES, did, eid) is None:
                    self.edges.add(EdgeKind.REFERENCES, did, eid,
                                   {"confidence": MENTION_CONFIDENCE[m.kind]})
                    counts["mentions"] += 1
            if found is None:
                continue
            for f in found.facts:
                counts["facts_seen"] += 1
                try:
                    # Undated, a fact is known from the day it was written, not forever.
                    added = kg.add(f.subject, f.predicate, f.object, confidence=f.confidence,
                                   valid_from=f.when or today, source_drawer=did,
                                   statement_type="observation")
                except (ValidationError, NotFound):
                    continue  # e.g. subject and object name one entity
                counts["facts"] += added.created
        return counts

    def _embed_and_link(self, rows: list[int]) -> None:
        """Embed, then link, the drawers at ``rows`` (in the order they were added; rows no
        longer alive are skipped). Cost: ``embed`` in blocks of :data:`EMBED_BLOCK` drawers,
        plus one (block × drawers) matrix product a block for the links."""
        if self.embedder is None:
            return
        s = self.drawers
        rows = [r for r in dict.fromkeys(rows) if s.alive[r]]
        if not rows:
            return
        before = s.has_vector[: s.size].copy()
        before[rows] = False
        for at in range(0, len(rows), EMBED_BLOCK):
            self._embed(rows[at: at + EMBED_BLOCK])
        if self.similar_threshold is None:
            return
        for at in range(0, len(rows), EMBED_BLOCK):
            block = rows[at: at + EMBED_BLOCK]
            sims = s.vectors[block] @ s.vectors[: s.size].T
            for k, row in enumerate(block):
                if s.has_vector[row]:
                    self._link_row(row, sims[k], before)
                    before[row] = True

    def replace_with(self, other: Palace, keep_name: bool = False) -> None:
        """Take over every piece of state of ``other`` (an import's atomic switch), its name
        too unless ``keep_name``; its sub-stores are re-pointed at this palace."""
        name, extracting = self.name, self.extract_on_add
        self.__dict__.update(other.__dict__)
        if keep_name:
            self.name = name
        self.extract_on_add = extracting  # the host's setting, not the import's
        for part in (self.kg, self.conversations, self.provenance, self.diaries,
                     self.summaries, self.communities):
            part.palace = self

    # -- hierarchy --------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Return how many wings, rooms, closets, drawers, edges, entities and agents exist."""
        return {
            "wings": len(self.wings),
            "rooms": len(self.rooms),
            "closets": len(self.closets),
            "drawers": len(self.drawers),
            "edges": len(self.edges),
            "entities": len(self.entities),
            "agents": len(self.agents),
        }

    def add_wing(self, name: str, description: str = "") -> tuple[Wing, bool]:
        """Return (the wing called ``name``, whether it was created now)."""
        name = clean_name(name, "wing")
        if name in self.wings:
            return self.wings[name], False
        wing = Wing(name=name, description=description, created_at=float(self.clock()))
        self.wings[name] = wing
        self.edges.add(EdgeKind.HAS_WING, PALACE_ID, wing.id)
        return wing, True

    def add_room(self, wing: str, name: str, description: str = "",
                 source: str = "") -> tuple[Room, bool]:
        """Return (the room ``name`` of ``wing``, whether it was created now). ``source``
        records what the room holds elsewhere (an imported conversation's id, so importing
        it again finds the room whatever it is called); an existing room is never changed.

        A new room gets a HALL to the :data:`HALL_LIMIT` rooms of its wing made last before it
        and a TUNNEL to the :data:`TUNNEL_LIMIT` rooms of the same name in other wings (the
        same topic seen from another domain) made last. Every room of a wing also reaches
        every other through the wing itself (two HAS_ROOM steps), so the graph grows by a
        bounded number of edges a room, not by the square of a wing's rooms. Cost: O(limits)
        through :meth:`_room_index`.
        """
        name = clean_name(name, "room")  # checked before the wing is made: all or nothing
        w, _ = self.add_wing(wing)
        key = (w.name, name)
        if key in self.rooms:
            return self.rooms[key], False
        room = Room(wing=w.name, name=name, description=description,
                    created_at=float(self.clock()), source=source)
        by_wing, by_name = self._room_index()
        halls = by_wing.get(w.name, [])[-HALL_LIMIT:][::-1]
        tunnels = by_name.get(name, [])[-TUNNEL_LIMIT:][::-1]  # all in other wings: a
        # wing holds one room of a name
        for other in reversed(halls):  # oldest first, as the edges always came
            self.edges.add(EdgeKind.HALL, other.id, room.id, {"hall_type": "corridor"})
        for other in reversed(tunnels):
            self.edges.add(EdgeKind.TUNNEL, other.id, room.id)
        self.rooms[key] = room
        by_wing.setdefault(room.wing, []).append(room)
        by_name.setdefault(room.name, []).append(room)
        self._rooms_indexed = (self.rooms, len(self.rooms))
        self.edges.add(EdgeKind.HAS_ROOM, w.id, room.id)
        return room, True

    def _room_index(self) -> tuple[dict[str, list[Room]], dict[str, list[Room]]]:
        """Return (rooms of each wing, rooms of each name), each in the order made: what
        :meth:`add_room` picks its halls and tunnels from. Rooms are only ever added, through
        :meth:`add_room` (which keeps the index) or by a reader filling :attr:`rooms` whole,
        so the index is rebuilt only when :attr:`rooms` is another dict or has grown behind
        its back. Cost: O(1) when in step; O(rooms) once after a palace is read."""
        rooms, count = self._rooms_indexed
        if rooms is not self.rooms or count != len(self.rooms):
            self._by_wing.clear()
            self._by_name.clear()
            for room in self.rooms.values():
                self._by_wing.setdefault(room.wing, []).append(room)
                self._by_name.setdefault(room.name, []).append(room)
            self._rooms_indexed = (self.rooms, len(self.rooms))
        return self._by_wing, self._by_name

    def add_closet(self, wing: str, room: str, name: str, summary: str = "") -> Closet:
        """Return the closet ``name`` in ``wing``/``room``, creating it (and its room)."""
        r, _ = self.add_room(wing, room)
        name = clean_name(name, "closet")
        key = (r.wing, r.name, name)
        if key not in self.closets:
            closet = Closet(r.wing, r.name, name, summary, float(self.clock()))
            self.closets[key] = closet
            self.edges.add(EdgeKind.HAS_CLOSET, r.id, closet.id)
        return self.closets[key]

    def room(self, wing: str, room: str) -> Room:
        """Return an existing room or raise NotFound naming what is missing."""
        if wing not in self.wings:
            raise NotFound(f"no wing named {wing!r}")
        try:
            return self.rooms[(wing, room)]
        except KeyError:
            raise NotFound(f"wing {wing!r} has no room named {room!r}") from None

    # -- drawers ----------------------------------------------------------------------------
    def reserve(self, drawers: int) -> None:
        """Make room for ``drawers`` more drawers (their rows, words, chunks and a few edges
        each) now, so the writes that add them copy none of the palace's arrays.

        Why: a palace read from a snapshot holds its arrays at exactly their size, so the
        first drawer added after opening copies every per-drawer array (0.4 s at 20k
        drawers), while whoever waits behind that write waits too. A long-running host (the
        palace server) calls this before it answers anyone. Capacity at least doubles when
        it grows, as it does for one write; pages not yet written take no memory. Returns
        None. Cost: one copy of the arrays that grow."""
        store = self.drawers
        store.reserve(store.size + drawers)
        store.chunks.reserve(store.chunks.size + drawers)
        self.edges.reserve(len(self.edges.kind) + 4 * drawers)
        self.text_index.reserve(0, postings=64 * drawers, rows=drawers)

    def add_drawer(
        self,
        wing: str,
        room: str,
        content: str,
        source: str = "",
        source_file: str = "",
        importance: float = 0.5,
        closet: str | None = None,
        created_at: float | None = None,
        key: str = "",
        facts: bool = True,
    ) -> tuple[str, bool]:
        """Store verbatim ``content`` in ``wing``/``room``; return (drawer id, created now).

        The id is deterministic (content + wing + room, and ``key`` when one is given: an
        importer's "file, chunk n", so a block repeated in a file is kept as often as it
        occurs), so adding the same drawer twice changes nothing the second time. With
        :attr:`extract_on_add` the text's entities and facts are extracted
        (:meth:`extract_rows`); ``facts`` False takes its mentions only (a conversation's
        assistant turns: their "I" is not the user). Cost: one embedding plus one
        matrix-vector product for SIMILAR_TO links when they are enabled, plus extraction.
        """
        _check_content(content)
        if not 0.0 <= importance <= 1.0:
            raise ValidationError("importance must be between 0 and 1")
        if len(key) > MAX_KEY:
            raise ValidationError(f"a drawer key is at most {MAX_KEY} characters")
        if closet is not None:
            clean_name(closet, "closet")  # checked before the room is made: all or nothing
        r, _ = self.add_room(wing, room)
        did = drawer_id(content, r.wing, r.name, key)
        if did in self.drawers.row_of:
            return did, False
        parent = r.id
        if closet is not None:
            c = self.add_closet(r.wing, r.name, closet)
            parent, closet = c.id, c.name  # the drawer keeps the normalised closet name
        now = float(self.clock()) if created_at is None else float(created_at)
        row = self.drawers.add(
            did, content, r.wing, r.name, closet, source, source_file,
            {"importance": importance, "created_at": now, "accessed_at": now}, key=key,
        )
        self.edges.add(EdgeKind.HAS_DRAWER, parent, did)
        self.text_index.add(row, content)
        if not facts:
            self._no_facts.add(row)
        if self._pending is not None:
            self._pending.append(row)
        else:
            self._extract_new([row])
            if self.embedder is not None:
                self._embed([row])
                self._link_similar(row)
        return did, True

    def _link_similar(self, row: int) -> None:
        if self.similar_threshold is None or not self.drawers.has_vector[row]:
            return
        n = self.drawers.size
        self._link_row(row, self.drawers.vectors[:n] @ self.drawers.vectors[row],
                       self.drawers.has_vector[:n])

    def _link_row(self, row: int, sims: np.ndarray, linkable: np.ndarray) -> None:
        """Add SIMILAR_TO edges to ``row`` from the ``linkable`` drawers whose cosine
        ``sims`` reaches the threshold (the ``similar_limit`` best)."""
        sims = np.array(sims[: len(linkable)], dtype=np.float32)
        sims[~linkable] = -np.inf
        sims[row] = -np.inf
        candidates = np.flatnonzero(sims >= self.similar_threshold)
        if len(candidates) > self.similar_limit:
            candidates = candidates[np.argsort(-sims[candidates], kind="stable")]
            candidates = candidates[: self.similar_limit]
        me = self.drawers.ids[row]
        vectors = self.drawers.vectors
        for other in candidates:
            # The cosine kept is one dot product, the same whether the candidates came from a
            # matrix-vector or a (batch) matrix-matrix product, whose last bits differ.
            cosine = float(vectors[other] @ vectors[row])
            self.edges.add(EdgeKind.SIMILAR_TO, self.drawers.ids[other], me,
                           {"cosine": round(cosine, 6)})

    @property
    def drawer_aliases(self) -> dict[str, str]:
        """Ids drawers had before their text was edited -> their ids now."""
        return self.drawers.aliases

    @drawer_aliases.setter
    def drawer_aliases(self, value: dict[str, str]) -> None:
        self.drawers.aliases = dict(value)

    def row(self, drawer_id: str) -> int:
        """Return the store row of a drawer (by its id, or an id it had before an edit) or
        raise NotFound."""
        try:
            return self.drawers.row_of[drawer_id]
        except KeyError:
            if drawer_id in self.drawers.aliases:
                return self.drawers.row_of[self.drawers.aliases[drawer_id]]
            raise NotFound(f"no drawer with id {drawer_id!r}") from None

    def drawer(self, drawer_id: str) -> Drawer:
        """Return the drawer ``drawer_id`` as a record (read only; nothing is touched)."""
        row = self.row(drawer_id)
        s = self.drawers
        c = s.columns
        return Drawer(
            id=s.ids[row], key=s.key[row], wing=s.wing[row], room=s.room[row], closet=s.closet[row],
            content=s.content[row], source=s.source[row], source_file=s.source_file[row],
            importance=float(c["importance"][row]), created_at=float(c["created_at"][row]),
            accessed_at=float(c["accessed_at"][row]),
            exploitation=float(c["exploitation"][row]),
            exploration=float(c["exploration"][row]), embedded=bool(s.has_vector[row]),
        )

    def update_drawer(
        self,
        drawer_id: str,
        content: str | None = None,
        importance: float | None = None,
        source: str | None = None,
        source_file: str | None = None,
    ) -> Drawer:
        """Change a drawer and return it; new text is re-indexed and re-embedded.

        Identity follows content: new text gives the drawer the id of its new text (so the old
        text can be added again as a drawer of its own), and the old id stays an alias that
        still finds it. Everything is checked before anything changes: text that another
        drawer of the room already holds is refused. Cost: one embedding for new text, plus
        O(edges of the drawer) to re-point them.
        """
        row = self.row(drawer_id)
        if importance is not None and not 0.0 <= importance <= 1.0:
            raise ValidationError("importance must be between 0 and 1")
        new_id = None
        if content is not None and content != self.drawers.content[row]:
            _check_content(content)
            s = self.drawers
            new_id = drawer_id_of(content, s.wing[row], s.room[row], s.key[row])
            if new_id in s.row_of and s.row_of[new_id] != row:
                raise ValidationError(
                    f"drawer {new_id} in {s.wing[row]}/{s.room[row]} already holds that text; "
                    "delete one of the two instead")
        if importance is not None:
            self.drawers.columns["importance"][row] = importance
        if source is not None:
            self.drawers.source[row] = source
        if source_file is not None:
            self.drawers.source_file[row] = source_file
        if new_id is not None:
            assert content is not None
            self._rename_drawer(row, new_id)
            self.drawers.content[row] = content
            self.text_index.add(row, content)
            # The old text's vectors go first: nothing of them may stay (an opening window
            # kept for the rest, or the old vector while the new one is computed elsewhere).
            self.drawers.set_vector(row, np.zeros(self.drawers.dim, np.float32))
            if self.embedder is not None:
                self._embed([row])
        self.drawers.columns["accessed_at"][row] = float(self.clock())
        return self.drawer(self.drawers.ids[row])

    def _rename_drawer(self, row: int, new_id: str) -> None:
        """Move the drawer at ``row`` to ``new_id``: store, edges and diary follow; the old id
        becomes an alias. Cost: O(edges of the drawer)."""
        old = self.drawers.rename(row, new_id)
        self.edges.rename_node(old, new_id)
        self.diaries.rename(old, new_id)

    def delete_drawer(self, drawer_id: str) -> None:
        """Remove a drawer, its edges, its vector and its text from every index."""
        row = self.row(drawer_id)
        current = self.drawers.ids[row]  # ``drawer_id`` may be an id it had before an edit
        assert current is not None
        for edge in self.edges.touching(current):
            self.edges.remove(edge)
        self.text_index.remove(row)
        self.drawers.remove(current)

    def embed_rows(self, rows: np.ndarray, batch: int = 64,
                   progress: Progress | None = None, opening_first: bool = False) -> int:
        """Embed the drawers at ``rows`` with the palace's embedder; return how many rows
        the embedder answered for (those that got a vector, or the zero vector of a text it
        cannot read). Fewer than ``len(rows)`` only when the embedder computes elsewhere and
        has not been given the vectors of the rest (:class:`VectorsPending`): it stops there.
        A drawer holding its opening window only gets the rest; with ``opening_first``, a
        person's long turn without a vector gets its opening window only
        (:meth:`embedding_texts`).
        """
        if self.embedder is None:
            raise ValidationError("this palace has no embedder")
        rows = [int(r) for r in rows]
        for start in range(0, len(rows), batch):
            block = rows[start : start + batch]
            answered = self._embed(block, opening_first)
            if answered < len(block):
                return start + answered
            if progress is not None:
                progress(min(start + batch, len(rows)), len(rows))
        return len(rows)

    def embedding_queue(self) -> np.ndarray:
        """Return the rows of live drawers waiting for vectors, the most wanted first.

        What a person searches for first should be searchable by meaning first: their own
        turns (a user's turn of a conversation) come first, then short drawers (one window,
        at most ``chunk_size`` characters), then long ones (an assistant's long answers,
        long notes), and within each, the newest first (then by row); last, the drawers that
        hold their opening window's vector only and wait for the rest
        (:meth:`embedding_texts`). Why: a heavy user's export takes half an hour to embed in
        a browser tab; in this order their own words are ready first (a 20k export's 8,255
        own turns were mixed with short answers before, 84 % of the first 2,400 vectors).
        Drawers in a script the embedder does not read are not queued
        (:class:`palazzo.retrieval.scripts.Unread`: their words rank them). Cost: O(rows
        without a vector · log) plus, when some are turns, a pass over the conversations'
        turns, plus O(chunks) for the drawers waiting for the rest.
        """
        s = self.drawers
        rows = s.live_rows()
        rows = rows[~s.has_vector[rows]]
        unread = scripts.unread_mask(self, rows)
        if unread is not None:  # no model work on text the embedder does not read
            rows = rows[~unread]
        rest = s.chunks.opening_rows()
        if len(rest) and unread is not None:  # as reindex leaves them out
            keep = scripts.unread_mask(self, rest)
            rest = rest if keep is None else rest[~keep]
        if len(rows) >= 2:
            short = text_lengths(s.content, rows) <= (self.chunk_size or 0)
            own = self.roles_of(rows)[1]
            created = s.columns["created_at"][rows]
            rows = rows[np.lexsort((rows, -created, ~short, ~own))]
        if len(rest):
            rest = rest[np.lexsort((rest, -s.columns["created_at"][rest]))]
            rows = np.concatenate([rows, rest]).astype(np.intp, copy=False)
        return rows

    def embedding_texts(self, row: int, opening_first: bool = False
                        ) -> tuple[list[str], list[int], np.ndarray | None]:
        """Return what embedding drawer ``row`` asks of the embedder: (texts, the chunk kind
        of each, the vector that goes before theirs or None).

        Usually :meth:`parts`. A drawer holding its opening window only (its later windows
        still to come) asks for the rest, and its opening vector goes first. With
        ``opening_first``, a person's own turn of several windows asks for its opening window
        alone (kind :data:`~palazzo.core.columns.OPENING`) when it has none yet: searchable
        by meaning at a fraction of the model work (a 20k export's own turns are 2.7 M
        characters in opening windows of 4.4 M), the rest embedded after every drawer has a
        vector (:meth:`embedding_queue`). An opening window without a letter or digit gets
        no vector from some embedders and is not split off. Cost: :meth:`parts`.
        """
        s = self.drawers
        did = s.ids[row]
        if did in self.answers():
            return *self.parts(s.content[row], True), None
        texts, kinds = self.parts(s.content[row])
        if s.has_vector[row] and s.opening(row):
            return texts[1:], kinds[1:], s.vectors[row].copy()
        if (opening_first and not s.has_vector[row] and kinds.count(WINDOW) >= 2
                and did in self.own_turns() and any(ch.isalnum() for ch in texts[0])):
            return texts[:1], [OPENING], None
        return texts, kinds, None

    def pieces(self, content: str, answer: bool = False) -> list[str]:
        """Return the texts the vector side embeds for ``content``: the text itself, or its
        non-blank chunks when it is longer than ``chunk_size``, then its event sentences
        (:mod:`palazzo.memory.events`); for an assistant's ``answer``, its opening window
        alone. Cost: :meth:`parts`."""
        return self.parts(content, answer)[0]

    def parts(self, content: str, answer: bool = False) -> tuple[list[str], list[int]]:
        """Return :meth:`pieces` and the chunk kind of each (``core.columns.WINDOW`` for the
        windows, an event kind for the event sentences).

        An assistant's answer (``answer``) gets one vector, of its opening window: a long
        answer's later windows (code, lists, the details of an explanation) were four in
        five of a real export's vectors and most of its model time, for text that restates
        what the person asked; its words stay searchable whole (BM25), and the events of a
        person's life are in their own turns. Cost: O(len(content)) for the windows, plus
        finding the event sentences (an extraction of each)."""
        if self.chunk_size is None or len(content) <= self.chunk_size:
            texts = [content]
        else:
            texts = [c for c in chunks(content, self.chunk_size) if c.strip()]
        if answer:
            return texts[:1], [WINDOW]
        events = event_sentences(content)
        return texts + [t for t, _ in events], [WINDOW] * len(texts) + [k for _, k in events]

    def event_texts(self, row: int) -> list[str]:
        """Return the event sentences of drawer ``row``'s text, in the order :meth:`parts`
        gave their vectors (:func:`palazzo.memory.events.event_texts`). Why: search reads
        their words (:mod:`palazzo.retrieval.events`), and retrieval sits below the memory
        layer that finds them. Cost: two regular-expression scans and a sentence split."""
        return event_texts(self.drawers.content[row])

    def answers(self) -> frozenset[str]:
        """Return the ids of the drawers that hold an assistant's turn of a conversation
        (:meth:`parts` gives them one vector). Cost: :meth:`_turn_roles`."""
        return self._turn_roles()[1]

    def own_turns(self) -> frozenset[str]:
        """Return the ids of the drawers that hold a user's own turn of a conversation (the
        embedding queue puts them first; the status counts them apart). Cost:
        :meth:`_turn_roles`."""
        return self._turn_roles()[2]

    def roles_of(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return two boolean arrays over ``rows``: the drawer holds an assistant's answer,
        the drawer holds a person's own turn. Why: the embedding queue, the time left
        (:meth:`opening_later`) and the workload's count ask it of many rows at once. Cost:
        :meth:`_turn_roles`, then two set lookups a row (none without conversation turns)."""
        rows = np.asarray(rows, dtype=np.intp)
        _, answers, users = self._turn_roles()
        if not answers and not users:
            return np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=bool)
        ids = self.drawers.ids
        keys = [ids[r] for r in rows.tolist()]
        return (np.fromiter((k in answers for k in keys), dtype=bool, count=len(keys)),
                np.fromiter((k in users for k in keys), dtype=bool, count=len(keys)))

    def _turn_roles(self) -> tuple[tuple[int, int], frozenset[str], frozenset[str]]:
        """Return the cached (key, assistant turns' drawer ids, user turns' drawer ids), made
        again when the turns change in number (turns are added or dropped, never edited in
        place). Why: the status, the queue and every embedding step asked the same question
        of every turn. Cost: one pass over the turns when they changed, else none."""
        turns = self.conversations.turns
        key = (id(turns), len(turns))
        if self._roles is None or self._roles[0] != key:
            answers, users = set(), set()
            for t in turns.values():
                if t.role == "assistant":
                    answers.add(t.drawer_id)
                elif t.role == "user":
                    users.add(t.drawer_id)
            self._roles = (key, frozenset(answers), frozenset(users))
        return self._roles

    def opening_later(self, rows: np.ndarray) -> int:
        """Return about how many drawers at ``rows`` an ``opening_first`` embedding will give
        their opening window first, the rest in a second step: a person's own turns without
        a vector longer than ``chunk_size`` (:meth:`embedding_texts` also asks for two
        windows and a letter or digit in the opening one). Why: each takes two steps, which
        the time left must count. Cost: O(len(rows)) text lengths, a set lookup per long
        one."""
        s = self.drawers
        if self.chunk_size is None or not len(rows):
            return 0
        rows = np.asarray(rows, dtype=np.intp)
        rows = rows[~s.has_vector[rows]]
        long_rows = rows[text_lengths(s.content, rows) > self.chunk_size]
        return int(self.roles_of(long_rows)[1].sum())

    def _embed(self, rows: list[int], opening_first: bool = False) -> int:
        """Embed the drawers at ``rows`` (all their texts, :meth:`embedding_texts`, in one
        embedder call) and store the vectors; return how many rows, from the first, got
        theirs: all of them unless the vectors are being computed elsewhere and some have
        not arrived. Cost: one ``embed`` over about 1.2× the rows' text (one a row when some
        have not arrived)."""
        assert self.embedder is not None
        s = self.drawers
        unread = scripts.unread_mask(self, np.asarray(rows, dtype=np.intp))
        if unread is not None and unread.any():
            # Text the embedder does not read gets no vector (and loses one it had): its
            # words rank it (scripts.Unread).
            for r in np.asarray(rows)[unread].tolist():
                s.set_vector(r, np.zeros(s.dim, np.float32))
            kept = [r for r, u in zip(rows, unread.tolist(), strict=True) if not u]
            answered = self._embed(kept, opening_first) if kept else 0
            return len(rows) if answered == len(kept) else list(rows).index(kept[answered])
        asked = [self.embedding_texts(r, opening_first) for r in rows]
        try:
            vectors = self.embedder.embed([t for texts, _, _ in asked for t in texts])
        except VectorsPending:
            # The vectors are being computed elsewhere (the browser's embedding worker):
            # the drawers without theirs stay without, searchable by their words, until
            # the background embedding (``reindex``) gives them theirs.
            answered = 0
            while (len(rows) > 1 and answered < len(rows)
                   and self._embed([rows[answered]], opening_first)):
                answered += 1
            return answered
        at = 0
        for r, (texts, kinds, before) in zip(rows, asked, strict=True):
            got = vectors[at : at + len(texts)]
            at += len(texts)
            if before is not None:  # the rest of a drawer that had its opening window
                s.set_chunks(r, np.vstack([before[None, :], got]), kinds=[WINDOW, *kinds])
            elif kinds == [OPENING]:
                s.set_opening(r, got[0])
            elif len(texts) == 1:
                s.set_vector(r, got[0])
            else:
                s.set_chunks(r, got, kinds=kinds)
        return len(rows)

    def set_embedder(self, embedder: Embedder) -> None:
        """Use ``embedder`` from now on; vectors of another embedder are dropped (reindex)."""
        self.embedder = embedder
        if embedder.dim != self.drawers.dim:
            self.drawers.resize_vectors(embedder.dim)
        self.drawers.set_fingerprint(embedder.fingerprint, embedder.name)


def _check_content(content: str) -> None:
    if not isinstance(content, str) or not content.strip():
        raise ValidationError("drawer content must not be empty")
    if len(content) > MAX_CONTENT:
        raise ValidationError(f"drawer content is longer than {MAX_CONTENT} characters")

