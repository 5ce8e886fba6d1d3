"""Every error palazzo raises on purpose, in one place.

Hosts turn a :class:`PalazzoError` into a structured error for their caller (an RPC reply in
the browser, a one-line message in the CLI, an MCP tool error), so messages are written for the
person who has to act on them, and each class carries a stable ``code``::

    PalazzoError                 palazzo_error       the family; never raised bare by the engine
    ├── ValidationError          invalid_arguments   arguments do not fit; nothing was changed
    │   └── NotAdmissible        not_admissible      a slice bundle or token failed verification
    ├── UnknownOperation         unknown_operation   no operation of that name
    ├── NotFound                 not_found           no such drawer, wing, room, entity, turn...
    ├── ImportRejected           import_rejected     a file failed validation; nothing changed
    ├── ImportInterrupted        import_interrupted  a checked plan failed part-way
    ├── StorageError             storage_error       disk full, permissions, a lost handle
    │   ├── SnapshotDamaged      snapshot_damaged    a snapshot file is torn or corrupt
    │   └── NotLoaded            not_loaded          a file the host keeps but has not read
    │                                                 into memory yet (the browser's mirror)
    ├── ReadOnly                 read_only           another tab or process holds the palace
    │   └── PalaceDamaged        palace_damaged      its files are damaged: read-only until
    │                                                 repaired
    ├── WeightsError             embedder_weights    the MiniLM weights are missing or wrong
    ├── Unauthorized             unauthorized        no token, an unknown or an expired one
    │                                                 (palazzo serve, HTTP 401)
    ├── Forbidden                forbidden           the token does not reach that operation
    │                                                 or wing (palazzo serve, HTTP 403)
    ├── VectorsPending           vectors_pending     vectors are being computed elsewhere
    └── PackageMissing           package_missing     a library an operation needs is not
                                                     loaded (in the browser: not yet)

    RpcError                     (a JSON-RPC number) the MCP wire's error answer: a protocol
                                                     reply, not a palace failure

Control-flow exceptions that never reach a caller (``_Refused`` and the like) stay private to
the module or subpackage that raises and catches them.
"""

from __future__ import annotations

from typing import Any


class PalazzoError(Exception):
    """Base of every error palazzo raises on purpose.

    ``code`` is a stable machine-readable name; the message is for people.
    """

    code = "palazzo_error"

    def to_dict(self) -> dict[str, str]:
        """Return the JSON-able form hosts send across process or thread boundaries."""
        return {"code": self.code, "type": type(self).__name__, "message": str(self)}


class ValidationError(PalazzoError):
    """Arguments of an operation do not match its schema; nothing was changed.

    ``field`` is the path of the argument at fault ("wing", "bundle.token", "tags[1]") when
    one is, else None, so a form can show the sentence next to that field.
    """

    code = "invalid_arguments"

    def __init__(self, message: str = "", field: str | None = None) -> None:
        super().__init__(message)
        self.field = field

    def to_dict(self) -> dict[str, str]:
        """Return the JSON-able form, with ``field`` when the error names one."""
        out = super().to_dict()
        if self.field is not None:
            out["field"] = self.field
        return out


class NotAdmissible(ValidationError):
    """A bundle or token failed verification; ``verdict`` (a provenance ``Verdict``, with
    ``reason`` and ``detail``) says why."""

    code = "not_admissible"

    def __init__(self, verdict: Any) -> None:
        super().__init__(f"not admissible ({verdict.reason}): {verdict.detail}")
        self.verdict = verdict


class UnknownOperation(PalazzoError):
    """A host asked for an operation name the registry does not have."""

    code = "unknown_operation"


class NotFound(PalazzoError):
    """The drawer, wing, room or other named thing does not exist in this palace."""

    code = "not_found"


class ImportRejected(PalazzoError):
    """A palace file failed validation; the open palace was left as it was."""

    code = "import_rejected"


class ImportInterrupted(PalazzoError):
    """A checked plan failed part-way while being applied; the calls before it stay applied.

    Applying the same plan again finishes it: what is already there is not added twice.
    """

    code = "import_interrupted"


class StorageError(PalazzoError):
    """Storage failed (disk full, permissions, a lost handle); the message says what."""

    code = "storage_error"


class SnapshotDamaged(StorageError):
    """A palace snapshot file is torn, corrupt or not a snapshot at all; boot falls back to
    the generation before, or rebuilds the palace around the damage. ``partial`` is what
    still verifies, when the snapshot can say (its meta and pages are whole), else None."""

    code = "snapshot_damaged"

    def __init__(self, message: str = "", partial: Any = None) -> None:
        super().__init__(message)
        self.partial = partial


class NotLoaded(StorageError):
    """A file of the palace that the host keeps in storage but did not read into its memory
    mirror (the browser reads an older generation's snapshot only when boot needs it);
    ``name`` is the file. The store asks for it and the host reads it and boots again."""

    code = "not_loaded"

    def __init__(self, name: str) -> None:
        super().__init__(f"{name} has not been read from storage yet")
        self.name = name


class ReadOnly(PalazzoError):
    """The palace is open for writing elsewhere (another tab or process); this copy reads."""

    code = "read_only"


class PalaceDamaged(ReadOnly):
    """The palace's files are damaged (not a crash's torn tail: bytes that were written and
    acknowledged no longer verify, or are missing). The palace opened read-only with what
    still verifies; nothing is written until it is repaired, which keeps every damaged file
    beside the palace."""

    code = "palace_damaged"


class WeightsError(PalazzoError):
    """The MiniLM weights file is missing, unreadable or not a palazzo ``minilm.npz``."""

    code = "embedder_weights"


class VectorsPending(PalazzoError):
    """An embedder whose vectors come from elsewhere (the browser's embedding worker) has
    not been given the vectors of some texts yet.

    The engine catches it where a vector can wait: a new drawer is stored and searchable by
    its words at once and gets its vector from the background embedding; a search without
    its query's vector ranks by words alone. ``count`` is how many texts lack a vector.
    """

    code = "vectors_pending"

    def __init__(self, count: int) -> None:
        super().__init__(f"the vectors of {count} text(s) are still being computed; "
                         "try again in a moment")
        self.count = count


class RpcError(Exception):
    """A JSON-RPC error to answer a request with (``code``, message, optional ``data``).

    Outside the :class:`PalazzoError` family on purpose: its ``code`` is the protocol's number
    (-32700 parse error, -32602 invalid params, ...), and it is an answer on the MCP wire, not
    a failure of the palace.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-RPC ``error`` member."""
        out: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.data is not None:
            out["data"] = self.data
        return out


class PackageMissing(PalazzoError):
    """An operation needs a library that cannot be imported here: NetworkX for the atlas and
    the communities. In the browser the worker loads it a few seconds after the page opens,
    so the message says to try again; under CPython it is a dependency of the package."""

    code = "package_missing"

    def __init__(self, package: str, needed_for: str) -> None:
        super().__init__(f"{needed_for} needs the {package} package, which is not loaded "
                         "(in the browser it arrives a few seconds after the page opens: "
                         "try again in a moment)")
        self.package = package


class Unauthorized(PalazzoError):
    """A palace server asked for a token and got none, an unknown one or an expired one."""

    code = "unauthorized"


class Forbidden(PalazzoError):
    """The token does not reach the operation or the wing asked for; nothing was changed."""

    code = "forbidden"
