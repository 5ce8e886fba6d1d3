"""palazzo: a memory palace for AI agents.

The engine is pure Python + NumPy and runs unchanged under CPython and Pyodide. Every
user-visible action is a named operation in :mod:`palazzo.ops`; hosts (the browser worker
bridge, the Panel UI, the CLI, the MCP server) call operations and never reach around them::

    import palazzo
    palace = palazzo.Palace()
    palazzo.call(palace, "add_drawer", {"wing": "garden", "room": "roses",
                                        "content": "Prune roses in late winter."})
"""


from __future__ import annotations

from typing import TYPE_CHECKING, Any

from palazzo._version import __version__
from palazzo.errors import NotFound, PalazzoError, UnknownOperation, ValidationError

if TYPE_CHECKING:
    from palazzo.ops import REGISTRY, bind, call, catalog, default_registry
    from palazzo.ops.registry import Operation, Operations, Registry
    from palazzo.palace import Palace

# The engine's names, imported on first use (PEP 562): ``import palazzo.errors`` or a
# command that needs no palace (``palazzo hook`` talking to a running server) then loads
# neither NumPy nor the operations (0.19 s of a command's start).
_LAZY = {"REGISTRY": "palazzo.ops", "bind": "palazzo.ops", "call": "palazzo.ops",
         "catalog": "palazzo.ops", "default_registry": "palazzo.ops",
         "Operation": "palazzo.ops.registry", "Operations": "palazzo.ops.registry",
         "Registry": "palazzo.ops.registry", "Palace": "palazzo.palace"}


def __getattr__(name: str) -> Any:
    """Return the engine name ``name`` from its module, imported now (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'palazzo' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
