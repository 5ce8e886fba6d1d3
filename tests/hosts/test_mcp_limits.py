"""The MCP server on huge names and on arguments the registry refuses: a short error, the
registry's ValidationError as a tool error, nothing changed."""

import math

import pytest

from palazzo.hosts.mcp import server as mcp
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import MemorySpace

HUGE = "x" * 6_000_000
INIT = {"protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"}}
MODERN = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
          "io.modelcontextprotocol/clientCapabilities": {}}


def started():
    store = PalaceStore(MemorySpace(), lambda **kw: Palace(clock=lambda: 0.0, **kw),
                        clock=lambda: 1_700_000_000.0)
    server = mcp.McpServer(store)
    assert "result" in server.handle({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                      "params": INIT})
    return store, server


def ask(server, method, params):
    return server.handle({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})


@pytest.mark.parametrize(("method", "params"), [
    ("tools/call", {"name": HUGE, "arguments": {}}),
    ("prompts/get", {"name": HUGE}),
    (HUGE, {}),
    ("tools/list", {"_meta": {**MODERN, "io.modelcontextprotocol/protocolVersion": HUGE}}),
])
def test_an_error_about_a_huge_name_is_short(method, params):
    _, server = started()
    error = ask(server, method, params)["error"]
    assert len(str(error)) < 600 and "6,000,000 characters" in error["message"]


@pytest.mark.parametrize(("name", "args", "said"), [
    ("search", {"query": "roses", "enrich": math.nan}, "Enrich must be a finite number"),
    ("add_drawer", {"wing": "w", "room": "r", "content": "c", "created_at": 10 ** 400},
     "beyond the range of a number"),
    ("batch", {"calls": []}, "Calls is empty"),
    ("list_tunnel_proposals", {"status": HUGE}, "6,000,000 characters"),
])
def test_refused_arguments_are_a_tool_error(name, args, said):
    store, server = started()
    result = ask(server, "tools/call", {"name": name, "arguments": args})["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("invalid_arguments: ") and said in text and len(text) < 400
    assert store.palace.counts()["drawers"] == 0
