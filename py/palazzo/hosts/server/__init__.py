"""``palazzo serve``: a palace over HTTP for agents and devices (CPython host).

One palace directory (:class:`palazzo.persist.directory.PalaceDirectory`, so CLI commands,
hooks and MCP stdio servers keep writing it beside the server) behind one HTTP origin:

- ``POST /api/ops/{name}``: every operation of the registry, its arguments as the JSON body
  (:mod:`palazzo.hosts.server.app`), its JSON Schema in the OpenAPI 3.1 document at
  ``GET /api/openapi.json`` (:mod:`palazzo.hosts.server.openapi`);
- ``/mcp``: MCP over Streamable HTTP, the stdio server's protocol and tools
  (:mod:`palazzo.hosts.server.streamable`);
- ``GET /api/events``: the change feed, server-sent events, one per committed write (this
  server's and every other process's: :mod:`palazzo.hosts.server.feed`);
- ``GET /health/live``, ``GET /health/ready``, ``GET /metrics`` (Prometheus text);
- the web app (the built site), when it is there, from the same origin.

Loopback only: ``palazzo serve`` refuses any other address until tokens exist (issue 33,
point 3), and every request's ``Host`` must name the server (so a web page on another name
that resolves to 127.0.0.1, DNS rebinding, is refused), and a request carrying an
``Origin`` must come from the server's own origin. Starlette and uvicorn (pinned in
``py/constraints.txt``) carry HTTP; the engine stays underneath, through the one registry.
"""
