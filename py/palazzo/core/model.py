"""The palace's node and edge kinds and its records (GraphPalace schema, seed 000 §3.1).

Per-drawer and per-edge numbers (embeddings, pheromones, costs, times) live in NumPy arrays in
:mod:`palazzo.core.columns`; the records here are the small, named things around them.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from palazzo.errors import ValidationError


class NodeKind(StrEnum):
    PALACE = "palace"
    WING = "wing"
    ROOM = "room"
    CLOSET = "closet"
    DRAWER = "drawer"
    ENTITY = "entity"
    AGENT = "agent"


class EdgeKind(StrEnum):
    HAS_WING = "HAS_WING"
    HAS_ROOM = "HAS_ROOM"
    HAS_CLOSET = "HAS_CLOSET"
    HAS_DRAWER = "HAS_DRAWER"
    HALL = "HALL"
    TUNNEL = "TUNNEL"
    SIMILAR_TO = "SIMILAR_TO"
    RELATES_TO = "RELATES_TO"
    HAS_AGENT = "HAS_AGENT"
    FOCUSES_ON = "FOCUSES_ON"
    WROTE = "WROTE"
    REFERENCES = "REFERENCES"  # drawer -> entity it mentions (extraction), with confidence


HIERARCHY = frozenset(
    {EdgeKind.HAS_WING, EdgeKind.HAS_ROOM, EdgeKind.HAS_CLOSET, EdgeKind.HAS_DRAWER}
)

# Structural base costs (seed 000 §3.1 DDL: HALL 0.5, TUNNEL 0.7; RELATES_TO 1.0): walking
# down the hierarchy is cheapest, knowledge-graph hops dearest.
BASE_COST: dict[EdgeKind, float] = {
    EdgeKind.HAS_WING: 0.2,
    EdgeKind.HAS_ROOM: 0.2,
    EdgeKind.HAS_CLOSET: 0.2,
    EdgeKind.HAS_DRAWER: 0.2,
    EdgeKind.HALL: 0.5,
    EdgeKind.TUNNEL: 0.7,
    EdgeKind.SIMILAR_TO: 0.6,
    EdgeKind.RELATES_TO: 1.0,
    EdgeKind.HAS_AGENT: 0.3,
    EdgeKind.FOCUSES_ON: 0.3,
    EdgeKind.WROTE: 0.3,
    # A mention: dearer than walking the hierarchy or a similarity link, cheaper than a fact
    # hop, so a path through what a drawer names beats one through unrelated facts.
    EdgeKind.REFERENCES: 0.8,
}

PALACE_ID = "palace"
MAX_NAME = 200
MAX_META = 10_000  # characters of a description, a source, a file name: metadata, not text
# How far long work has got, (done, total): what embedding runs and importers report to the
# progress bars and widgets of their hosts.
Progress = Callable[[int, int], None]
MAX_CONTENT = 5_000_000  # characters: one drawer is a memory, not a data dump
# Characters a chunk of a long drawer (about 110 MiniLM word pieces; it reads at most 256):
# chosen on the long-conversation sets and dev50 (docs/benchmarks.md, "Chunk size").
# Palaces keep the size they were made with (their settings).
CHUNK_SIZE = 500


def clean_name(value: str, what: str) -> str:
    """Return ``value`` trimmed and NFC-normalised; raise ValidationError if it is unusable.

    Wing, room and closet names are user text used as keys: empty names, names with control
    characters or over 200 characters are refused rather than silently changed.
    """
    name = unicodedata.normalize("NFC", value.strip())
    if not name:
        raise ValidationError(f"{what} name must not be empty")
    if len(name) > MAX_NAME:
        raise ValidationError(f"{what} name is longer than {MAX_NAME} characters")
    if any(unicodedata.category(c) == "Cc" for c in name):
        raise ValidationError(f"{what} name must not contain control characters")
    return name


def wing_id(wing: str) -> str:
    return f"wing:{wing}"


def room_id(wing: str, room: str) -> str:
    return f"room:{wing}/{room}"


def closet_id(wing: str, room: str, closet: str) -> str:
    return f"closet:{wing}/{room}/{closet}"


MAX_KEY = 1024  # characters of a drawer's identity key


def drawer_id(content: str, wing: str, room: str, key: str = "") -> str:
    """Return the deterministic id of a drawer: the same text in the same room is one drawer.

    sha256 over wing, room and content with a separator no name may contain (names refuse
    control characters), so ("a", "b c") and ("a b", "c") never collide. A non-empty ``key``
    (an importer's "file f, chunk 3") joins the identity, length-prefixed so it cannot run
    into the content: the same text twice in one file is then two drawers. Cost: one sha256
    over the text.
    """
    head = f"key\x1f{wing}\x1f{room}\x1f{len(key)}\x1f{key}\x1f" if key else f"{wing}\x1f{room}\x1f"
    digest = hashlib.sha256(f"{head}{content}".encode()).hexdigest()
    return f"drawer_{digest[:24]}"


class Later:
    """A part of a palace that a reader leaves unread until it is first used.

    ``make()`` returns the part; ``raw`` is what it is made from (a snapshot section's JSON
    bytes), which a writer may store again as it is while the part was never made. The
    palace holds one of these in place of its knowledge graph, conversations, provenance or
    diaries until an operation touches them (see ``Palace``'s sections). Cost: none until
    made.
    """

    __slots__ = ("make", "raw")

    def __init__(self, make: Callable[[], Any], raw: bytes | memoryview | None = None) -> None:
        self.make = make
        self.raw = raw


@dataclass(slots=True)
class Wing:
    name: str
    description: str = ""
    created_at: float = 0.0

    @property
    def id(self) -> str:
        return wing_id(self.name)


@dataclass(slots=True)
class Room:
    wing: str
    name: str
    description: str = ""
    created_at: float = 0.0
    source: str = ""  # what the room holds elsewhere (an imported conversation's id), or ""

    @property
    def id(self) -> str:
        return room_id(self.wing, self.name)


@dataclass(slots=True)
class Closet:
    wing: str
    room: str
    name: str
    summary: str = ""
    created_at: float = 0.0

    @property
    def id(self) -> str:
        return closet_id(self.wing, self.room, self.name)


@dataclass(slots=True)
class Entity:
    """A knowledge-graph node (person, concept, event, place); the KG issue fills these."""

    id: str
    name: str
    type: str = "concept"
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Agent:
    """A specialist navigator with a domain focus; its diary lives in its own wing."""

    id: str
    name: str
    focus: str = ""
    archetype: str = "balanced"
    created_at: float = 0.0
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Drawer:
    """A drawer as operations return it: verbatim content plus its metadata and pheromones."""

    id: str
    wing: str
    room: str
    closet: str | None
    content: str
    source: str
    source_file: str
    importance: float
    created_at: float
    accessed_at: float
    exploitation: float
    exploration: float
    embedded: bool
    key: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form of the drawer."""
        return {
            "id": self.id,
            "wing": self.wing,
            "room": self.room,
            "closet": self.closet,
            "content": self.content,
            "source": self.source,
            "source_file": self.source_file,
            "importance": self.importance,
            "created_at": self.created_at,
            "accessed_at": self.accessed_at,
            "exploitation": self.exploitation,
            "exploration": self.exploration,
            "embedded": self.embedded,
            "key": self.key,
        }
