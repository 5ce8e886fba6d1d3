"""palazzo: a memory palace for AI agents.

The engine is pure Python + NumPy and runs unchanged under CPython and Pyodide. Every
user-visible action is a named operation in :mod:`palazzo.ops`; hosts (the browser worker
bridge, the Panel UI, the CLI, the MCP server) call operations and never reach around them.
"""

from palazzo.errors import PalazzoError, UnknownOperation, ValidationError
from palazzo.ops import Operation, Registry, default_registry
from palazzo.palace import Palace

__version__ = "0.1.0"

__all__ = [
    "Operation",
    "Palace",
    "PalazzoError",
    "Registry",
    "UnknownOperation",
    "ValidationError",
    "__version__",
    "default_registry",
]
