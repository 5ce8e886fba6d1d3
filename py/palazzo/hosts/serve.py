"""Serve the built site on the loopback interface (`npm start`; `palazzo serve` serves it
beside a palace: :mod:`palazzo.hosts.server`)."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

# Sent with every file of the site: no stale caching between builds, and cross-origin
# isolation, which lets the embedding worker run ONNX Runtime on more than one thread
# (SharedArrayBuffer). Everything the site loads is its own, so nothing breaks; a plain static
# host without these headers still works on one thread.
SITE_HEADERS = (("Cache-Control", "no-cache"),
                ("Cross-Origin-Opener-Policy", "same-origin"),
                ("Cross-Origin-Embedder-Policy", "require-corp"))


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
        for name, value in SITE_HEADERS:
            self.send_header(name, value)
        super().end_headers()

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - stdlib signature
        if self.server.verbose:  # type: ignore[attr-defined]
            super().log_message(format, *args)


class SiteServer(http.server.ThreadingHTTPServer):
    """A threading server that stays quiet when a browser drops a download midway (a tab
    closed while the worker fetched weights is normal, not an error worth a traceback)."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def make_server(site: Path, port: int, host: str = "127.0.0.1", verbose: bool = False):
    """Return a threading HTTP server for ``site`` bound to ``host:port`` (0 picks a port)."""
    handler = functools.partial(SiteHandler, directory=str(site))
    server = SiteServer((host, port), handler)
    server.verbose = verbose  # type: ignore[attr-defined]
    return server


def serve_in_thread(site: Path, port: int = 0):
    """Start a quiet server in a daemon thread; return ``(server, base_url)``."""
    server = make_server(site, port)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    host, real_port = server.server_address[:2]
    return server, f"http://{host}:{real_port}/"
