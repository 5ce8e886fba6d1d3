"""Python side of the browser's palace worker (``workers/palace.worker.js``).

The worker script boots Pyodide and loads packages; this module creates the engine, renders
the Panel document for the page and keeps the two documents in sync. It runs only in Pyodide.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from palazzo.bridge import Bridge
from palazzo.demo import DEMO_NAME

FIRST_PALACE = DEMO_NAME  # the worker opens it on a first launch


def _py(value: Any) -> Any:
    """Return ``value`` as Python data (JS proxies are converted; bytes stay bytes)."""
    if hasattr(value, "to_py"):
        value = value.to_py()
    if isinstance(value, dict):
        return {str(k): _py(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_py(v) for v in value]
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    return value


def start_engine(kind: str = "memory", names: Any = (), writable: bool = True,
                 name: str | None = None, files: Any = None) -> Bridge:
    """Return the bridge over the browser's palaces: ``kind`` is the storage the worker found
    ("opfs", "indexeddb" or "memory"), ``names`` the palaces it holds, ``files`` the files of
    ``name`` (the one to open, read by the worker). No palace yet: a first one is created.

    ``writable`` is False when another tab holds the palace's lock; the palace then opens
    read-only and says so in its status.
    """
    from palazzo.library import Library
    from palazzo.palace import Palace
    from palazzo.storage import QueuedRoot

    root = QueuedRoot(kind, list(_py(names)), writable=bool(writable))
    # Palaces opened later get the embedder once it has arrived (attach_embedder).
    library = Library(root, lambda **kw: Palace(embedder=bridge.hooks.get("embedder"), **kw))
    bridge = Bridge(library=library)
    if name is not None:
        root.load(name, _py(files) or {})
        library.open_palace(name)
    elif not root.palaces():
        from palazzo import demo

        library.new_palace(FIRST_PALACE)
        demo.build(bridge.call)
    return bridge


def install_hooks(bridge: Bridge) -> None:
    """Connect the bridge to the worker script: changes made from the interface are written
    (``palazzoScheduleFlush``), and the interface can open another palace, whose files the
    worker reads first (``palazzoLoadPalace``, asynchronous). Returns None."""
    import js

    bridge.on_change = lambda: js.palazzoScheduleFlush()

    async def open_palace(name: str) -> dict[str, Any]:
        await js.palazzoLoadPalace(name)
        return bridge.call("open_palace", {"name": name})

    bridge.hooks["open_palace"] = open_palace


def load_palace(bridge: Bridge, name: str, files: Any, writable: bool) -> None:
    """Give the library the files of palace ``name`` that the worker read, and whether this
    tab got its lock (before ``open_palace`` runs)."""
    bridge.library.root.load(name, _py(files))
    bridge.library.root.writable = bool(writable)


def drain(bridge: Bridge) -> list[list[Any]]:
    """Return the storage changes to write, oldest first: [op, palace, file, data] with op
    write/append (data bytes), truncate (data a size), delete (file) or remove (a palace)."""
    lib = bridge.library
    if lib is None:
        return []
    root = lib.root
    out: list[list[Any]] = [["remove", name, "", None] for name in root.removed]
    root.removed.clear()
    for name, space in root.spaces.items():
        out.extend([op, name, file, data] for op, file, data in space.drain())
    return out


def attach_embedder(bridge: Bridge, weights: Any) -> dict[str, Any]:
    """Give the open palace (and every palace opened later) the MiniLM embedder from
    ``weights`` (the npz bytes, or a JS Uint8Array proxy); return {"missing": drawers still
    without a vector}. The worker then calls :func:`embed_step` until none is missing.

    Runs after the first render: the weights are 45 MB and take about a second to load, and
    until then search ranks by BM25 alone.
    """
    from palazzo.embed.cache import CachedEmbedder
    from palazzo.embed.minilm import MiniLMEmbedder

    data = weights.to_bytes() if hasattr(weights, "to_bytes") else bytes(weights)
    embedder = CachedEmbedder(MiniLMEmbedder(data))
    bridge.hooks["embedder"] = embedder
    bridge.palace.set_embedder(embedder)
    status = bridge.call("palace_status")
    _refresh_status(bridge)
    return {"missing": status["drawers"] - status["embedded"]}


def embed_step(bridge: Bridge, limit: int = 16) -> dict[str, Any]:
    """Embed up to ``limit`` drawers that lack a vector; return {"embedded", "remaining"}.

    The worker runs one step at a time between other messages, so embedding a large palace
    (new, imported, or left half-done by a reload) never blocks the page's calls for long;
    the status line shows the count after each step.
    """
    if bridge.palace.embedder is None:
        return {"embedded": 0, "remaining": 0}
    out = bridge.call("reindex", {"limit": limit})
    _refresh_status(bridge)
    return {"embedded": out["embedded"], "remaining": out["remaining"]}


def _refresh_status(bridge: Bridge) -> None:
    hook = bridge.hooks.get("refresh_status")
    if hook is not None:
        hook()


def refresh_after(bridge: Bridge, name: str) -> None:
    """Reload the interface's views when operation ``name`` (run for the page's RPC, not by
    the interface itself) may have changed the palace. Returns None."""
    from palazzo.errors import PalazzoError

    hook = bridge.hooks.get("refresh_ui")
    if hook is None:
        return
    try:
        changes = bridge.mutates(name)
    except PalazzoError:
        return
    if changes:
        hook()


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
