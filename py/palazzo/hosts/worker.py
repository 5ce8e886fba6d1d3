"""Python side of the browser's palace worker (``workers/palace.worker.js``).

The worker script boots Pyodide and loads packages; this module creates the engine, renders
the Panel document for the page and keeps the two documents in sync. It runs only in Pyodide.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from palazzo.bridge import Bridge


def start_engine() -> Bridge:
    """Return the bridge over a new empty palace (the persistence issue adds loading)."""
    return Bridge()


def attach_embedder(bridge: Bridge, weights: Any) -> dict[str, Any]:
    """Give the palace the MiniLM embedder from ``weights`` (the npz bytes, or a JS
    Uint8Array proxy) and embed drawers that lack a vector; returns the reindex result.

    Runs after the first render: the weights are 45 MB and take about a second to load, and
    until then search ranks by BM25 alone.
    """
    from palazzo.embed.cache import CachedEmbedder
    from palazzo.embed.minilm import MiniLMEmbedder

    data = weights.to_bytes() if hasattr(weights, "to_bytes") else bytes(weights)
    bridge.palace.set_embedder(CachedEmbedder(MiniLMEmbedder(data)))
    return bridge.call("reindex")


def import_panel(panel_dist: str) -> None:
    """Import Panel with its CSS served by the site; returns None.

    ``panel_dist`` is the absolute URL of the site's ``vendor/panel/`` folder: the build
    patched Panel to read its CSS root from ``PALAZZO_PANEL_DIST`` instead of a CDN, so it
    must be set before Panel is first imported. A separate step so boot can time it.
    """
    os.environ["PALAZZO_PANEL_DIST"] = panel_dist
    import panel  # noqa: F401
    import panel.io.pyodide  # noqa: F401


async def render_document(bridge: Bridge) -> tuple[str, str, str]:
    """Build the Panel app and return ``(docs_json, render_items, root_ids)`` for the page."""
    from panel.io.pyodide import init_doc, write_doc

    from palazzo.hosts.ui import build_app

    init_doc()
    build_app(bridge).servable()
    return await write_doc()


def link_document(send_patch: Callable[..., Any]) -> None:
    """Forward every later change of the Python document to the page through ``send_patch``."""
    from panel.io.pyodide import _link_docs_worker
    from panel.io.state import state

    _link_docs_worker(state.curdoc, send_patch, setter="js")


def apply_patch(patch: Any) -> None:
    """Apply a JSON patch that the page's document sent (a widget changed in the browser)."""
    from panel.io.pyodide import _convert_json_patch
    from panel.io.state import state

    state.curdoc.apply_json_patch(_convert_json_patch(patch), setter="js")
