"""palazzo: a memory palace for AI agents.

The engine is pure Python + NumPy and runs unchanged under CPython and Pyodide. Every
user-visible action is a named operation in :mod:`palazzo.ops`; hosts (the browser worker
bridge, the Panel UI, the CLI, the MCP server) call operations and never reach around them::

    import palazzo
    palace = palazzo.Palace()
    palazzo.call(palace, "add_drawer", {"wing": "garden", "room": "roses",
                                        "content": "Prune roses in late winter."})
"""

from palazzo._version import __version__
from palazzo.errors import NotFound, PalazzoError, UnknownOperation, ValidationError
from palazzo.ops import REGISTRY, bind, call, catalog, default_registry
from palazzo.ops.registry import Operation, Operations, Registry
from palazzo.palace import Palace

__all__ = [
    "REGISTRY",
    "NotFound",
    "Operation",
    "Operations",
    "Palace",
    "PalazzoError",
    "Registry",
    "UnknownOperation",
    "ValidationError",
    "__version__",
    "bind",
    "call",
    "catalog",
    "default_registry",
]
