"""The provenance kernel: policies, context slices and admissibility tokens (issue 5).

Scaffold: filled in by the kernel work.
"""

from __future__ import annotations

from typing import Any


class Provenance:
    """The policy registry and the signing keyring of one palace."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self.keyring: Any = None  # secret signing keys: never exported, kept across imports

    def to_json(self) -> dict[str, Any]:
        """Return the JSON-able provenance section of the palace file (never the keys)."""
        return {}

    @classmethod
    def from_json(cls, palace: Any, value: Any, where: str) -> Provenance:
        """Return the policies read from ``value``; raise ImportRejected on bad input."""
        return cls(palace)
