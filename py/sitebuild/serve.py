"""Serve the built site (what ``npm start`` runs): the server lives with palazzo's hosts, so
``palazzo serve`` and the build tooling serve the same way."""

from palazzo.hosts.serve import SiteHandler, SiteServer, make_server, serve_in_thread

__all__ = ["SiteHandler", "SiteServer", "make_server", "serve_in_thread"]
