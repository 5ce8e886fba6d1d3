"""The MCP server: a palace over stdio for AI assistants (CPython host).

Every operation of the registry is an MCP tool (its name, its summary as the description, its
JSON Schema as ``inputSchema``), and the ``palace_protocol`` prompt teaches an assistant the
palace and how to use the tools. Calls go through a :class:`palazzo.persistence.PalaceStore`, so
a write is answered only after its journal record is synced: a server killed at any moment
loses no acknowledged write.

Wire: JSON-RPC 2.0, one message a line, UTF-8, on stdin/stdout (written ASCII-only, so no
character inside a message can look like a line break to any reader); stdout carries nothing
else, diagnostics go to stderr. Requests are answered one at a time, in order.

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
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from palazzo import __version__, jsontext
from palazzo.errors import PalazzoError, ValidationError
from palazzo.hosts.directory import (  # noqa: F401  (re-exported for callers)
    DEFAULT_PALACE,
    EMBEDDERS,
    PalaceDirectory,
    default_palace,
    embedder_named,
)
from palazzo.palace import Palace

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

CAPABILITIES: dict[str, Any] = {"tools": {}, "prompts": {}}
CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list"})  # 2026-07-28
# Nothing in these results is user-specific (public); ttl 0 because a stale list costs more than
# refetching a small one.
CACHE_HINTS = {"ttlMs": 0, "cacheScope": "public"}
PROMPT_NAME = "palace_protocol"
DEFAULT_AGENT = "assistant"


class RpcError(Exception):
    """A JSON-RPC error to answer a request with (``code``, message, optional ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-RPC ``error`` member."""
        out: dict[str, Any] = {"code": self.code, "message": str(self)}
        if self.data is not None:
            out["data"] = self.data
        return out


# -- the palace_protocol prompt -------------------------------------------------------------

PROTOCOL = """\
# Your memory palace (palazzo)

The tools of this server are your long-term memory: a palazzo memory palace. It keeps what you
store word for word and finds it again by meaning and by words.

## Layout
- **Palace**: the whole memory (this server serves one).
- **Wing**: a major domain: a person, a project, a field ("work", "family", "orion").
- **Room**: one subject inside a wing ("auth", "deploys", "garden"). Rooms of one wing are
  joined by halls; rooms of different wings that share a subject by tunnels.
- **Closet**: an optional shelf inside a room that groups related drawers.
- **Drawer**: one verbatim text (a note, a decision, a quotation, an excerpt) with its source,
  importance (0 to 1) and timestamps. Its id comes from text + wing + room, so storing the same
  text twice in a room stores it once.
- **Knowledge graph**: entities and dated facts (subject -predicate-> object) with confidence
  and validity (valid_from, valid_to). A fact that stops being true is ended, not erased, so
  you can ask what was true at a date.
- **Diaries**: every agent, you included, has a diary in its own wing; entries are drawers,
  so search finds them.
- **Pheromones**: trails of use. Results and paths that helped can be reinforced
  (pheromone_deposit, navigate with deposit: true); trails decay. Search ignores them unless
  you pass pheromone > 0.
- **Provenance slices**: conversation turns (add_turn, import_conversation) form a graph;
  slice_context cuts the admissible evidence around an anchor turn under a named policy and
  signs it with an HMAC token; verify_token checks a bundle or token later.

## How to use it
1. **Search first.** Before answering from memory, and before storing, call `search` with a
   short query (add wing/room when you know the place); read whole drawers with `get_drawer`.
   `get_taxonomy` and `list_wings` show the layout: reuse the wings and rooms that exist
   instead of inventing near-duplicates.
2. **Add verbatim.** `add_drawer` with the exact words (wing, room, content; source and
   importance when you know them), never a paraphrase of text you could store whole.
   `check_duplicate` when unsure; `update_drawer` corrects, `delete_drawer` removes.
3. **Facts with dates.** `kg_add` subject, predicate, object, with `valid_from` (YYYY-MM-DD)
   when the fact started, `confidence` below 1 when unsure, and `source_drawer` naming the
   drawer that says so. When a fact changes, `kg_supersede` (or `kg_invalidate`) it rather
   than adding a contradiction. Ask with `kg_query` (`as_of` for a past date), `kg_timeline`,
   `kg_traverse`; `kg_contradictions` finds clashes.
4. **Keep a diary.** After a piece of work, `diary_write` (agent: "{agent}") a few sentences:
   what you did, what you learned, what is still open. `diary_read` picks up where you left.
5. **Cite with provenance.** When an answer rests on a conversation, store its turns
   (`add_turn` or `import_conversation`), call `slice_context` with the turn you answer as
   `anchor`, and keep the bundle with your answer. `verify_token` with that bundle (and
   `recompute: true`) says whether it is still valid and current. Never write or edit a token.
6. **Errors are answers.** A result marked as an error says what was wrong; nothing was
   changed. Fix the arguments and call again.

## This palace now
{now}
"""


def _palace_now(store: Any) -> str:
    """Return a few lines on the open palace for the prompt (name, counts, wings, mode)."""
    status = store.call("palace_status", {})
    wings = store.call("list_wings", {})["wings"]
    lines = [f"- Name: {status['name']}; {status['drawers']} drawers in {status['rooms']} "
             f"rooms of {status['wings']} wings; {status['entities']} entities."]
    if wings:
        shown = ", ".join(f"{w['name']} ({w['drawers']})" for w in wings[:40])
        more = f" and {len(wings) - 40} more" if len(wings) > 40 else ""
        lines.append(f"- Wings (drawers): {shown}{more}.")
    else:
        lines.append("- Empty so far: the first add_drawer creates its wing and room.")
    if store.status.read_only:
        lines.append("- Read-only here: another process holds the palace for writing, so "
                     "writes fail; reads work.")
    return "\n".join(lines)


def protocol_text(store: Any, agent: str = DEFAULT_AGENT) -> str:
    """Return the palace_protocol prompt's text for ``store``'s palace and ``agent``."""
    return PROTOCOL.format(agent=agent, now=_palace_now(store))


def instructions(store: Any) -> str:
    """Return the server's instructions (a short form of the protocol, for system prompts)."""
    text = ("palazzo is a memory palace: wings > rooms > drawers of verbatim text, a dated "
            "knowledge graph, agent diaries and provenance slices. Search before you answer "
            "or store; store exact words with add_drawer; record facts with kg_add and a "
            "valid_from date; write a diary entry with diary_write after a piece of work. "
            f"The prompt '{PROMPT_NAME}' explains the layout and every habit.")
    if store.status.read_only:
        text += (" This palace is read-only here (another process holds it for writing): "
                 "writes fail, reads work.")
    return text


# -- one connection's protocol state --------------------------------------------------------

def _params(params: Any) -> dict[str, Any]:
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object")
    return params


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
                       f"unsupported protocol version {version!r}"
                       + (" in a request envelope; that version starts with initialize"
                          if version in HANDSHAKE_VERSIONS else ""),
                       {"supported": list(SUPPORTED_VERSIONS), "requested": version})
    return version


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int | float)
                                      and not isinstance(value, bool))


class McpServer:
    """The MCP protocol over one stream: turns decoded messages into replies.

    ``store`` is a :class:`PalaceStore` (or anything with its ``call``, ``status`` and
    ``registry``). :attr:`version` is the version ``initialize`` negotiated (None before it);
    requests carrying a 2026-07-28 envelope do not use it.
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
    def handle_line(self, line: str) -> str | None:
        """Answer one line of the stream: the reply's JSON text, or None (a notification, a
        response, a blank line). Never raises for anything the peer sends."""
        if not line.strip():
            return None
        try:
            message = jsontext.loads(line, what="the message")
        except ValidationError as err:
            return _dump(_error(None, RpcError(PARSE_ERROR, f"parse error: {err}")))
        reply = self.handle(message)
        if reply is None:
            return None
        try:
            return _dump(reply)
        except (TypeError, ValueError) as err:  # a result that is not JSON: a bug, reported
            _log(f"unsendable reply: {err}")
            return _dump(_error(reply.get("id"), RpcError(
                INTERNAL_ERROR, f"internal error: the result is not JSON ({err})")))

    def handle(self, message: Any) -> dict[str, Any] | None:
        """Answer one decoded message with a reply dict, or None when none is due."""
        if isinstance(message, list):
            return _error(None, RpcError(INVALID_REQUEST, "batches are not supported (MCP "
                                         "removed JSON-RPC batching): send one message a line"))
        if not isinstance(message, dict):
            return _error(None, RpcError(INVALID_REQUEST, "a message must be a JSON object"))
        notification = "id" not in message
        rid = message.get("id")
        if "method" not in message:
            if not notification and ("result" in message or "error" in message):
                return None  # a response; this server sends no requests, so nothing awaits it
            return _error(rid if _valid_id(rid) else None,
                          RpcError(INVALID_REQUEST, "a request needs a 'method'"))
        method = message["method"]
        problem = None
        if message.get("jsonrpc") != "2.0":
            problem = "'jsonrpc' must be \"2.0\""
        elif not isinstance(method, str):
            problem = "'method' must be a string"
        elif not notification and not _valid_id(rid):
            problem = "'id' must be a string or a number"
        if notification:
            # notifications/initialized needs no action (initialize already answered), and
            # notifications/cancelled never finds a request in flight: requests run one at a
            # time, each answered before the next line is read. Others are not ours to act on.
            return None
        if problem is not None:
            return _error(rid if _valid_id(rid) else None, RpcError(INVALID_REQUEST, problem))
        try:
            result = self._request(method, message.get("params"))
        except RpcError as err:
            return _error(rid, err)
        except Exception as err:  # noqa: BLE001 - a bug: reported to the client and stderr
            _log(traceback.format_exc())
            return _error(rid, RpcError(INTERNAL_ERROR, f"internal error: {err}",
                                        {"type": type(err).__name__}))
        return {"jsonrpc": "2.0", "id": rid, "result": result}

    def _request(self, method: str, params: Any) -> dict[str, Any]:
        params = _params(params)
        meta = params.get("_meta")
        modern = isinstance(meta, dict) and META_VERSION in meta
        if method == "initialize" and not modern:
            return self._initialize(params)
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
            raise RpcError(METHOD_NOT_FOUND, f"method {method!r} not found"
                           + (f" in protocol version {version}" if modern else ""))
        result = handler(params, version)
        if modern:
            result = {**result, "resultType": "complete",
                      "_meta": {**result.get("_meta", {}), META_SERVER: dict(SERVER_INFO)}}
            if method in CACHEABLE:
                result.update(CACHE_HINTS)
        return result

    # -- lifecycle ----------------------------------------------------------------------
    def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        asked = params.get("protocolVersion")
        if not isinstance(asked, str):
            raise RpcError(INVALID_PARAMS, "initialize needs a string 'protocolVersion'")
        self.version = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
        return {"protocolVersion": self.version, "capabilities": dict(CAPABILITIES),
                "serverInfo": dict(SERVER_INFO), "instructions": instructions(self.store)}

    def _discover(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        return {"supportedVersions": list(SUPPORTED_VERSIONS),
                "capabilities": dict(CAPABILITIES), "serverInfo": dict(SERVER_INFO),
                "instructions": instructions(self.store)}

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
            raise RpcError(INVALID_PARAMS, f"Unknown tool: {name}", {"tool": name})
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
        return {"prompts": [{
            "name": PROMPT_NAME, "title": "Palace protocol",
            "description": "How the memory palace is laid out (wings, rooms, closets, verbatim "
                           "drawers, knowledge graph, diaries, pheromones, provenance slices) "
                           "and how to use its tools.",
            "arguments": [{"name": "agent", "required": False,
                           "description": f"your diary's agent name (default "
                                          f"{DEFAULT_AGENT!r})"}],
        }]}

    def _prompts_get(self, params: dict[str, Any], version: str) -> dict[str, Any]:
        name = params.get("name")
        if name != PROMPT_NAME:
            raise RpcError(INVALID_PARAMS, f"Unknown prompt: {name}; the prompt is "
                           f"{PROMPT_NAME!r}")
        args = params.get("arguments") or {}
        if not isinstance(args, dict) or not all(isinstance(v, str) for v in args.values()):
            raise RpcError(INVALID_PARAMS, "prompt arguments must be an object of strings")
        agent = args.get("agent") or DEFAULT_AGENT
        return {"description": "The palace protocol: layout and habits",
                "messages": [{"role": "user", "content": {
                    "type": "text", "text": protocol_text(self.store, agent)}}]}


def _no_cursor(params: dict[str, Any]) -> None:
    if params.get("cursor") is not None:
        raise RpcError(INVALID_PARAMS, "unknown cursor: this server lists everything at once")


def _error(rid: Any, err: RpcError) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "error": err.to_dict()}


def _dump(reply: dict[str, Any]) -> str:
    return json.dumps(reply, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _log(text: str) -> None:
    print(f"palazzo mcp: {text.rstrip()}", file=sys.stderr, flush=True)


def serve(store: Any, stdin: TextIO, stdout: TextIO) -> int:
    """Answer the MCP messages read from ``stdin`` on ``stdout`` until end of input.

    ``store`` is a :class:`PalaceStore` (or the same calls). Each reply is written and flushed
    before the next line is read, and a write is answered only after the store saved it.
    Returns the number of replies written (it stops early if the client closes stdout).
    Cost: one store call per tools/call.
    """
    server = McpServer(store)
    sent = 0
    while line := stdin.readline():
        reply = server.handle_line(line)
        if reply is not None:
            try:
                stdout.write(reply + "\n")
                stdout.flush()
            except BrokenPipeError:  # the client has gone; what it asked for is done
                break
            sent += 1
    return sent


def run_stdio(palace_dir: Path, make_palace: Callable[..., Palace],
              stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    """Serve the palace in ``palace_dir`` (created if missing) over stdio until end of input.

    Opens it as its writer, or read-only when another process holds its lock. Anything the
    engine might print goes to stderr, so stdout carries only MCP messages. Returns 0.
    """
    palace = PalaceDirectory(palace_dir, make_palace)
    wrapped: list[io.TextIOWrapper] = []
    # The protocol is UTF-8 whatever the locale says; bytes that are not UTF-8 become U+FFFD
    # (and then a parse error) instead of ending the server.
    if stdin is None:
        stdin = sys.stdin
        if hasattr(stdin, "buffer"):
            stdin = io.TextIOWrapper(stdin.buffer, encoding="utf-8", errors="replace")
            wrapped.append(stdin)
    if stdout is None:
        stdout = sys.stdout
        if hasattr(stdout, "buffer"):
            stdout = io.TextIOWrapper(stdout.buffer, encoding="utf-8", newline="\n")
            wrapped.append(stdout)
    mode = "read-only: another process holds its writer lock" if palace.status.read_only \
        else "writer"
    _log(f"pid {os.getpid()} serving {palace.path} ({mode})")
    if palace.status.problem:
        _log(f"on opening: {palace.status.problem}")
    try:
        with contextlib.redirect_stdout(sys.stderr):
            serve(palace, stdin, stdout)
    finally:
        palace.close()
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
    parser.add_argument("--embedder", default="auto", choices=EMBEDDERS,
                        help="auto: minilm when its weights are found, else hash")
    return parser


def command(argv: list[str] | None = None) -> int:
    """``python -m palazzo.hosts.mcp [--palace DIR] [--embedder NAME]``: returns the exit
    code."""
    args = add_arguments(argparse.ArgumentParser(
        prog="palazzo mcp", description="Serve a palace to MCP clients over stdio.")
    ).parse_args(argv)
    try:
        embedder = embedder_named(args.embedder)
    except PalazzoError as err:
        _log(str(err))
        return 1
    return main(Path(args.palace), embedder)


if __name__ == "__main__":
    sys.exit(command())
