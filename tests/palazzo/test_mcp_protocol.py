"""The MCP server's protocol, driven through in-memory text streams (no process, no files, so
these also run in Pyodide): both eras, tools, prompts, errors, and what a failed call leaves."""

import io
import json

import pytest

from palazzo.hosts import mcp
from palazzo.ops import REGISTRY
from palazzo.palace import Palace
from palazzo.palacefile import export_palace
from palazzo.persistence import PalaceStore
from palazzo.storage import MemorySpace

MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {},
          "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"}}
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}
DRAWER = {"wing": "work", "room": "auth", "content": "We chose Clerk over Auth0: pricing."}


def make_store(read_only=False):
    return PalaceStore(MemorySpace(), lambda **kw: Palace(clock=lambda: 0.0, **kw),
                       clock=lambda: 1_700_000_000.0, read_only=read_only)


def request(rid, method, params=None):
    msg = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def note(method, params=None):
    msg = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def talk(store, *messages):
    """Send ``messages`` (dicts, or raw lines) through serve(); return the parsed replies."""
    lines = [m if isinstance(m, str) else json.dumps(m) for m in messages]
    out = io.StringIO()
    sent = mcp.serve(store, io.StringIO("".join(line + "\n" for line in lines)), out)
    replies = out.getvalue().splitlines()
    assert len(replies) == sent
    return [json.loads(r) for r in replies]


def started(store):
    """An McpServer past the 2025-11-25 handshake."""
    server = mcp.McpServer(store)
    assert "result" in server.handle(request(0, "initialize", INIT))
    assert server.handle(note("notifications/initialized")) is None
    return server


def call(server, name, args=None, meta=None):
    params = {"name": name}
    if args is not None:
        params["arguments"] = args
    if meta is not None:
        params["_meta"] = meta
    return server.handle(request(7, "tools/call", params))


def state(store):
    return export_palace(store.palace, vectors="float32", exported_at=0.0)


# -- handshake era ------------------------------------------------------------------------

def test_initialize_handshake_then_tools():
    store = make_store()
    replies = talk(store, request(1, "initialize", INIT), note("notifications/initialized"),
                   request(2, "ping"), request(3, "tools/list"))
    assert [r["id"] for r in replies] == [1, 2, 3]
    init = replies[0]["result"]
    assert init["protocolVersion"] == "2025-11-25"
    assert init["serverInfo"] == {"name": "palazzo", "version": mcp.__version__}
    assert init["capabilities"] == {"tools": {}, "prompts": {}}
    assert "palace_protocol" in init["instructions"]
    assert replies[1]["result"] == {}
    assert replies[2]["result"]["tools"]


@pytest.mark.parametrize(("asked", "answered"), [
    ("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"), ("2025-03-26", "2025-03-26"),
    ("2024-11-05", "2024-11-05"), ("1999-01-01", "2025-11-25"),
    ("2026-07-28", "2025-11-25"),  # no handshake in 2026-07-28: the newest that has one
])
def test_initialize_negotiates_the_version(asked, answered):
    reply = mcp.McpServer(make_store()).handle(
        request(1, "initialize", {**INIT, "protocolVersion": asked}))
    assert reply["result"]["protocolVersion"] == answered


def test_initialize_needs_a_protocol_version():
    reply = mcp.McpServer(make_store()).handle(request(1, "initialize", {"capabilities": {}}))
    assert reply["error"]["code"] == mcp.INVALID_PARAMS


def test_notifications_get_no_reply():
    replies = talk(make_store(), request(1, "initialize", INIT),
                   note("notifications/initialized"),
                   note("notifications/cancelled", {"requestId": 1}),
                   note("notifications/progress", {"progressToken": 1, "progress": 1}),
                   note("no/such/notification"),
                   {"method": "notifications/initialized"},  # no jsonrpc: still no reply
                   note("tools/call", {"name": "add_drawer", "arguments": DRAWER}),
                   request(2, "ping"))
    assert [r["id"] for r in replies] == [1, 2]


def test_a_notification_never_runs_a_tool():
    store = make_store()
    talk(store, request(1, "initialize", INIT),
         note("tools/call", {"name": "add_drawer", "arguments": DRAWER}))
    assert store.palace.counts()["drawers"] == 0


def test_requests_before_initialize_are_refused_except_ping_and_discover():
    server = mcp.McpServer(make_store())
    refused = server.handle(request(1, "tools/list"))
    assert refused["error"]["code"] == mcp.INVALID_REQUEST
    assert "initialize" in refused["error"]["message"]
    assert server.handle(request(2, "ping"))["result"] == {}
    assert "supportedVersions" in server.handle(request(3, "server/discover"))["result"]


def test_responses_from_the_client_are_ignored():
    server = started(make_store())
    assert server.handle({"jsonrpc": "2.0", "id": 9, "result": {}}) is None
    assert server.handle({"jsonrpc": "2.0", "id": 9, "error": {"code": 1, "message": "x"}}) \
        is None


# -- tools --------------------------------------------------------------------------------

def test_tools_list_is_the_registry():
    tools = started(make_store()).handle(request(1, "tools/list"))["result"]["tools"]
    assert [t["name"] for t in tools] == REGISTRY.names()
    for tool, op in zip(tools, REGISTRY.describe(), strict=True):
        assert tool == {"name": op["name"], "description": op["summary"],
                        "inputSchema": op["input_schema"]}
        assert tool["inputSchema"]["type"] == "object"


def test_tools_call_runs_the_operation_through_the_store():
    store = make_store()
    server = started(store)
    result = call(server, "add_drawer", DRAWER)["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["created"] is True
    assert json.loads(result["content"][0]["text"]) == result["structuredContent"]
    assert result["content"][0]["type"] == "text"
    assert store.status.journal_records == 1  # journaled before the answer
    found = call(server, "search", {"query": "Clerk pricing"})["result"]["structuredContent"]
    assert found["results"][0]["drawer_id"] == result["structuredContent"]["drawer_id"]


@pytest.mark.parametrize("args", [
    {"wing": "work", "room": "auth"},                       # a required field missing
    {**DRAWER, "colour": "red"},                            # a field the schema does not have
    {**DRAWER, "importance": 2},                            # out of range
    {**DRAWER, "content": ""},                              # too short
    {**DRAWER, "wing": 7},                                  # wrong type
])
def test_schema_errors_are_tool_errors_and_change_nothing(args):
    store = make_store()
    server = started(store)
    call(server, "add_drawer", {**DRAWER, "content": "Already here."})
    before, records = state(store), store.status.journal_records
    result = call(server, "add_drawer", args)["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("invalid_arguments: add_drawer arguments")
    assert result["structuredContent"]["error"]["code"] == "invalid_arguments"
    assert state(store) == before
    assert store.status.journal_records == records


def test_operation_errors_are_tool_errors():
    server = started(make_store())
    result = call(server, "get_drawer", {"drawer_id": "drawer_nope"})["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "not_found"


def test_a_read_only_store_refuses_writes_as_tool_errors():
    store = make_store(read_only=True)
    server = started(store)
    assert "read-only" in server.handle(request(1, "initialize", INIT))["result"]["instructions"]
    result = call(server, "add_drawer", DRAWER)["result"]
    assert result["isError"] is True
    assert "read-only" in result["content"][0]["text"]
    assert call(server, "palace_status")["result"]["isError"] is False
    assert store.palace.counts()["drawers"] == 0


def test_unknown_tool_is_invalid_params():
    reply = call(started(make_store()), "no_such_tool", {})
    assert reply["error"]["code"] == mcp.INVALID_PARAMS
    assert reply["error"]["message"] == "Unknown tool: no_such_tool"


@pytest.mark.parametrize("params", [{}, {"name": 3}, {"name": "search", "arguments": []},
                                    {"name": "search", "arguments": "query=x"}])
def test_malformed_tools_call_params_are_invalid_params(params):
    reply = started(make_store()).handle(request(1, "tools/call", params))
    assert reply["error"]["code"] == mcp.INVALID_PARAMS


def test_params_must_be_an_object():
    reply = started(make_store()).handle(request(1, "tools/list", ["x"]))
    assert reply["error"]["code"] == mcp.INVALID_PARAMS


def test_a_cursor_the_server_never_gave_is_invalid_params():
    server = started(make_store())
    for method in ("tools/list", "prompts/list"):
        assert server.handle(request(1, method, {"cursor": "x"}))["error"]["code"] == \
            mcp.INVALID_PARAMS


def test_no_structured_content_before_2025_06_18():
    server = mcp.McpServer(make_store())
    server.handle(request(1, "initialize", {**INIT, "protocolVersion": "2025-03-26"}))
    result = call(server, "add_drawer", DRAWER)["result"]
    assert "structuredContent" not in result
    assert json.loads(result["content"][0]["text"])["created"] is True
    assert "structuredContent" not in call(server, "get_drawer", {"drawer_id": "x"})["result"]


# -- prompts ------------------------------------------------------------------------------

def test_palace_protocol_prompt():
    store = make_store()
    server = started(store)
    call(server, "add_drawer", DRAWER)
    prompts = server.handle(request(1, "prompts/list"))["result"]["prompts"]
    assert [p["name"] for p in prompts] == ["palace_protocol"]
    got = server.handle(request(2, "prompts/get", {"name": "palace_protocol",
                                                   "arguments": {"agent": "claude"}}))
    messages = got["result"]["messages"]
    assert messages[0]["role"] == "user"
    text = messages[0]["content"]["text"]
    for word in ("Wing", "Room", "Closet", "Drawer", "verbatim", "Knowledge graph", "Diaries",
                 "Pheromones", "Provenance", "search", "add_drawer", "kg_add", "valid_from",
                 "diary_write", "slice_context", "verify_token", 'agent: "claude"',
                 "work (1)"):
        assert word in text, word


@pytest.mark.parametrize("params", [{"name": "nope"}, {},
                                    {"name": "palace_protocol", "arguments": {"agent": 3}}])
def test_prompts_get_errors(params):
    reply = started(make_store()).handle(request(1, "prompts/get", params))
    assert reply["error"]["code"] == mcp.INVALID_PARAMS


# -- JSON-RPC errors ----------------------------------------------------------------------

def test_parse_error():
    replies = talk(make_store(), "{not json", '{"jsonrpc": "2.0", "id": 1, "method": "ping"')
    assert [r["error"]["code"] for r in replies] == [mcp.PARSE_ERROR, mcp.PARSE_ERROR]
    assert all(r["id"] is None for r in replies)


def test_blank_lines_are_skipped():
    assert talk(make_store(), "", "   ", json.dumps(request(1, "ping"))) == \
        [{"jsonrpc": "2.0", "id": 1, "result": {}}]


@pytest.mark.parametrize("message", [
    [request(1, "ping")],                                    # a batch
    [],
    "ping",
    42,
    {"id": 1, "method": "ping"},                             # no jsonrpc
    {"jsonrpc": "1.0", "id": 1, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1, "method": 5},
    {"jsonrpc": "2.0", "id": None, "method": "ping"},        # MCP ids are never null
    {"jsonrpc": "2.0", "id": True, "method": "ping"},
    {"jsonrpc": "2.0", "id": 1},                             # neither request nor response
])
def test_invalid_requests(message):
    reply = started(make_store()).handle(message)
    assert reply["error"]["code"] == mcp.INVALID_REQUEST


def test_unknown_method():
    server = started(make_store())
    for method in ("resources/list", "logging/setLevel", "no/such"):
        assert server.handle(request(1, method))["error"]["code"] == mcp.METHOD_NOT_FOUND


def test_replies_are_one_ascii_line_each():
    store = make_store()
    text = "Ünïcödé line\u2028separator and a\nnewline"
    replies = io.StringIO()
    lines = [request(1, "initialize", INIT),
             request(2, "tools/call", {"name": "add_drawer",
                                       "arguments": {**DRAWER, "content": text}}),
             request(3, "tools/call", {"name": "search", "arguments": {"query": "separator"}})]
    mcp.serve(store, io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), replies)
    raw = replies.getvalue()
    assert raw.isascii() and raw.count("\n") == 3
    hit = json.loads(raw.splitlines()[2])["result"]
    assert hit["structuredContent"]["results"][0]["content"] == text
    assert json.loads(hit["content"][0]["text"])["results"][0]["content"] == text


# -- stateless era (2026-07-28) -----------------------------------------------------------

def test_server_discover():
    reply = mcp.McpServer(make_store()).handle(request(1, "server/discover", {"_meta": MODERN}))
    result = reply["result"]
    assert "2026-07-28" in result["supportedVersions"]
    assert "2025-11-25" in result["supportedVersions"]
    assert result["capabilities"] == {"tools": {}, "prompts": {}}
    assert result["serverInfo"]["name"] == "palazzo"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "palazzo"
    assert result["resultType"] == "complete"
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")
    assert result["instructions"]


def test_stateless_requests_need_no_initialize():
    store = make_store()
    server = mcp.McpServer(store)
    tools = server.handle(request(1, "tools/list", {"_meta": MODERN}))["result"]
    assert [t["name"] for t in tools["tools"]] == REGISTRY.names()
    assert tools["resultType"] == "complete" and "ttlMs" in tools and "cacheScope" in tools
    result = call(server, "add_drawer", DRAWER, meta=MODERN)["result"]
    assert result["isError"] is False and result["resultType"] == "complete"
    assert result["structuredContent"]["created"] is True
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "palazzo"
    assert store.status.journal_records == 1
    bad = call(server, "add_drawer", {"wing": "w"}, meta=MODERN)["result"]
    assert bad["isError"] is True and bad["resultType"] == "complete"
    assert server.version is None  # nothing was negotiated: each request spoke for itself
    got = server.handle(request(2, "prompts/get", {"name": "palace_protocol", "_meta": MODERN}))
    assert got["result"]["messages"][0]["content"]["text"]
    assert server.handle(request(3, "prompts/list", {"_meta": MODERN}))["result"]["prompts"]


def test_stateless_envelope_errors():
    server = mcp.McpServer(make_store())
    no_caps = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    reply = server.handle(request(1, "tools/list", {"_meta": no_caps}))
    assert reply["error"]["code"] == mcp.INVALID_PARAMS
    assert "clientCapabilities" in reply["error"]["message"]
    for version in ("2099-01-01", "2025-11-25"):
        meta = {**MODERN, "io.modelcontextprotocol/protocolVersion": version}
        error = server.handle(request(2, "tools/list", {"_meta": meta}))["error"]
        assert error["code"] == mcp.UNSUPPORTED_PROTOCOL_VERSION
        assert error["data"]["requested"] == version
        assert "2026-07-28" in error["data"]["supported"]
    # Removed in 2026-07-28: ping and the handshake.
    assert server.handle(request(3, "ping", {"_meta": MODERN}))["error"]["code"] == \
        mcp.METHOD_NOT_FOUND
    assert server.handle(request(4, "initialize", {**INIT, "_meta": MODERN}))["error"][
        "code"] == mcp.METHOD_NOT_FOUND
    assert server.handle(request(5, "tools/call", {"name": "nope", "_meta": MODERN}))[
        "error"]["code"] == mcp.INVALID_PARAMS


def test_both_eras_on_one_stream():
    store = make_store()
    replies = talk(store, request(1, "server/discover", {"_meta": MODERN}),
                   request(2, "tools/call", {"name": "add_drawer", "arguments": DRAWER,
                                             "_meta": MODERN}),
                   request(3, "initialize", INIT), note("notifications/initialized"),
                   request(4, "tools/call", {"name": "list_wings"}))
    assert [r["id"] for r in replies] == [1, 2, 3, 4]
    assert "resultType" not in replies[3]["result"]  # the handshake era has no resultType
    assert "ttlMs" not in talk(store, request(5, "initialize", INIT),
                               request(6, "tools/list"))[1]["result"]
    assert replies[3]["result"]["structuredContent"]["wings"][0]["name"] == "work"
