"""The temporal knowledge graph (issue 5). Scaffold: filled in by the KG work."""

from __future__ import annotations

from typing import Any


class KnowledgeGraph:
    """Triples and the entity alias table of one palace."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able KG section of the palace file."""
        return {}

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str) -> KnowledgeGraph:
        """Return the KG read from ``value``; raise ImportRejected naming the bad place."""
        return cls(palace)
