"""The MCP server's protocol, driven through in-memory text streams (no process, no files, so
these also run in Pyodide): both eras, tools, prompts, errors, and what a failed call leaves."""

import io
import json

import pytest

from palazzo.formats.palacefile import export_palace
from palazzo.hosts.mcp import server as mcp
from palazzo.ops import REGISTRY
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace

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


def talk(store, *messages, **options):
    """Send ``messages`` (dicts, or raw lines) through serve(); return the parsed replies,
    sorted by id (cheap requests may overtake calls on the worker; id-less errors first, in
    the order written)."""
    lines = [m if isinstance(m, str | bytes) else json.dumps(m) for m in messages]
    if any(isinstance(line, bytes) for line in lines):
        stream = io.BytesIO(b"".join((line if isinstance(line, bytes) else line.encode())
                                     + b"\n" for line in lines))
    else:
        stream = io.StringIO("".join(line + "\n" for line in lines))
    out = io.StringIO()
    sent = mcp.serve(store, stream, out, **options)
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    assert len(replies) == sent
    return sorted(replies, key=lambda r: (r["id"] is not None, str(r["id"]).zfill(20)))


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


@pytest.mark.parametrize(("args", "text"), [
    ({"wing": "work", "room": "auth"}, "Content is missing"),   # a required field missing
    ({**DRAWER, "colour": "red"}, "Unknown field(s) for add_drawer arguments: colour"),
    ({**DRAWER, "importance": 2}, "Importance must be at most 1, not 2."),  # out of range
    ({**DRAWER, "content": ""}, "Content is empty"),            # too short
    ({**DRAWER, "wing": 7}, "Wing must be text, not 7."),       # wrong type
])
def test_schema_errors_are_tool_errors_and_change_nothing(args, text):
    store = make_store()
    server = started(store)
    call(server, "add_drawer", {**DRAWER, "content": "Already here."})
    before, records = state(store), store.status.journal_records
    result = call(server, "add_drawer", args)["result"]
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith(f"invalid_arguments: {text}")
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
    assert [p["name"] for p in prompts] == ["palace_protocol", "wake_up"]
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


def test_wake_up_prompt_gives_the_palace_within_the_budget():
    store = make_store()
    server = started(store)
    call(server, "add_drawer", DRAWER)
    got = server.handle(request(1, "prompts/get", {"name": "wake_up",
                                                   "arguments": {"budget": "100"}}))
    text = got["result"]["messages"][0]["content"]["text"]
    assert DRAWER["content"][:40] in text and "of 100 tokens" in got["result"]["description"]


@pytest.mark.parametrize("params", [{"name": "nope"}, {},
                                    {"name": "palace_protocol", "arguments": {"agent": 3}},
                                    {"name": "wake_up", "arguments": {"budget": "ten"}},
                                    {"name": "wake_up", "arguments": {"budget": "5"}}])
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


# -- no line ends the server (issue 11) ---------------------------------------------------

PING = json.dumps(request("alive", "ping"))


def survived(replies, hostile):
    """Check that each of ``hostile`` lines got an error with id null, and the ping after them
    its answer; return the errors."""
    assert replies[-1] == {"jsonrpc": "2.0", "id": "alive", "result": {}}
    errors = replies[:-1]
    assert len(errors) == hostile
    assert all(r["id"] is None and r["error"]["code"] in (mcp.PARSE_ERROR, mcp.INVALID_REQUEST)
               for r in errors), errors
    return [r["error"] for r in errors]


@pytest.mark.parametrize("rid", ["1e400", "-1e400", "NaN", "Infinity", "-Infinity"])
def test_an_id_no_json_can_echo_is_a_parse_error_not_the_end(rid):
    line = '{"jsonrpc":"2.0","id":' + rid + ',"method":"ping"}'
    errors = survived(talk(make_store(), line, PING), 1)
    assert errors[0]["code"] == mcp.PARSE_ERROR


@pytest.mark.parametrize("rid", [1.5, 1.0, 1e3, 2**53, -(2**53), False, None, {"a": 1}, [1]])
def test_ids_are_strings_or_exact_integers(rid):
    errors = survived(talk(make_store(), request(rid, "ping"), PING), 1)
    assert errors[0]["code"] == mcp.INVALID_REQUEST
    assert "'id' must be" in errors[0]["message"]


@pytest.mark.parametrize("rid", [0, -1, 2**53 - 1, -(2**53 - 1), "", "x", "1e400"])
def test_good_ids_are_echoed(rid):
    assert talk(make_store(), request(rid, "ping")) == [{"jsonrpc": "2.0", "id": rid,
                                                         "result": {}}]


@pytest.mark.parametrize(("value", "why"), [
    ("NaN", "NaN is not a JSON number"), ("-Infinity", "-Infinity is not a JSON number"),
    ("1e400", "beyond the range of a double"), ("-2e308", "beyond the range of a double"),
    ("1" * 400, "beyond the range of a double"), ("9" * 5000, "beyond the range of a double"),
])
def test_numbers_no_palace_can_hold_are_refused_anywhere(value, why):
    store = make_store()
    line = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_drawer",'
            '"arguments":{"wing":"w","room":"r","content":"x","importance":' + value + "}}}")
    replies = talk(store, request(0, "initialize", INIT), line, PING)
    assert replies[0]["error"]["code"] == mcp.PARSE_ERROR
    assert why in replies[0]["error"]["message"]
    assert store.palace.counts()["drawers"] == 0


def test_a_lone_surrogate_is_refused_and_a_pair_is_kept():
    store = make_store()
    lone = ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_drawer",'
            '"arguments":{"wing":"w","room":"r","content":"half \\ud800 a pair"}}}')
    pair = lone.replace('"id":1', '"id":2').replace("\\ud800", "\\ud83d\\ude00")
    replies = talk(store, request(0, "initialize", INIT), lone, pair)
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == mcp.PARSE_ERROR
    assert "lone surrogate" in replies[0]["error"]["message"]
    assert replies[2]["result"]["isError"] is False
    assert store.palace.counts()["drawers"] == 1
    got = mcp.McpServer(store).handle(request(3, "tools/call", {
        "name": "get_drawer", "arguments": {"drawer_id": replies[2]["result"][
            "structuredContent"]["drawer_id"]}, "_meta": MODERN}))
    assert got["result"]["structuredContent"]["drawer"]["content"] == "half \U0001F600 a pair"


def test_hostile_lines_then_a_request_is_still_answered():
    store = make_store()
    hostile = [
        "[" * 100_000,                                            # deep nesting
        '{"a":' * 50_000 + "1" + "}" * 50_000,
        '{"jsonrpc":"2.0","id":1,"method":"ping","params":' + "[" * 200 + "]" * 200 + "}",
        "1" * 10_000,                                             # a huge number
        '{"jsonrpc":"2.0","id":' + "7" * 5000 + ',"method":"ping"}',
        b'\xff\xfe{"jsonrpc":"2.0","id":1,"method":"ping"}',      # not UTF-8
        b'{"jsonrpc":"2.0","id":"\xed\xa0\x80","method":"ping"}',  # a surrogate, raw
        '{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',        # a lone surrogate escape
        '{"jsonrpc":"2.0","id":1,"method":"ping","x":"' + "y" * 10_000_000,  # 10 MB, cut off
        '"' + "z" * 10_000_000 + '"',                             # 10 MB, not an object
        "null", "true", "42", '"ping"', "[]", "{", "}", "\x00", "\x0c{}",
        '{"jsonrpc":"2.0","method":"ping","id":{"nested":1}}',
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add_drawer",'
        '"arguments":{"wing":"w","room":"r","content":NaN}}}',
    ]
    replies = talk(store, request(0, "initialize", INIT), *hostile, PING)
    errors = survived([r for r in replies if r["id"] != 0], len(hostile))
    assert all(len(e["message"]) < 600 for e in errors)  # one readable line, no echo of input
    assert store.palace.counts()["drawers"] == 0
    replies = talk(store, request(0, "initialize", INIT), request(1, "tools/call", {
        "name": "add_drawer", "arguments": DRAWER}))
    assert replies[1]["result"]["structuredContent"]["created"] is True


def test_a_line_past_the_limit_is_refused_unread_and_the_next_is_answered():
    store = make_store()
    big = request(5, "tools/call", {"name": "add_drawer",
                                    "arguments": {**DRAWER, "content": "x" * 5000}})
    fits = request(6, "tools/call", {"name": "add_drawer", "arguments": DRAWER})
    # The TypeScript SDK writes the id last.
    last = json.dumps({"method": "tools/call", "params": big["params"], "jsonrpc": "2.0",
                       "id": 7})
    nested = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": {
        "arguments": {"content": "x" * 5000, "id": 9}}})  # no id: that one is nested
    replies = talk(store, request(0, "initialize", INIT), big, last, nested, fits,
                   max_message=len(json.dumps(fits)))
    refused = {r["id"]: r for r in replies if "error" in r}
    assert set(refused) == {5, 7, None}  # the id when one end names it, else null
    for reply in refused.values():
        assert reply["error"]["code"] == mcp.INVALID_REQUEST
        assert "message too large" in reply["error"]["message"]
    assert next(r for r in replies if r["id"] == 6)["result"]["isError"] is False
    assert store.palace.counts()["drawers"] == 1


@pytest.mark.cpython_only  # 70 MB in a WebAssembly heap is not worth it
def test_the_default_limit_refuses_a_70_mb_line_and_admits_the_largest_drawer():
    store = make_store(read_only=True)  # the tool answers at once: reaching it is the point
    huge = '{"jsonrpc":"2.0","id":1,"method":"ping","junk":"' + "x" * 70_000_000 + '"}'
    largest = {**DRAWER, "content": "\U0001F600" * 5_000_000}  # 12 bytes each, escaped
    line = json.dumps(request(2, "tools/call", {"name": "add_drawer", "arguments": largest}))
    assert len(line) > 60_000_000
    replies = talk(store, request(0, "initialize", INIT), huge, line)
    assert replies[1]["id"] == 1 and "message too large" in replies[1]["error"]["message"]
    assert "read-only" in replies[2]["result"]["content"][0]["text"]  # read, decoded, called


@pytest.mark.cpython_only  # tracemalloc and large buffers
def test_a_long_line_is_skipped_in_pieces_not_held():
    import tracemalloc

    stream = io.BytesIO(b'{"id":1,"x":"' + b"y" * 40_000_000 + b'"}\n' + PING.encode() + b"\n")
    out = io.StringIO()
    tracemalloc.start()
    try:
        mcp.serve(make_store(), stream, out, max_message=1_000_000)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8_000_000  # a few pieces of 1 MB, never the 40 MB line
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    assert replies[0]["id"] == 1 and "too large" in replies[0]["error"]["message"]
    assert replies[1]["result"] == {}


@pytest.mark.parametrize("reply", [
    {"jsonrpc": "2.0", "id": 1, "result": {"x": float("nan")}},
    {"jsonrpc": "2.0", "id": float("inf"), "result": {"x": object()}},
])
def test_a_reply_that_is_not_json_becomes_an_internal_error(reply):
    answer = json.loads(mcp._text(reply))
    assert answer["error"]["code"] == mcp.INTERNAL_ERROR
    assert answer["id"] == (1 if reply["id"] == 1 else None)



class FailingStore(PalaceStore):
    """A real store whose every second call fails with an exception palazzo never raises on
    purpose (a bug), to see the server answer it and go on."""

    calls = 0

    def call(self, name, args=None):
        self.calls += 1
        if self.calls % 2:
            raise RuntimeError("a bug in " + name)
        return super().call(name, args)


def test_a_bug_in_a_call_is_an_internal_error_and_the_next_call_runs():
    store = FailingStore(MemorySpace(), lambda **kw: Palace(clock=lambda: 0.0, **kw))
    replies = talk(store, request(0, "initialize", INIT),
                   request(1, "tools/call", {"name": "add_drawer", "arguments": DRAWER}),
                   request(2, "ping"),
                   request(3, "tools/call", {"name": "add_drawer", "arguments": DRAWER}))
    assert replies[1]["error"] == {"code": mcp.INTERNAL_ERROR,
                                   "message": "internal error: a bug in add_drawer",
                                   "data": {"type": "RuntimeError"}}
    assert replies[2]["result"] == {}
    assert replies[3]["result"]["structuredContent"]["created"] is True

# -- calls on the worker --------------------------------------------------------------------

def test_a_request_keeps_the_version_it_was_read_under():
    store = make_store()
    old = {**INIT, "protocolVersion": "2025-03-26"}
    replies = talk(store, request(1, "tools/call", {"name": "palace_status"}),
                   request(2, "initialize", old),
                   request(3, "tools/call", {"name": "add_drawer", "arguments": DRAWER}),
                   request(4, "initialize", INIT),
                   request(5, "tools/call", {"name": "palace_status"}))
    assert replies[0]["error"]["code"] == mcp.INVALID_REQUEST  # before initialize, still
    assert "structuredContent" not in replies[2]["result"]     # read under 2025-03-26
    assert replies[4]["result"]["structuredContent"]["drawers"] == 1


def test_calls_run_and_are_answered_in_order_between_pings():
    store = make_store()
    lines = [request(0, "initialize", INIT)]
    for i in range(1, 21):
        lines.append(request(i, "tools/call", {"name": "add_drawer", "arguments": {
            **DRAWER, "content": f"note {i}"}}))
        lines.append(request(f"ping{i}", "ping"))
    out = io.StringIO()
    mcp.serve(store, io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out)
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    calls = [r["id"] for r in replies if isinstance(r["id"], int) and r["id"] > 0]
    assert calls == list(range(1, 21))
    assert len(replies) == 41
    assert store.status.journal_records == 20


@pytest.mark.cpython_only  # Pyodide has no threads: there every line is answered in turn
def test_a_ping_overtakes_a_long_call():
    store = make_store()
    content = " ".join(f"word{i}" for i in range(200_000))  # 2 MB to chunk and index: slow
    lines = [request(0, "initialize", INIT),
             request(1, "tools/call", {"name": "add_drawer", "arguments": {
                 **DRAWER, "content": content}}),
             request(2, "ping")]
    out = io.StringIO()
    mcp.serve(store, io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out)
    ids = [json.loads(r)["id"] for r in out.getvalue().splitlines()]
    assert ids == [0, 2, 1]
    assert store.status.journal_records == 1


def test_calls_past_the_queue_budget_wait_their_turn():
    store = make_store()
    lines = [request(0, "initialize", INIT)] + [
        request(i, "tools/call", {"name": "add_drawer", "arguments": {
            **DRAWER, "content": f"note {i} " + "x" * 1500}}) for i in range(1, 31)]
    out = io.StringIO()
    # The queue holds at most 2,000 bytes of waiting calls: about one of these at a time.
    mcp.serve(store, io.StringIO("".join(json.dumps(m) + "\n" for m in lines)), out,
              max_message=2000)
    replies = [json.loads(r) for r in out.getvalue().splitlines()]
    assert [r["id"] for r in replies] == list(range(31))
    assert all(r["result"]["isError"] is False for r in replies[1:])
    assert store.status.journal_records == 30
