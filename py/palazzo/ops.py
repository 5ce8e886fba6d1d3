"""The operations registry: the one surface every host drives.

Each user-visible action is an :class:`Operation` with a name, a JSON Schema for its input and
a function returning a JSON-able dict. The MCP server lists and calls them, the browser
worker's RPC calls them, the CLI exposes them and the Panel UI calls them.
"""

from __future__ import annotations

import importlib.util
import platform
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from palazzo.errors import UnknownOperation, ValidationError
from palazzo.palace import Palace
from palazzo.schema import validate

Result = dict[str, Any]
Runner = Callable[[Palace, dict[str, Any]], Result]


@dataclass(slots=True, frozen=True)
class Operation:
    """One named action on a palace.

    ``mutates`` tells persistence whether the call must be journalled.
    """

    name: str
    summary: str
    schema: dict[str, Any]
    run: Runner
    mutates: bool = False

    def describe(self) -> dict[str, Any]:
        """Return the operation's public description (name, summary, input schema)."""
        return {
            "name": self.name,
            "summary": self.summary,
            "input_schema": self.schema,
            "mutates": self.mutates,
        }


class Registry:
    """Named operations, looked up and validated in one place."""

    def __init__(self) -> None:
        self._ops: dict[str, Operation] = {}

    def add(self, op: Operation) -> Operation:
        """Register ``op`` and return it; a second operation of the same name is a bug."""
        if op.name in self._ops:
            raise ValueError(f"operation {op.name!r} is registered twice")
        self._ops[op.name] = op
        return op

    def names(self) -> list[str]:
        """Return the registered operation names in sorted order."""
        return sorted(self._ops)

    def get(self, name: str) -> Operation:
        """Return the operation called ``name`` or raise :class:`UnknownOperation`."""
        try:
            return self._ops[name]
        except KeyError:
            known = ", ".join(self.names())
            raise UnknownOperation(f"no operation named {name!r}; known: {known}") from None

    def describe(self) -> list[dict[str, Any]]:
        """Return every operation's description, sorted by name."""
        return [self._ops[n].describe() for n in self.names()]

    def call(self, palace: Palace, name: str, args: dict[str, Any] | None = None) -> Result:
        """Validate ``args`` against the operation's schema, run it and return its result.

        Invalid arguments raise :class:`ValidationError` before the palace is touched.
        """
        op = self.get(name)
        args = {} if args is None else args
        if not isinstance(args, dict):
            raise ValidationError(f"arguments of {name!r} must be an object")
        validate(args, op.schema, where=f"{name} arguments")
        return op.run(palace, args)


def _palace_status(palace: Palace, args: dict[str, Any]) -> Result:
    from palazzo import __version__

    return {
        "name": palace.name,
        "created_at": palace.created_at,
        **palace.counts(),
        "engine": {
            "version": __version__,
            "python": platform.python_version(),
            "platform": sys.platform,
            # SciPy brings BLAS for large matmuls; in the browser it loads after first render.
            "scipy": importlib.util.find_spec("scipy") is not None,
        },
    }


def default_registry() -> Registry:
    """Return a new registry holding every built-in operation.

    A new registry each call keeps hosts free of shared global state.
    """
    reg = Registry()
    reg.add(
        Operation(
            name="palace_status",
            summary="Name, size (wings, rooms, drawers) and engine version of the open palace.",
            schema={"type": "object", "properties": {}, "additionalProperties": False},
            run=_palace_status,
        )
    )
    return reg
