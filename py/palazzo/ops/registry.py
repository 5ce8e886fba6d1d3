"""The bottom of the operations layer: :class:`Operation`, :class:`Registry`, the
:class:`Operations` a module registers its operations in, and the JSON Schema pieces their
inputs are written with.

Each user-visible action is an :class:`Operation` with a name, a JSON Schema for its input and
a function returning a JSON-able dict. An operation is registered where its function is
written (``@operation(...)`` above the ``def``, as the MCP Python SDK's ``@server.tool()``);
:mod:`palazzo.ops` assembles every module's operations into one registry, which the MCP
server, the browser worker, the command line and the Panel interface all call.

This module imports no palace and no operations module: it is what they import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from palazzo.core.model import MAX_CONTENT, MAX_META
from palazzo.core.schema import validate
from palazzo.errors import UnknownOperation, ValidationError

Result = dict[str, Any]
# The target is a Palace for the engine's operations (a Library for the library's): the
# registry only hands it to the operation, so it never needs the type.
Runner = Callable[[Any, dict[str, Any]], Result]


@dataclass(slots=True, frozen=True)
class Operation:
    """One named action on a palace.

    ``mutates`` tells persistence whether the call must be journalled. ``atomic`` is a promise
    of a mutating operation: it raises a :class:`PalazzoError` only before it has changed
    anything, so persistence need not reload the palace after such a failure (a reload costs
    a boot; other failures still get one).
    """

    name: str
    summary: str
    schema: dict[str, Any]
    run: Runner
    mutates: bool = False
    atomic: bool = False

    def describe(self) -> dict[str, Any]:
        """Return the operation's public description (name, summary, input schema)."""
        return {
            "name": self.name,
            "summary": self.summary,
            "input_schema": self.schema,
            "mutates": self.mutates,
        }


@dataclass(slots=True)
class Operations:
    """The operations one module defines, in the order they are written.

    Calling it with an operation's name, summary and schema returns a decorator that
    registers the function below it and returns the function unchanged, so the schema stands
    beside the code that reads it. Exists so that a module needs no ``register`` function
    listing its operations far from their code.
    """

    ops: list[Operation] = field(default_factory=list)

    def __call__(self, name: str, summary: str, schema: dict[str, Any], *,
                 mutates: bool = False, atomic: bool = False) -> Callable[[Runner], Runner]:
        """Return the decorator that registers ``name`` with the decorated function."""
        def register(run: Runner) -> Runner:
            self.ops.append(Operation(name, summary, schema, run, mutates, atomic))
            return run
        return register


class Registry:
    """Named operations, looked up and validated in one place."""

    def __init__(self, *groups: Operations) -> None:
        self._ops: dict[str, Operation] = {}
        for group in groups:
            for op in group.ops:
                self.add(op)

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

    def check(self, name: str, args: dict[str, Any] | None = None) -> Operation:
        """Return the operation ``name`` after checking ``args`` against its schema; raise
        :class:`ValidationError` (or :class:`UnknownOperation`) otherwise. Touches no palace."""
        op = self.get(name)
        args = {} if args is None else args
        if not isinstance(args, dict):
            raise ValidationError(f"arguments of {name!r} must be an object")
        validate(args, op.schema, where=f"{name} arguments")
        return op

    def call(self, target: Any, name: str, args: dict[str, Any] | None = None) -> Result:
        """Validate ``args`` against the operation's schema, run it on ``target`` (the palace)
        and return its result.

        Invalid arguments raise :class:`ValidationError` before the palace is touched.
        """
        op = self.check(name, args)
        return op.run(target, {} if args is None else args)


def obj(props: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Return the JSON Schema of an object with exactly ``props`` (``required`` among them)."""
    return {"type": "object", "properties": props, "required": list(required),
            "additionalProperties": False}


NAME = {"type": "string", "minLength": 1, "maxLength": 200}
TEXT = {"type": "string", "minLength": 1, "maxLength": MAX_CONTENT}
OPT_TEXT = {"type": "string", "maxLength": MAX_META}  # metadata: descriptions, sources
GOAL = {"type": "string", "minLength": 1, "maxLength": 10_000}  # what an agent looks for
IMPORTANCE = {"type": "number", "minimum": 0, "maximum": 1}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 1000}
THRESHOLD = {"type": "number", "minimum": -1, "maximum": 1}
