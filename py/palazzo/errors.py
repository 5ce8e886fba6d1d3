"""The one error family every palazzo failure belongs to.

Hosts turn a :class:`PalazzoError` into a structured error for their caller (an RPC reply in
the browser, a one-line message in the CLI, an MCP error), so messages are written for the
person who has to act on them.
"""

from __future__ import annotations


class PalazzoError(Exception):
    """Base of every error palazzo raises on purpose.

    ``code`` is a stable machine-readable name; the message is for people.
    """

    code = "palazzo_error"

    def to_dict(self) -> dict[str, str]:
        """Return the JSON-able form hosts send across process or thread boundaries."""
        return {"code": self.code, "type": type(self).__name__, "message": str(self)}


class ValidationError(PalazzoError):
    """Arguments of an operation do not match its schema; nothing was changed."""

    code = "invalid_arguments"


class UnknownOperation(PalazzoError):
    """A host asked for an operation name the registry does not have."""

    code = "unknown_operation"


class NotFound(PalazzoError):
    """The drawer, wing, room or other named thing does not exist in this palace."""

    code = "not_found"


class ImportRejected(PalazzoError):
    """A palace file failed validation; the open palace was left as it was."""

    code = "import_rejected"
