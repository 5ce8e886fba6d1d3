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
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

from palazzo.core.model import MAX_CONTENT, MAX_META
from palazzo.core.schema import quote, validate
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

    ``replay`` (optional) returns, from the arguments and the result, the arguments that
    replay the call exactly whatever a later palazzo would choose on its own (a ``reindex``
    step names the drawers it tried); persistence journals those.

    ``packages`` names the packages the operation imports that a host may not have loaded
    yet (the browser loads SciPy only when the atlas first needs it): the host loads them
    before it runs the operation.

    ``own`` names the arguments whose contents the operation checks itself, in full and with
    its own messages (``import`` reads its ``document`` as the palace file reader reads a
    file; ``batch`` checks each call's arguments against that call's operation): the
    registry holds them to their schema but leaves the inside of them to the operation
    instead of to :func:`palazzo.core.schema.plain`.

    ``heavy`` marks a read that takes seconds on a big palace (at the scale generator's
    20,942 drawers: ``communities`` 12 s, ``atlas`` 1.4 s, ``summarize`` 0.8 s, ``export``
    0.7 s; every other read under 0.1 s): the palace server runs it in a forked child
    (:meth:`palazzo.persist.directory.PalaceDirectory.call`), so that it holds up no other
    call, nor this process's interpreter.
    """

    name: str
    summary: str
    schema: dict[str, Any]
    run: Runner
    mutates: bool = False
    atomic: bool = False
    own: tuple[str, ...] = ()
    replay: Callable[[dict[str, Any], Result], dict[str, Any]] | None = None
    packages: tuple[str, ...] = ()
    heavy: bool = False

    def missing_packages(self) -> list[str]:
        """Return those of :attr:`packages` that cannot be imported yet (a host loads them
        before it runs the operation). Cost: a module-spec lookup per package."""
        import importlib.util

        return [p for p in self.packages if importlib.util.find_spec(p) is None]

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
                 mutates: bool = False, atomic: bool = False,
                 own: tuple[str, ...] = (),
                 replay: Callable[[dict[str, Any], Result], dict[str, Any]] | None = None,
                 packages: tuple[str, ...] = (), heavy: bool = False
                 ) -> Callable[[Runner], Runner]:
        """Return the decorator that registers ``name`` with the decorated function."""
        def register(run: Runner) -> Runner:
            self.ops.append(Operation(name, summary, schema, run, mutates, atomic, own,
                                      replay, packages, heavy))
            return run
        return register


MAX_BATCH = 10_000  # calls in one batch
# Operations whose batches embed and link their new drawers together at the end: none of them
# reads vectors, so deferring does not change what they do (see Palace.deferred).
DEFERRABLE = frozenset({"add_drawer", "add_wing", "add_room", "add_turn", "import_conversation",
                        "delete_drawer", "diary_write", "kg_add", "kg_entity"})


class Registry:
    """Named operations, looked up and validated in one place.

    With ``batch`` the registry also has the operation ``batch``: several calls run as one
    (see :meth:`_batch`), which is how imports write a thousand drawers with one journal
    record and one durable write instead of a thousand.
    """

    def __init__(self, *groups: Operations, batch: bool = False) -> None:
        self._ops: dict[str, Operation] = {}
        for group in groups:
            for op in group.ops:
                self.add(op)
        if batch:
            self.add(Operation(
                "batch", "Run several operations as one, in order: with a palace kept on disk "
                "they land together or not at all (one journal record, one durable write). "
                "Every call's arguments are checked before any runs; drawers added by a "
                "batch of adds are embedded and linked together at its end.",
                obj({"calls": {"type": "array", "minItems": 1, "maxItems": MAX_BATCH,
                               "items": obj({"name": NAME, "args": {"type": "object"}},
                                            ("name",))}}, ("calls",)),
                self._batch, mutates=True, own=("calls",)))

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
            raise UnknownOperation(f"no operation named {quote(name)}; known: {known}") \
                from None

    def describe(self) -> list[dict[str, Any]]:
        """Return every operation's description, sorted by name."""
        return [self._ops[n].describe() for n in self.names()]

    def check(self, name: str, args: dict[str, Any] | None = None) -> Operation:
        """Return the operation ``name`` after checking ``args`` against its schema; raise
        :class:`ValidationError` (or :class:`UnknownOperation`) otherwise. Touches no palace.

        Besides the schema, ``args`` must be something every host can carry (see
        :func:`palazzo.core.schema.plain`): nesting at most 100 deep, finite numbers within a
        double's range, Unicode text; so the CLI, MCP and the browser refuse the same input
        with the same :class:`ValidationError`. Cost: O(size of ``args``)."""
        op = self.get(name)
        args = {} if args is None else args
        if not isinstance(args, dict):
            raise ValidationError(f"arguments of {name!r} must be an object")
        validate(args, op.schema, where=f"{name} arguments", own=op.own)
        return op

    def _batch(self, target: Any, args: dict[str, Any]) -> Result:
        """Run ``args["calls"]`` on ``target`` in order and return ``{"results": [...]}``.

        Every call is checked against its schema first (a bad one raises
        :class:`ValidationError` naming its place, and nothing ran). A call that fails while
        running raises its error with ``batch_index`` set to its place; the calls before it
        have run (a store keeping the palace reloads it from disk, so on disk the batch did
        not happen). Cost: the calls', with their drawers embedded and linked in blocks.
        """
        calls = args["calls"]
        ops = []
        for i, c in enumerate(calls):
            if c["name"] == "batch":
                raise ValidationError(f"batch call {i}: a batch cannot hold a batch")
            try:
                ops.append(self.check(c["name"], c.get("args", {})))
            except ValidationError as err:
                inner = "" if err.field is None else f".{err.field}"
                raise ValidationError(f"batch call {i} ({c['name']}): {err}",
                                      field=f"calls[{i}].args{inner}") from None
        deferred = getattr(target, "deferred", None)
        together = deferred is not None and all(op.name in DEFERRABLE for op in ops)
        results = []
        with deferred() if together else nullcontext():
            for i, (op, c) in enumerate(zip(ops, calls, strict=True)):
                try:
                    results.append(op.run(target, c.get("args", {})))
                except Exception as err:
                    err.batch_index = i  # type: ignore[attr-defined]
                    raise
        return {"results": results}

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
