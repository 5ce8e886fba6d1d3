"""Every operation, assembled: the one surface every host drives.

Each module here registers the operations of one noun next to their functions
(:mod:`~palazzo.ops.palace`, :mod:`~palazzo.ops.kg`, :mod:`~palazzo.ops.navigation`,
:mod:`~palazzo.ops.pheromone`, :mod:`~palazzo.ops.agents`, :mod:`~palazzo.ops.diary`,
:mod:`~palazzo.ops.conversation`, :mod:`~palazzo.ops.provenance`, :mod:`~palazzo.ops.memory`,
:mod:`~palazzo.ops.upkeep`, :mod:`~palazzo.ops.communities`);
this package puts them in
one :class:`Registry`. :func:`call` runs one operation on a palace: the way every host and
every script reaches the engine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from palazzo.ops import (
    agents,
    communities,
    conversation,
    diary,
    kg,
    memory,
    navigation,
    palace,
    pheromone,
    provenance,
    upkeep,
)
from palazzo.ops.registry import Operation, Operations, Registry, Result

MODULES = (palace, pheromone, navigation, agents, diary, kg, conversation, provenance, memory,
           upkeep, communities)


def default_registry() -> Registry:
    """Return a new registry holding every built-in operation (for hosts that extend it).

    Cost: one dict insert an operation (all of them, ``batch`` included)."""
    return Registry(*(m.operation for m in MODULES), batch=True)


REGISTRY = default_registry()


def catalog() -> list[dict[str, Any]]:
    """Return every operation's name, summary, input schema and whether it mutates."""
    return REGISTRY.describe()


def call(target: Any, name: str, args: dict[str, Any] | None = None) -> Result:
    """Run the operation ``name`` on the palace ``target`` and return its JSON-able result.

    ``args`` is checked against the operation's schema first: invalid arguments raise
    :class:`~palazzo.errors.ValidationError` and change nothing. The palace is not journaled:
    a host that keeps palaces on disk calls its store (:mod:`palazzo.persist`) instead.
    """
    return REGISTRY.call(target, name, args)


def bind(target: Any) -> Callable[..., Result]:
    """Return ``call`` bound to the palace ``target``: a function of (name, args=None), the
    shape importers and the demo builder take (as a store's or a bridge's ``call``)."""
    def bound(name: str, args: dict[str, Any] | None = None) -> Result:
        return REGISTRY.call(target, name, args)
    return bound


__all__ = ["MODULES", "REGISTRY", "Operation", "Operations", "Registry", "bind", "call",
           "catalog", "default_registry"]
