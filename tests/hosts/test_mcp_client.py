"""A real MCP client (the official ``mcp`` Python SDK) drives ``python -m palazzo.hosts.mcp.server``
over stdio: tools, prompts, errors, a SIGKILL right after an acknowledged write, and a second
server on the same palace directory."""

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.cpython_only

pytest.importorskip("mcp", reason="the MCP SDK client is a dev dependency (pip install mcp)")

import anyio  # noqa: E402 - installed with the SDK
from mcp import Client, MCPError, StdioServerParameters, stdio_client  # noqa: E402

from palazzo.ops import REGISTRY  # noqa: E402
from palazzo.persist.storage import DirectoryRoot  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
MODES = {"auto": "2026-07-28", "legacy": "2025-11-25"}  # auto: server/discover, then stateless


def server(palace: Path, env: dict | None = None) -> StdioServerParameters:
    """``python -m palazzo.hosts.mcp.server`` on ``palace`` (hash embedder: fast, no model
    files), with ``env`` added to its environment."""
    env = {"PYTHONPATH": str(ROOT / "py"), **(env or {})}
    return StdioServerParameters(
        command=sys.executable, env=env, cwd=str(palace.parent),
        args=["-m", "palazzo.hosts.mcp.server", "--palace", str(palace), "--embedder", "hash"])


def connect(palace: Path, mode: str = "auto", log=None, env: dict | None = None) -> Client:
    """A client for a new server on ``palace``; ``log`` (an open file) gets its stderr."""
    params = server(palace, env)
    transport = stdio_client(params, errlog=log) if log is not None else params
    return Client(transport, mode=mode, read_timeout_seconds=60)


def run(fn):
    """Run an async test body with anyio on a loop of its own (in a thread: when the browser
    tests ran first in this session, Playwright's loop is running in the main thread)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, fn).result()


async def ok(client: Client, name: str, args: dict | None = None) -> dict:
    """Call a tool that must succeed; return its structured result (checked against the
    text content)."""
    result = await client.call_tool(name, args or {})
    assert not result.is_error, result.content[0].text
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def fails(client: Client, name: str, args: dict) -> str:
    """Call a tool that must answer a tool error; return its message."""
    result = await client.call_tool(name, args)
    assert result.is_error
    return result.content[0].text


async def drawers(client: Client) -> int:
    return (await ok(client, "palace_status"))["drawers"]


@pytest.mark.parametrize("mode", list(MODES))
def test_a_session_with_the_sdk_client(tmp_path, mode):
    palace = tmp_path / "atrium"

    async def session() -> None:
        async with connect(palace, mode) as client:
            assert client.protocol_version == MODES[mode]
            assert client.server_capabilities.tools is not None
            tools = (await client.list_tools()).tools
            assert sorted(t.name for t in tools) == REGISTRY.names()
            by_name = {t.name: t for t in tools}
            assert by_name["add_drawer"].input_schema == REGISTRY.get("add_drawer").schema
            assert by_name["search"].description == REGISTRY.get("search").summary

            auth = await ok(client, "add_drawer", {
                "wing": "work", "room": "auth", "source": "standup",
                "content": "We chose Clerk over Auth0 because of pricing."})
            await ok(client, "add_drawer", {"wing": "home", "room": "garden",
                                            "content": "Tomatoes need staking in June."})
            assert auth["created"] is True
            hits = (await ok(client, "search", {"query": "Clerk pricing", "limit": 3}))["results"]
            assert hits[0]["drawer_id"] == auth["drawer_id"]
            assert hits[0]["content"] == "We chose Clerk over Auth0 because of pricing."
            # "This helped", with the query that found it: the search learns for that query.
            garden = hits[1]["drawer_id"]
            told = await ok(client, "pheromone_deposit", {"drawer_ids": [garden],
                                                          "query": "Clerk pricing"})
            assert told["trails"] == 1
            learned = (await ok(client, "search", {"query": "Clerk pricing", "limit": 3,
                                                   "pheromone": 2}))["results"]
            assert learned[0]["drawer_id"] == garden and learned[0]["scores"]["pheromone"] > 0
            other = (await ok(client, "search", {"query": "tomatoes staking", "limit": 3,
                                                 "pheromone": 2}))["results"]
            assert all(h["scores"]["pheromone"] == 0.0 for h in other)

            fact = await ok(client, "kg_add", {"subject": "Kai", "predicate": "works on",
                                               "object": "Orion", "valid_from": "2025-06-01",
                                               "source_drawer": auth["drawer_id"]})
            assert fact["created"] is True
            facts = (await ok(client, "kg_query", {"entity": "kai"}))["facts"]
            assert [(f["predicate"], f["object"], f["valid_from"]) for f in facts] == \
                [("works_on", "orion", "2025-06-01")]

            path = await ok(client, "navigate", {"start": "work/auth", "goal": "home/garden"})
            assert path["found"] is True
            assert path["nodes"][0] == "room:work/auth" and path["nodes"][-1] == \
                "room:home/garden"

            first = await ok(client, "add_turn", {"conversation": "c1", "role": "user",
                                                  "content": "Which auth provider?"})
            second = await ok(client, "add_turn", {
                "conversation": "c1", "role": "assistant", "content": "Clerk, for pricing.",
                "parents": [first["turn"]["id"]]})
            bundle = (await ok(client, "slice_context",
                               {"anchor": second["turn"]["id"]}))["bundle"]
            assert {t["id"] for t in bundle["turns"]} >= {first["turn"]["id"],
                                                          second["turn"]["id"]}
            verdict = await ok(client, "verify_token", {"bundle": bundle, "recompute": True})
            assert verdict["valid"] is True and verdict["current"] is True
            forged = {**bundle, "token": "0" * len(bundle["token"])}
            assert (await ok(client, "verify_token", {"bundle": forged}))["valid"] is False

            # Malformed arguments: a tool error naming the problem, and nothing changes.
            before = await ok(client, "export", {"vectors": "none"})
            for bad in ({"wing": "work", "room": "auth"},
                        {"wing": "work", "room": "auth", "content": "x", "colour": "red"},
                        {"wing": "work", "room": "auth", "content": "x", "importance": 3}):
                assert "invalid_arguments" in await fails(client, "add_drawer", bad)
            assert "invalid_arguments" in await fails(client, "kg_add", {"subject": "Kai"})
            after = await ok(client, "export", {"vectors": "none"})
            assert after["document"]["palace"] == before["document"]["palace"]
            assert await drawers(client) == 4  # two drawers, and a drawer for each turn

            with pytest.raises(MCPError) as unknown:
                await client.call_tool("no_such_tool", {})
            assert unknown.value.code == -32602
            assert "no_such_tool" in unknown.value.message

            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["palace_protocol", "wake_up"]
            text = (await client.get_prompt("palace_protocol", {"agent": "claude"})) \
                .messages[0].content.text
            assert "verbatim" in text and "kg_add" in text and 'agent: "claude"' in text
            # The wake-up prompt: the palace's own lines, within the budget asked for.
            woke = (await client.get_prompt("wake_up", {"budget": "200"})).messages[0]
            assert "## Essential story" in woke.content.text
            assert "Clerk, for pricing." in woke.content.text
            with pytest.raises(MCPError) as bad_budget:
                await client.get_prompt("wake_up", {"budget": "lots"})
            assert bad_budget.value.code == -32602 and "budget" in bad_budget.value.message

    run(session)


def test_a_killed_server_keeps_its_acknowledged_write(tmp_path):
    palace = tmp_path / "atrium"
    log_path = tmp_path / "server.log"
    content = "Acknowledged means on disk."

    async def write_then_die() -> str:
        with open(log_path, "w") as log:
            client = connect(palace, log=log)
            async with client:
                await ok(client, "add_drawer", {"wing": "w", "room": "r", "content": "first"})
                added = await ok(client, "add_drawer", {"wing": "w", "room": "r",
                                                        "content": content})
                pid = _server_pid(log_path)
                os.kill(pid, signal.SIGKILL)  # right after the acknowledgement
                _wait_gone(pid)
            return added["drawer_id"]

    drawer_id = run(write_then_die)

    async def reopen() -> None:
        async with connect(palace) as client:
            got = await ok(client, "get_drawer", {"drawer_id": drawer_id})
            assert got["drawer"]["content"] == content
            assert await drawers(client) == 2
            hits = (await ok(client, "search", {"query": "acknowledged disk"}))["results"]
            assert hits[0]["drawer_id"] == drawer_id
            # The dead server's lock went with it: this one is the writer.
            await ok(client, "add_drawer", {"wing": "w", "room": "r", "content": "after"})

    run(reopen)


def test_two_servers_on_one_palace_both_write_and_follow_each_other(tmp_path):
    palace = tmp_path / "atrium"

    async def two_servers() -> None:
        async with connect(palace) as first:
            await ok(first, "add_drawer", {"wing": "w", "room": "r", "content": "by the first"})
            async with connect(palace, mode="legacy") as second:
                assert "read-only" not in (second.instructions or "")
                await ok(second, "add_drawer", {"wing": "w", "room": "r",
                                                "content": "by the second"})
                assert await drawers(first) == 2  # each reads the other's writes at once
                await ok(first, "add_drawer", {"wing": "w", "room": "r", "content": "later"})
                assert await drawers(second) == 3
                hits = (await ok(second, "search", {"query": "later"}))["results"]
                assert hits[0]["content"] == "later"
        async with connect(palace) as again:
            assert await drawers(again) == 3

    run(two_servers)


def test_a_write_waiting_longer_than_palazzo_lock_wait_is_refused_and_reads_go_on(tmp_path):
    palace = tmp_path / "atrium"
    root = DirectoryRoot(tmp_path)

    async def blocked() -> None:
        async with connect(palace, env={"PALAZZO_LOCK_WAIT": "0.3"}) as client:
            await ok(client, "add_drawer", {"wing": "w", "room": "r", "content": "one"})
            assert root.lock("atrium")  # another process mid-write, for longer than 0.3 s
            try:
                message = await fails(client, "add_drawer", {"wing": "w", "room": "r",
                                                             "content": "refused"})
                assert "more than 0.3 s" in message and "nothing was changed" in message
                assert await drawers(client) == 1  # reads take no lock
            finally:
                root.unlock("atrium")
            await ok(client, "add_drawer", {"wing": "w", "room": "r", "content": "two"})
            assert await drawers(client) == 2

    run(blocked)


@pytest.mark.filterwarnings("ignore:ping is removed")  # the handshake era still has it
def test_a_ping_and_a_tool_list_are_answered_while_a_long_call_runs(tmp_path):
    palace = tmp_path / "atrium"
    # 400 KB of distinct words: the hash embedder takes seconds over its chunks.
    content = " ".join(f"word{i}" for i in range(40_000))

    async def session() -> None:
        async with connect(palace, mode="legacy") as client:
            finished: list[str] = []

            async def add() -> None:
                await ok(client, "add_drawer", {"wing": "w", "room": "r", "content": content})
                finished.append("add_drawer")

            async with anyio.create_task_group() as tg:
                tg.start_soon(add)
                await anyio.wait_all_tasks_blocked()  # the call is sent (or being written)
                await client.send_ping()
                finished.append("ping")
                assert "search" in [t.name for t in (await client.list_tools()).tools]
                finished.append("tools/list")
            assert finished == ["ping", "tools/list", "add_drawer"]
            assert await drawers(client) == 1

    run(session)


def test_a_message_past_the_limit_is_refused_and_the_server_goes_on(tmp_path):
    palace = tmp_path / "atrium"

    async def session() -> None:
        async with connect(palace) as client:
            with pytest.raises(MCPError) as refused:
                await client.call_tool("add_drawer", {"wing": "w", "room": "r",
                                                      "content": "x" * 70_000_000})
            assert refused.value.code == -32600
            assert "message too large" in refused.value.message
            await ok(client, "add_drawer", {"wing": "w", "room": "r", "content": "fits"})
            assert await drawers(client) == 1

    run(session)


HOSTILE = [
    b'{"jsonrpc":"2.0","id":1e400,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":Infinity,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}',
    b"[" * 100_000,
    rb'{"jsonrpc":"2.0","id":"\ud800","method":"ping"}',
    b"\xff\xfe\xfd",
    b'"' + b"z" * 10_000_000 + b'"',
    b"null",
]


def test_hostile_lines_do_not_end_the_server_process(tmp_path):
    """Raw lines no SDK would send, to the real process: each gets an error with id null, the
    process lives, and a request after them is answered."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "py")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "palazzo.hosts.mcp.server", "--palace", str(tmp_path / "atrium"),
         "--embedder", "hash"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env)
    try:
        ping = b'{"jsonrpc":"2.0","id":"alive","method":"ping"}'
        out, _ = proc.communicate(b"\n".join([*HOSTILE, ping]) + b"\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    replies = [json.loads(line) for line in out.splitlines()]
    assert replies[-1] == {"jsonrpc": "2.0", "id": "alive", "result": {}}
    assert len(replies) == len(HOSTILE) + 1
    assert all(r["id"] is None and r["error"]["code"] in (-32700, -32600) for r in replies[:-1])
    assert proc.returncode == 0


def _server_pid(log_path: Path) -> int:
    for line in log_path.read_text().splitlines():
        if line.startswith("palazzo mcp: pid "):
            return int(line.split()[3])
    raise AssertionError(f"no pid line in the server log: {log_path.read_text()!r}")


def _wait_gone(pid: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        try:  # a zombie has closed its files (the lock with them): gone for our purpose
            with open(f"/proc/{pid}/stat") as f:
                if f.read().split(") ")[-1].startswith("Z"):
                    return
        except OSError:
            time.sleep(0.5)  # no /proc here: give the kernel a moment
            return
        time.sleep(0.01)
    raise AssertionError(f"server {pid} survived SIGKILL")
