"""Serve the built site on the loopback interface (what ``npm start`` runs)."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the types Pyodide needs and no stale caching between builds."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".mjs": "text/javascript",
        ".js": "text/javascript",
        ".json": "application/json",
        ".whl": "application/zip",
        ".zip": "application/zip",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:  # type: ignore[attr-defined]
            super().log_message(format, *args)


def make_server(site: Path, port: int, host: str = "127.0.0.1", verbose: bool = False):
    """Return a threading HTTP server for ``site`` bound to ``host:port`` (0 picks a port)."""
    handler = functools.partial(SiteHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    server.verbose = verbose  # type: ignore[attr-defined]
    return server


def serve_in_thread(site: Path, port: int = 0):
    """Start a quiet server in a daemon thread; return ``(server, base_url)``."""
    server = make_server(site, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, real_port = server.server_address[:2]
    return server, f"http://{host}:{real_port}/"
