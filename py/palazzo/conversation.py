"""Conversation memory as a DAG of turns (issue 5). Scaffold: filled in by the kernel work."""

from __future__ import annotations

from typing import Any


class Conversations:
    """Every conversation turn of one palace and the reply/branch/merge edges between them."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able conversations section of the palace file."""
        return {}

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str) -> Conversations:
        """Return the conversations read from ``value``; raise ImportRejected on bad input."""
        return cls(palace)
