"""MCP over Streamable HTTP at ``/mcp``: the stdio server's protocol, one POST a message.

The same :class:`palazzo.hosts.mcp.server.McpServer` that answers stdio answers here, so both
transports speak the same protocol versions (the handshake era up to 2025-11-25 and the
stateless 2026-07-28 requests) with the same tools and prompts:

- ``POST /mcp`` carries one JSON-RPC message. A request is answered with its reply as
  ``application/json``; a notification or a response with ``202 Accepted`` and no body.
- ``initialize`` (handshake era) starts a session: its answer carries ``Mcp-Session-Id``,
  which the client sends with every later message; a session id this server does not know
  (it was restarted, or the session was ended) is ``404``, as the specification asks, and
  the client starts again. Requests in the 2026-07-28 envelope need no session.
- ``DELETE /mcp`` ends the session it names. ``GET /mcp`` (a stream of messages the server
  starts) is ``405``: this server starts none.

Host and Origin are checked by the app's guard (:class:`palazzo.hosts.server.app.Guard`), as
the specification asks of a local server. At most :data:`SESSIONS` sessions are kept; past
that the oldest is ended.
"""

from __future__ import annotations

import collections
import json
import secrets
import threading
from typing import Any

import anyio
from starlette.requests import Request
from starlette.responses import Response

from palazzo.core import jsontext
from palazzo.errors import Unauthorized, ValidationError
from palazzo.hosts.mcp.server import McpServer
from palazzo.hosts.server.tokens import Scoped

SESSIONS = 1000  # handshake-era sessions kept at once
SESSION_HEADER = "mcp-session-id"


def _rpc_error(code: int, message: str, status: int = 400) -> Response:
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return Response(json.dumps(body), status_code=status, media_type="application/json")


class StreamableMcp:
    """The ``/mcp`` endpoint over a :class:`palazzo.hosts.server.app.Server`."""

    def __init__(self, server: Any) -> None:
        self.server = server
        self._lock = threading.Lock()
        self._sessions: collections.OrderedDict[str, McpServer] = collections.OrderedDict()
        self._stateless = McpServer(Scoped(server.directory, None))

    def _session(self, sid: str) -> McpServer | None:
        with self._lock:
            return self._sessions.get(sid)

    def _start(self, store: Any) -> tuple[str, McpServer]:
        sid = secrets.token_hex(16)
        mcp = McpServer(store)
        with self._lock:
            self._sessions[sid] = mcp
            while len(self._sessions) > SESSIONS:
                self._sessions.popitem(last=False)
        return sid, mcp

    async def endpoint(self, request: Request) -> Response:
        if request.method == "DELETE":
            sid = request.headers.get(SESSION_HEADER, "")
            with self._lock:
                gone = self._sessions.pop(sid, None)
            return Response(status_code=200 if gone is not None else 404)
        if request.method != "POST":
            return Response(status_code=405, headers={"Allow": "POST, DELETE"})
        try:
            token = self.server.token(request)
        except Unauthorized as err:
            return _rpc_error(-32001, str(err), 401)
        store = Scoped(self.server.directory, token)
        try:
            message = jsontext.loads(await request.body(), "the message")
        except ValidationError as err:
            return _rpc_error(-32700, str(err))
        started = None
        if isinstance(message, dict) and message.get("method") == "initialize":
            started, mcp = self._start(store)
        elif SESSION_HEADER in request.headers:
            mcp = self._session(request.headers[SESSION_HEADER])
            if mcp is not None and getattr(mcp.store, "token", None) != token:
                mcp = None  # a session is its token's alone
            if mcp is None:
                return _rpc_error(-32001, "no such session (the server was restarted or the "
                                  "session ended): initialize again", 404)
        else:  # the 2026-07-28 envelope; else "send initialize first"
            mcp = self._stateless if token is None else McpServer(store)
        params = message.get("params") if isinstance(message, dict) else None
        tool = params.get("name") if isinstance(params, dict) else None
        op = tool if message.get("method") == "tools/call" and tool in self.server.names \
            else None  # (anything else MCP asks is a read)
        try:
            with anyio.fail_after(self.server.call_timeout):
                reply = await anyio.to_thread.run_sync(self._handle, mcp, message,
                                                       abandon_on_cancel=True,
                                                       limiter=self.server.threads(op))
        except TimeoutError:
            rid = message.get("id") if isinstance(message, dict) else None
            body = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32001, "message": (
                f"the call took longer than {self.server.call_timeout:g} s; it goes on in "
                "the server (a write is done or not done): read before writing again")}}
            return Response(json.dumps(body), media_type="application/json")
        if reply is None:
            return Response(status_code=202)
        headers = {"Mcp-Session-Id": started} if started else {}
        return Response(json.dumps(reply, ensure_ascii=True), media_type="application/json",
                        headers=headers)

    def _handle(self, mcp: McpServer, message: Any) -> dict[str, Any] | None:
        try:
            return mcp.handle(message)
        finally:
            self.server.publish_after_call()
