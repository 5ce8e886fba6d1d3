"""NetworkX, imported when an operation first needs it.

The atlas's centrality and the palace's communities use NetworkX rather than graph
algorithms written here. The engine imports it only inside the functions that need it: the
browser's worker loads the package after the first render (it is not on the boot path), and
an operation asked for before then gets :class:`~palazzo.errors.PackageMissing`, a one-line
error saying to try again, instead of a bare ``ModuleNotFoundError``.
"""

from __future__ import annotations

from types import ModuleType

from palazzo.errors import PackageMissing


def networkx(needed_for: str) -> ModuleType:
    """Return the ``networkx`` module, or raise PackageMissing naming ``needed_for`` (what
    the caller was doing). Cost: the first call imports NetworkX (about 0.2 s under CPython);
    later calls are a dictionary lookup."""
    try:
        import networkx as nx
    except ImportError as err:
        raise PackageMissing("networkx", needed_for) from err
    return nx
