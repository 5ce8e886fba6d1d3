"""The MCP server: a palace over stdio for AI assistants (CPython host).

Every operation of the registry is an MCP tool (its name, its summary as the description, its
JSON Schema as ``inputSchema``), and the ``palace_protocol`` prompt
(:mod:`palazzo.hosts.mcp.prompt`) teaches an assistant the palace and how to use the tools.
Calls go through a :class:`palazzo.persist.palacestore.PalaceStore`, so a write is answered
only after its journal record is synced: a server killed at any moment loses no acknowledged write.

Wire: JSON-RPC 2.0, one message a line, UTF-8, on stdin/stdout (written ASCII-only, so no
character inside a message can look like a line break to any reader); stdout carries nothing
else, diagnostics go to stderr.

Two threads share the stream, so a long call never stalls the protocol:

- **The reader** (the calling thread) reads a line, decodes it, and answers at once everything
  that does not touch the palace: ``ping``, ``initialize``, ``server/discover``, ``tools/list``,
  ``prompts/list`` and every error about the message itself. It also settles each request's
  protocol era and version, in arrival order, so the answers do not depend on timing.
- **The worker** (one thread) runs ``tools/call`` and ``prompts/get`` one at a time in arrival
  order, so writes stay ordered and the store is only ever used from that thread (the reader
  reads nothing of it but its static registry and its ``read_only`` flag).

So a ``ping`` sent while a long call runs (a large ``add_drawer``, an import) is answered at
once, and replies may come in a different order than requests (JSON-RPC matches them by id).
The engine cuts what a call cannot use (``search`` reads at most
:data:`palazzo.retrieval.search.MAX_QUERY` characters of a query); a long call still delays
the calls read after it, never the protocol. The reader keeps at most
:data:`MAX_MESSAGE_BYTES` of message text waiting for the worker; past that it stops reading
until the worker catches up. Where no thread can be started (Pyodide), every line is answered
before the next is read. ``notifications/cancelled`` is not acted on: a started call runs to
its end (a write is done or not done, never half), and the protocol lets a receiver ignore it.

Limits on what is read (each refusal is a JSON-RPC error, and the next line is read):

- A line longer than :data:`MAX_MESSAGE_BYTES` (64 MiB) is skipped unread in pieces, never
  held whole, and refused with -32600 (with the request's id when one end of the line names
  it, as the SDK clients write it). The limit admits the largest ``add_drawer`` in any
  encoding a JSON writer may choose: 5,000,000 characters, each a 12-byte surrogate-pair
  escape, is 60 MB.
- Bytes that are not UTF-8, JSON nested deeper than :data:`palazzo.core.jsontext.MAX_DEPTH`,
  ``NaN``/``Infinity``, numbers beyond a double's range (``1e400``, 400-digit integers) and
  strings with a lone surrogate (``"\\ud800"``, not Unicode text, so not storable) are parse
  errors (-32700, id null).
- Request ids are strings or integers within ±(2**53 - 1), the integers every JSON reader
  (JavaScript's included) holds exactly, so an echoed id is the id that was sent; a float, a
  boolean or null is -32600 (MCP forbids null ids).

Whatever goes wrong while one message is handled or its reply serialised, the server answers
with an error (or nothing, for a notification) and reads the next line: no line ends it.

Two protocol eras are served on the same stream, each message by what it carries:

- **Handshake era** (2024-11-05 … 2025-11-25): ``initialize`` negotiates the version (the
  client's when it is one of :data:`HANDSHAKE_VERSIONS`, else the newest of them), then
  ``notifications/initialized``, ``ping``, ``tools/list``, ``tools/call``, ``prompts/list``,
  ``prompts/get``. Other requests before ``initialize`` get -32600. ``structuredContent`` is
  sent from 2025-06-18 on.
- **Stateless era** (2026-07-28). Our reading of that revision (its changelog and schema, as
  quoted by the official SDKs; the Python SDK 2.3.0's ``mcp_types._v2026_07_28`` and runner):
  there is no handshake; every request carries ``params._meta`` with
  ``io.modelcontextprotocol/protocolVersion`` and ``io.modelcontextprotocol/clientCapabilities``
  (both required: -32602 naming a missing one; a version we do not serve: -32022
  UnsupportedProtocolVersion with ``data: {supported, requested}``); ``server/discover``
  returns ``supportedVersions``, ``capabilities``, ``instructions`` and cache hints; every
  result carries ``resultType: "complete"``, list and discover results ``ttlMs`` and
  ``cacheScope``, and ``_meta["io.modelcontextprotocol/serverInfo"]`` names the server;
  ``ping`` and the ``initialize``/``initialized`` pair are gone (-32601 under an envelope). A
  request is served in this era exactly when its ``_meta`` names the protocol version, so
  nothing is inferred from earlier requests on the stream. ``server/discover`` is also
  answered without an envelope (it is harmless, and tells a handshake-era client what exists).
  ``supportedVersions`` lists the handshake versions too: an auto-negotiating client then
  adopts 2026-07-28, and one that only speaks the handshake falls back to ``initialize``.

Errors: an unknown method is -32601; malformed params (no tool name, arguments that are not an
object, an unknown tool or prompt, a bad cursor) are -32602, as the 2025-11-25 tools page asks
for unknown tools; unreadable JSON is -32700 and a message that is not a request is -32600
(batches included: MCP dropped them in 2025-06-18). A tool that fails for a palazzo reason
(arguments against its schema, a missing drawer, a read-only palace, storage) answers a result
with ``isError: true`` and the message, so the model can read it and retry (SEP-1303); nothing
was changed. A bug is -32603 with its type and message (the traceback goes to stderr).
Notifications are never answered.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import re
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, TextIO

from palazzo._version import __version__
from palazzo.core import jsontext
from palazzo.core.schema import QUOTED, quote
from palazzo.embed import registry
from palazzo.errors import PalazzoError, RpcError, ValidationError
from palazzo.hosts.mcp import prompt
from palazzo.hosts.server.client import RemotePalace, find_server
from palazzo.palace import Palace
from palazzo.persist.directory import (  # noqa: F401  (re-exported for callers)
    DEFAULT_PALACE,
    PalaceDirectory,
    default_palace,
)

SERVER_INFO = {"name": "palazzo", "version": __version__}
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # oldest first
MODERN_VERSIONS = ("2026-07-28",)
SUPPORTED_VERSIONS = HANDSHAKE_VERSIONS + MODERN_VERSIONS
STRUCTURED_VERSIONS = frozenset({"2025-06-18", "2025-11-25", *MODERN_VERSIONS})

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022  # 2026-07-28

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER = "io.modelcontextprotocol/serverInfo"

# The longest line read (bytes): the largest add_drawer in any encoding fits (module docstring).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_ID = 2**53 - 1  # the largest integer every JSON reader holds exactly
_MAX_DOUBLE = int(sys.float_info.max)
_HEAD = 4096  # bytes kept of each end of an over-long line, to find its id
_PIECE = 1024 * 1024  # bytes read at a time while an over-long line is skipped
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
# A leading member with a scalar value, up to the comma or brace that ends it.
_SCALAR_MEMBER = re.compile(
    r'\s*(?P<key>"(?:[^"\\]|\\.)*")\s*:\s*'
    r'(?P<value>"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)'
    r'\s*(?:,|(?=\}))')
_LAST_ID = re.compile(
    r',\s*"id"\s*:\s*(?P<value>"(?:[^"\\]|\\.)*"|-?\d+)\s*\}\s*$')
# Requests that use the store: run on the worker, one at a time in order.
STORE_METHODS = frozenset({"tools/call", "prompts/get"})

CAPABILITIES: dict[str, Any] = {"tools": {}, "prompts": {}}
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list"})  # 2026-07-28
# Nothing in these results is user-specific (public); ttl 0 because a stale list costs more than
# refetching a small one.
CACHE_HINTS = {"ttlMs": 0, "cacheScope": "public"}


# -- requests -------------------------------------------------------------------------------

def _params(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    return params


def _cut(text: Any) -> Any:
    """Return a name a request gave as an error quotes it: whole when short, else cut as
    :func:`palazzo.core.schema.quote` cuts it (a 6 MB tool name is not sent back whole)."""
    return text if isinstance(text, str) and len(text) <= QUOTED else quote(text)


def _envelope_version(meta: dict[str, Any]) -> str:
    """Return the 2026-07-28 version a request's ``_meta`` names, or raise its RpcError."""
    missing = [k for k in (META_VERSION, META_CAPABILITIES) if k not in meta]
    if missing:
        raise RpcError(INVALID_PARAMS,
                       f"params._meta is missing the required key(s): {', '.join(missing)}")
    version = meta[META_VERSION]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"params._meta[{META_VERSION!r}] must be a string")
    if not isinstance(meta[META_CAPABILITIES], dict):
        raise RpcError(INVALID_PARAMS, f"params._meta[{META_CAPABILITIES!r}] must be an object")
    if version not in MODERN_VERSIONS:
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION,
                       f"unsupported protocol version {quote(version)}"
                       + (" in a request envelope; that version starts with initialize"
                          if version in HANDSHAKE_VERSIONS else ""),
                       {"supported": list(SUPPORTED_VERSIONS), "requested": _cut(version)})
    return version


def _valid_id(value: Any) -> bool:
    """Whether ``value`` may be a request id: a string, or an integer every JSON reader holds
    exactly (a float, even 1.0, could come back as another number)."""
    if isinstance(value, str):
        return True
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_ID


# -- reading a message ----------------------------------------------------------------------

class _Refused(ValueError):
    """A JSON value this server does not accept (raised from inside the parser's hooks)."""


def _no_constant(name: str) -> Any:
    """Refuse ``NaN``, ``Infinity`` and ``-Infinity`` (Python's JSON reader takes them)."""
    raise _Refused(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    """Return the float ``text`` spells, refusing one that overflows (``1e400`` is inf)."""
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(f"the number {text[:40]} is beyond the range of a double")
    return value


def _double_int(text: str) -> int:
    """Return the integer ``text`` spells, refusing one beyond a double's range (no engine
    code that turns it into a float can then overflow)."""
    # Checked on the digits first: int() of more than 4300 digits raises a ValueError that
    # names a Python setting, and anything past 310 digits is out of range anyway.
    value = int(text) if len(text) <= 310 else None
    if value is None or abs(value) > _MAX_DOUBLE:
        raise _Refused(f"the number {text[:40]}{'…' if len(text) > 40 else ''} is beyond the "
                       "range of a double")
    return value


def _decode(line: str | bytes) -> Any:
    """Return the message a line holds, or raise a -32700 :class:`RpcError` saying why not.

    Refuses what :func:`json.loads` would let through but no palace can hold: NaN, Infinity,
    numbers beyond a double, lone surrogates; and JSON nested deeper than
    :data:`palazzo.core.jsontext.MAX_DEPTH`. Cost: a few linear passes over the text (nesting,
    parse); one more (re-encoding) only when the text has a surrogate escape."""
    if isinstance(line, bytes):
        data = line
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as err:
            raise RpcError(PARSE_ERROR, f"parse error: the message is not UTF-8 text (byte "
                           f"{err.start} of the line)") from None
    else:
        text = line
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as err:
            raise RpcError(PARSE_ERROR, "parse error: the message holds a lone surrogate "
                           f"(character {err.start}): not Unicode text") from None
    if jsontext.depth(data, jsontext.MAX_DEPTH) > jsontext.MAX_DEPTH:
        raise RpcError(PARSE_ERROR, f"parse error: the message nests deeper than "
                       f"{jsontext.MAX_DEPTH} levels")
    del data
    try:
        message = json.loads(text, parse_float=_finite_float, parse_int=_double_int,
                             parse_constant=_no_constant)
    except _Refused as err:
        raise RpcError(PARSE_ERROR, f"parse error: {err}") from None
    except json.JSONDecodeError as err:
        raise RpcError(PARSE_ERROR, f"parse error: not valid JSON at column {err.colno}: "
                       f"{err.msg}") from None
    except (RecursionError, ValueError) as err:
        raise RpcError(PARSE_ERROR, f"parse error: unreadable JSON ({type(err).__name__})") \
            from None
    if _SURROGATE_ESCAPE.search(text):  # rare: only then is the whole message re-encoded
        try:
            json.dumps(message, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise RpcError(PARSE_ERROR, "parse error: a string holds a lone surrogate (an "
                           "unpaired \\ud800-\\udfff escape): not Unicode text") from None
    return message


@dataclass(slots=True)
class _TooLong:
    """A line past the size limit: its first and last bytes (to find its id) and its
    length."""

    head: str | bytes
    tail: str | bytes
    size: int


def _lines(stream: TextIO | BinaryIO, limit: int) -> Iterator[str | bytes | _TooLong]:
    """Yield the lines of ``stream`` (with their newline), or a :class:`_TooLong` for a line
    longer than ``limit`` (bytes, or characters on a text stream), until end of input.

    Memory: at most ``limit`` + 1 of one line; a longer line is read on and dropped in
    pieces. A stream that fails to read ends the input (said on stderr)."""
    while True:
        try:
            line = stream.readline(limit + 1)
            if not line:
                return
            newline = "\n" if isinstance(line, str) else b"\n"
            if len(line) <= limit or line.endswith(newline):
                yield line
                continue
            head, tail, size = line[:_HEAD], line[-_HEAD:], len(line)
            del line
            while piece := stream.readline(_PIECE):
                size += len(piece)
                tail = (tail + piece)[-_HEAD:]
                if piece.endswith(newline):
                    break
        except (OSError, ValueError) as err:
            _log(f"cannot read the input, stopping: {err}")
            return
        yield _TooLong(head, tail, size)


def _id_of_long_line(line: _TooLong) -> Any:
    """Return the id of a line too long to read, from its ends, or None.

    Clients write the id near one end: the Python SDK ``{"jsonrpc":"2.0","id":5,…``, the
    TypeScript SDK ``{"method":…,"params":…,"jsonrpc":"2.0","id":5}``. At the start, only the
    scalar members that open the object are looked at (stopping at the first nested value),
    and at the end only a last member just before the closing brace, so nothing nested can
    be mistaken for the id."""
    head, tail = (part.decode("utf-8", "replace") if isinstance(part, bytes) else part
                  for part in (line.head, line.tail))
    opening = re.match(r"\s*\{", head)
    at = opening.end() if opening else len(head)
    found: list[str] = []
    while member := _SCALAR_MEMBER.match(head, at):
        found.append(member["key"])
        found.append(member["value"])
        at = member.end()
    if last := _LAST_ID.search(tail):
        found += ['"id"', last["value"]]
    for key, value in zip(found[::2], found[1::2], strict=True):
        with contextlib.suppress(ValueError):
            if json.loads(key) == "id":
                rid = json.loads(value)
                return rid if _valid_id(rid) else None
    return None


# -- one connection's protocol state --------------------------------------------------------

@dataclass(slots=True)
class Call:
    """A request resolved when it was read (its handler, era and version fixed then), to be
    run later: tools/call and prompts/get run on the worker, in arrival order."""

    rid: Any
    method: str
    params: dict[str, Any]
    version: str
    modern: bool
    handler: Callable[[dict[str, Any], str], dict[str, Any]]


class McpServer:
    """The MCP protocol over one stream: turns decoded messages into replies.

    ``store`` is a :class:`PalaceStore` (or anything with its ``call``, ``status`` and
    ``registry``). :attr:`version` is the version ``initialize`` negotiated (None before it);
    requests carrying a 2026-07-28 envelope do not use it. :meth:`receive` (the reader's half)
    settles a line or returns the :class:`Call` it asks for; :meth:`run` (the worker's half)
    answers that call. Neither raises.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self.version: str | None = None
        self._requests: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {
            "ping": lambda params, version: {},
            "server/discover": self._discover,
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
            "prompts/list": self._prompts_list,
            "prompts/get": self._prompts_get,
        }

    # -- messages -------------------------------------------------------------------------
    def handle_line(self, line: str | bytes) -> str | None:
        """Answer one line of the stream: the reply's JSON text, or None (a notification, a
        response, a blank line). Runs a call in this thread. Never raises."""
        reply, call = self.receive(line)
        return self.run(call) if call is not None else reply

    def receive(self, line: str | bytes) -> tuple[str | None, Call | None]:
        """Read one line: return (the reply text to send now, or None; the call to
        :meth:`run` in order, or None). Only tools/call and prompts/get become calls; every
        other line is settled here without the palace. Never raises. Cost: decoding the
        line; a settled request costs what its handler does (a tools/list, an instructions
        text)."""
        if not line or line.isspace():  # isspace, not strip: no copy of a long line
            return None, None
        try:
            message = _decode(line)
        except RpcError as err:
            return _text(_error(None, err)), None
        except Exception as err:  # noqa: BLE001 - MemoryError or a bug: answered, survived
            return _text(_bug(None, err)), None
        try:
            reply, call = self._triage(message)
        except Exception as err:  # noqa: BLE001 - a bug: answered, reported, and survived
            rid = message.get("id") if isinstance(message, dict) else None
            return _text(_bug(rid if _valid_id(rid) else None, err)), None
        return (None if reply is None else _text(reply)), call

    def run(self, call: Call) -> str:
        """Answer ``call`` (from :meth:`receive`): return the reply's JSON text. Never raises.
        Cost: the tool's or prompt's own."""
        return _text(self._execute(call))

    def refuse_too_long(self, line: _TooLong, limit: int) -> str:
        """Return the error for a line longer than ``limit`` (with the request's id when one
        end of the line names it)."""
        return _text(_error(_id_of_long_line(line), RpcError(
            INVALID_REQUEST, f"message too large: {line.size:,} bytes or more, past this "
            f"server's limit of {limit:,} (a drawer of 5,000,000 characters fits); it was not "
            "read")))

    def handle(self, message: Any) -> dict[str, Any] | None:
        """Answer one decoded message with a reply dict, or None when none is due (a call
        runs in this thread)."""
        reply, call = self._triage(message)
        return self._execute(call) if call is not None else reply

    def _triage(self, message: Any) -> tuple[dict[str, Any] | None, Call | None]:
        """Return (the reply due now, or None; the call to run later, or None)."""
        if isinstance(message, list):
            return _error(None, RpcError(INVALID_REQUEST, "batches are not supported (MCP "
                                         "removed JSON-RPC batching): send one message a "
                                         "line")), None
        if not isinstance(message, dict):
            return _error(None, RpcError(INVALID_REQUEST, "a message must be a JSON object")), \
                None
        notification = "id" not in message
        rid = message.get("id")
        if "method" not in message:
            if not notification and ("result" in message or "error" in message):
                return None, None  # a response; this server sends no requests, so none awaits
            return _error(rid if _valid_id(rid) else None,
                          RpcError(INVALID_REQUEST, "a request needs a 'method'")), None
        method = message["method"]
        problem = None
        if message.get("jsonrpc") != "2.0":
            problem = "'jsonrpc' must be \"2.0\""
        elif not isinstance(method, str):
            problem = "'method' must be a string"
        elif not notification and not _valid_id(rid):
            problem = f"'id' must be a string or an integer between -{MAX_ID} and {MAX_ID}"
        if notification:
            # notifications/initialized needs no action (initialize already answered), and
            # notifications/cancelled is not acted on (see the module docstring). Others are
            # not ours to act on.
            return None, None
        if problem is not None:
            return _error(rid if _valid_id(rid) else None,
                          RpcError(INVALID_REQUEST, problem)), None
        try:
            call = self._resolve(rid, method, message.get("params"))
        except RpcError as err:
            return _error(rid, err), None
        if method in STORE_METHODS:
            return None, call
        return self._execute(call), None

    def _resolve(self, rid: Any, method: str, params: Any) -> Call:
        """Return the call ``method`` asks for, its era and version settled now (so a later
        initialize cannot change an earlier request's answer); raise RpcError if none."""
        params = _params(params)
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and META_VERSION in meta
        if method == "initialize" and not modern:
            return Call(rid, method, params, "", False, self._initialize)
        if modern:
            version = _envelope_version(meta)
            handler = None if method == "ping" else self._requests.get(method)
        else:
            version = self.version or HANDSHAKE_VERSIONS[-1]
            handler = self._requests.get(method)
            if handler is not None and self.version is None and \
                    method not in ("ping", "server/discover"):
                raise RpcError(INVALID_REQUEST, "send initialize first, or name the protocol "
                               f"version in params._meta[{META_VERSION!r}] (2026-07-28)")
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method {quote(method)} not found"
                           + (f" in protocol version {version}" if modern else ""))
        return Call(rid, method, params, version, modern, handler)

    def _execute(self, call: Call) -> dict[str, Any]:
        """Return the reply to ``call``: its result, or the error it raised."""
        try:
            result = call.handler(call.params, call.version)
            if call.modern:
                result = {**result, "resultType": "complete",
                          "_meta": {**result.get("_meta", {}), META_SERVER: dict(SERVER_INFO)}}
                if call.method in CACHEABLE:
                    result.update(CACHE_HINTS)
        except RpcError as err:
            return _error(call.rid, err)
        except Exception as err:  # noqa: BLE001 - a bug: reported to the client and stderr
            return _bug(call.rid, err)
        return {"jsonrpc": "2.0", "id": call.rid, "result": result}

    # -- lifecycle ----------------------------------------------------------------------
    def _initialize(self, params: dict[str, Any], version: str = "") -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, "initialize needs a string 'protocolVersion'")
        self.version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return {"protocolVersion": self.version, "capabilities": dict(CAPABILITIES),
                "serverInfo": dict(SERVER_INFO), "instructions": prompt.instructions(self.store)}

    def _discover(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        return {"supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": dict(CAPABILITIES), "serverInfo": dict(SERVER_INFO),
                "instructions": prompt.instructions(self.store)}

    # -- tools ----------------------------------------------------------------------------
    def tools(self) -> list[dict[str, Any]]:
        """Return the MCP tool list: one tool per registry operation, sorted by name."""
        return [{"name": d["name"], "description": d["summary"],
                 "inputSchema": d["input_schema"]} for d in self.store.registry.describe()]

    def _tools_list(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        _no_cursor(params)
        return {"tools": self.tools()}

    def _tools_call(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs a string 'name'")
        args = params.get("arguments")
        args = {} if args is None else args
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "tools/call 'arguments' must be an object")
        if name not in self.store.registry.names():
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {_cut(name)}", {"tool": _cut(name)})
        structured = version in STRUCTURED_VERSIONS
        try:
            result = self.store.call(name, args)
        except PalazzoError as err:
            out: dict[str, Any] = {"content": [{"type": "text", "text": f"{err.code}: {err}"}],
                                   "isError": True}
            if structured:
                out["structuredContent"] = {"error": err.to_dict()}
            return out
        out = {"content": [{"type": "text", "text": json.dumps(result, ensure_ascii=False,
                                                               allow_nan=False)}],
               "isError": False}
        if structured:
            out["structuredContent"] = result
        return out

    # -- prompts --------------------------------------------------------------------------
    def _prompts_list(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        _no_cursor(params)
        return {"prompts": prompt.prompts()}

    def _prompts_get(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        name = params.get("name")
        if name not in prompt.NAMES:
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {_cut(name)}; the prompts are "
                           f"{', '.join(map(repr, prompt.NAMES))}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise RpcError(INVALID_PARAMS, "prompt arguments must be an object of strings")
        if name == prompt.WAKE_UP:
            try:
                return prompt.wake_up(self.store, args)
            except (ValueError, ValidationError) as err:
                raise RpcError(INVALID_PARAMS, str(err)) from None
        return prompt.get(self.store, args)


def _no_cursor(params: dict[str, Any]) -> None:
    if params.get("cursor") is not None:
        raise RpcError(INVALID_PARAMS, "unknown cursor: this server lists everything at once")


def _error(rid: Any, err: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": err.to_dict()}


def _bug(rid: Any, err: BaseException) -> dict[str, Any]:
    """Return the -32603 reply for an unexpected exception (its traceback goes to stderr)."""
    _log(traceback.format_exc())
    return _error(rid, RpcError(INTERNAL_ERROR, f"internal error: {_clip(str(err))}",
                                {"type": type(err).__name__}))


def _clip(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _dump(reply: dict[str, Any]) -> str:
    return json.dumps(reply, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _text(reply: dict[str, Any]) -> str:
    """Return ``reply`` as one line of JSON; a reply that is not JSON (a bug) becomes a
    -32603 error naming why, and if even that fails, a fixed one."""
    try:
        return _dump(reply)
    except Exception as err:  # noqa: BLE001 - TypeError, ValueError, RecursionError…
        _log(f"unsendable reply: {type(err).__name__}: {err}")
        rid = reply.get("id")
        try:
            return _dump(_error(rid if _valid_id(rid) else None, RpcError(
                INTERNAL_ERROR, f"internal error: the reply is not JSON ({_clip(str(err))})")))
        except Exception:  # noqa: BLE001
            return _dump(_error(None, RpcError(INTERNAL_ERROR,
                                               "internal error: the reply is not JSON")))


def _log(text: str) -> None:
    with contextlib.suppress(OSError, ValueError):
        print(f"palazzo mcp: {text.rstrip()}", file=sys.stderr, flush=True)


# -- the stream -----------------------------------------------------------------------------

class _Outbox:
    """stdout for two threads: each reply a whole line, flushed; closed once the client has
    gone (a failed write), after which replies are dropped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.sent = 0
        self.closed = False

    def send(self, text: str) -> None:
        """Write ``text`` and a newline and flush; never raises."""
        with self._lock:
            if self.closed:
                return
            try:
                self._stream.write(text + "\n")
                self._stream.flush()
            except (OSError, ValueError):  # BrokenPipeError, or a closed stream: the client left
                self.closed = True
                return
            self.sent += 1


class _CallQueue:
    """Calls waiting for the worker, in arrival order, holding at most ``budget`` bytes of
    message text (one call over budget is let in alone, so no message waits forever)."""

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._calls: deque[tuple[Call, int]] = deque()
        self._bytes = 0
        self._closed = False
        self._changed = threading.Condition()

    def put(self, call: Call, size: int) -> None:
        """Queue ``call``, first waiting while the queue holds too much."""
        with self._changed:
            self._changed.wait_for(lambda: not self._calls or
                                   self._bytes + size <= self._budget)
            self._calls.append((call, size))
            self._bytes += size
            self._changed.notify_all()

    def get(self) -> Call | None:
        """Return the next call, waiting for one; None once closed and empty."""
        with self._changed:
            self._changed.wait_for(lambda: self._calls or self._closed)
            if not self._calls:
                return None
            call, size = self._calls.popleft()
            self._bytes -= size
            self._changed.notify_all()
            return call

    def close(self, drop: bool = False) -> None:
        """Let :meth:`get` return None once the queue is empty (at once with ``drop``)."""
        with self._changed:
            self._closed = True
            if drop:
                self._calls.clear()
                self._bytes = 0
            self._changed.notify_all()


def _work(server: McpServer, calls: _CallQueue, outbox: _Outbox) -> None:
    """The worker: run the queued calls one at a time until the queue closes."""
    while (call := calls.get()) is not None:
        if outbox.closed:  # the client has gone: nobody would read what is left
            calls.close(drop=True)
            continue
        try:
            reply = server.run(call)
        except BaseException as err:  # noqa: BLE001 - run() never raises; if it did, a dead
            reply = _text(_bug(call.rid, err))  # worker would leave the reader blocked
        outbox.send(reply)


def _start_worker(server: McpServer, calls: _CallQueue, outbox: _Outbox
                  ) -> threading.Thread | None:
    """Return the started worker thread, or None where threads cannot start (Pyodide)."""
    worker = threading.Thread(target=_work, args=(server, calls, outbox),
                              name="palazzo-mcp-calls")
    try:
        worker.start()
    except (RuntimeError, OSError):  # "can't start new thread"
        return None
    return worker


def serve(store: Any, stdin: TextIO | BinaryIO, stdout: TextIO,
          max_message: int = MAX_MESSAGE_BYTES) -> int:
    """Answer the MCP messages read from ``stdin`` on ``stdout`` until end of input.

    ``store`` is a :class:`PalaceStore` (or the same calls); ``stdin`` yields bytes (the
    real stdin: ``max_message`` counts bytes) or text (characters). Cheap requests are
    answered as they are read, calls in order on a worker thread (see the module docstring);
    a write is answered only after the store saved it. Returns, once every call read has
    been answered, the number of replies written (it stops early if the client closes
    stdout). Cost: one store call per tools/call; memory about two messages of
    ``max_message`` plus the one being read.
    """
    server = McpServer(store)
    outbox = _Outbox(stdout)
    calls = _CallQueue(max_message)
    worker = _start_worker(server, calls, outbox)
    try:
        for line in _lines(stdin, max_message):
            if outbox.closed:
                break
            if isinstance(line, _TooLong):
                outbox.send(server.refuse_too_long(line, max_message))
                continue
            reply, call = server.receive(line)
            if reply is not None:
                outbox.send(reply)
            if call is None:
                continue
            if worker is None:
                outbox.send(server.run(call))
            else:
                calls.put(call, len(line))
    except BaseException:  # KeyboardInterrupt: the running call ends, the queued ones go
        calls.close(drop=True)
        raise
    finally:
        calls.close()
        if worker is not None:
            worker.join()
    return outbox.sent


def run_stdio(palace_dir: Path, make_palace: Callable[..., Palace],
              stdin: TextIO | BinaryIO | None = None, stdout: TextIO | None = None) -> int:
    """Serve the palace in ``palace_dir`` (created if missing) over stdio until end of input.

    Any number of servers and other processes may write it (each write takes the lock
    alone); it is read-only only when its files are damaged. Anything the
    engine might print goes to stderr, so stdout carries only MCP messages. Returns 0.
    """
    url = find_server(palace_dir)  # a palazzo serve for it: go through it, load nothing
    opened = RemotePalace(url, palace_dir) if url else PalaceDirectory(palace_dir, make_palace)
    with opened as palace:  # a held lock goes back at the end
        wrapped: list[io.TextIOWrapper] = []
        # stdin is read as bytes: the size limit counts bytes, and bytes that are not UTF-8 are
        # a parse error of their line (whatever the locale says) instead of ending the server.
        if stdin is None:
            stdin = getattr(sys.stdin, "buffer", sys.stdin)
        if stdout is None:
            stdout = sys.stdout
            if hasattr(stdout, "buffer"):
                stdout = io.TextIOWrapper(stdout.buffer, encoding="utf-8", newline="\n")
                wrapped.append(stdout)
        mode = ("read-only: its files are damaged (`palazzo repair --yes`)"
                if palace.status.damaged else
                f"read-only: {palace.status.problem}" if palace.status.read_only
                else "writing beside any other process: the lock is taken per write")
        _log(f"pid {os.getpid()} serving {palace.path} ({mode})"
             + (f" through the palace server at {url}" if url else ""))
        if palace.status.problem:
            _log(f"on opening: {palace.status.problem}")
        try:
            with contextlib.redirect_stdout(sys.stderr):
                serve(palace, stdin, stdout)
        finally:
            for stream in wrapped:  # give the buffers back to sys.stdin/sys.stdout unclosed
                with contextlib.suppress(OSError, ValueError):
                    stream.detach()
    return 0


def main(palace_dir: Path, embedder: Any = None) -> int:
    """Serve ``palace_dir`` over stdio with palaces that embed with ``embedder`` (an embedder,
    or None for BM25 only). The ``palazzo mcp`` command calls this. Returns the exit code."""

    def make(**kw: Any) -> Palace:
        return Palace(embedder=embedder, **kw)

    try:
        return run_stdio(Path(palace_dir), make)
    except PalazzoError as err:
        _log(str(err))
        return 1
    except OSError as err:
        _log(f"{palace_dir}: {err}")
        return 1
    except KeyboardInterrupt:
        return 130


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add ``--palace`` and ``--embedder`` to ``parser`` (also used by ``palazzo mcp``)."""
    parser.add_argument("--palace", default=str(default_palace()),
                        help="palace directory, created if missing (default: %(default)s)")
    parser.add_argument("--embedder", default="auto", choices=registry.NAMES,
                        help="auto: minilm (its weights fetched on first use), else hash")
    return parser


def command(argv: list[str] | None = None) -> int:
    """``python -m palazzo.hosts.mcp [--palace DIR] [--embedder NAME]`` (also
    ``python -m palazzo.hosts.mcp.server``): returns the exit code."""
    args = add_arguments(argparse.ArgumentParser(
        prog="palazzo mcp", description="Serve a palace to MCP clients over stdio.")
    ).parse_args(argv)
    from palazzo.hosts import model  # the weights' lookup and first-run fetch

    try:
        choice = model.choose(args.embedder, say=_log)
    except PalazzoError as err:
        _log(str(err))
        return 1
    _log(f"embedder {choice.describe()}")
    return main(Path(args.palace), choice.embedder)


if __name__ == "__main__":
    sys.exit(command())
