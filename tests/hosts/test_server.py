"""``palazzo serve``: a real server process, spoken to over real HTTP (``http.client`` and raw
sockets), beside real ``palazzo`` command-line processes writing the same palace."""

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

import palazzo
from palazzo.hosts.server import openapi
from palazzo.ops import REGISTRY

pytestmark = pytest.mark.cpython_only
pytest.importorskip("uvicorn")

ENV = {"PYTHONPATH": str(Path(palazzo.__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Served:
    """``palazzo serve`` on a palace, on a free port, until :meth:`stop`."""

    token: str | None = None  # sent with every request when set

    def __init__(self, palace: Path, *extra: str) -> None:
        self.palace = palace
        self.port = free_port()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "palazzo", "serve", "--palace", str(palace), "--embedder",
             "hash", "--port", str(self.port), *extra], env=ENV, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.get("/health/live")[0] == 200:
                    break
            except OSError:
                pass
            assert self.proc.poll() is None, self.proc.communicate()[1]
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.1)

    def request(self, method: str, path: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, dict, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = dict(headers or {})
        if self.token and "Authorization" not in headers:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            conn.request(method, path, body=body, headers=headers)
            r = conn.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            conn.close()

    def get(self, path: str) -> tuple[int, bytes]:
        status, _, data = self.request("GET", path)
        return status, data

    def op(self, name: str, args: dict | None = None, token: str | None = None
           ) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json",
                   **({"Authorization": f"Bearer {token}"} if token else {})}
        status, _, data = self.request("POST", f"/api/ops/{name}",
                                       json.dumps(args or {}).encode(), headers)
        return status, json.loads(data)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=30)


def cli(palace: Path, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "palazzo", *argv, "--palace", str(palace),
                           "--embedder", "hash"], env=ENV, capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def served(tmp_path):
    server = Served(tmp_path / "atrium")
    yield server
    server.stop()


def test_every_operation_over_http_with_errors_in_one_shape(served):
    status, out = served.op("add_drawer", {"wing": "w", "room": "r", "content": "over HTTP"})
    assert status == 200 and out["created"]
    status, found = served.op("search", {"query": "over HTTP"})
    assert status == 200 and found["results"][0]["drawer_id"] == out["drawer_id"]
    status, err = served.op("add_drawer", {"wing": "w"})
    assert status == 400 and err["error"]["code"] == "invalid_arguments"
    assert err["error"]["field"] == "room"
    status, err = served.op("get_drawer", {"drawer_id": "drawer_nothere"})
    assert status == 404 and err["error"]["code"] == "not_found"
    status, err = served.op("no_such_operation")
    assert status == 404 and err["error"]["code"] == "unknown_operation"
    status, _, body = served.request("POST", "/api/ops/search", b"{not json")
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid_json"
    status, _, body = served.request("POST", "/api/ops/search", b"[1, 2]")
    assert status == 400 and json.loads(body)["error"]["code"] == "invalid_arguments"
    status, _, body = served.request("GET", "/api/ops/search")
    assert status == 405 and json.loads(body)["error"]["code"] == "method_not_allowed"


def test_the_openapi_document_is_the_registrys(served):
    status, data = served.get("/api/openapi.json")
    doc = json.loads(data)
    assert status == 200 and doc["openapi"] == "3.1.0"
    assert doc == openapi.document(REGISTRY)
    assert sorted(doc["paths"]) == sorted(f"/api/ops/{n}" for n in REGISTRY.names())
    for name in REGISTRY.names():
        post = doc["paths"][f"/api/ops/{name}"]["post"]
        assert post["operationId"] == name
        assert post["requestBody"]["content"]["application/json"]["schema"] == \
            REGISTRY.get(name).schema
        assert post["tags"] == ["writes" if REGISTRY.get(name).mutates else "reads"]


def test_the_change_feed_carries_the_servers_and_the_command_lines_writes(served):
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    conn.request("GET", "/api/events")
    stream = conn.getresponse()
    assert stream.status == 200
    assert stream.getheader("Content-Type").startswith("text/event-stream")
    assert stream.readline().startswith(b": palazzo change feed")
    done = cli(served.palace, "add", "--wing", "w", "--room", "r", "from a terminal")
    assert done.returncode == 0, done.stderr
    by_cli = done.stdout.split()[0]
    _, out = served.op("add_drawer", {"wing": "w", "room": "r", "content": "from HTTP"})
    events = []
    while len(events) < 2:
        line = stream.readline().decode()
        if line.startswith("data: "):
            events.append(json.loads(line[6:]))
    conn.close()
    assert [(e["op"], e["ids"]) for e in events] == [("add_drawer", [by_cli]),
                                                     ("add_drawer", [out["drawer_id"]])]
    assert events[1]["seq"] == events[0]["seq"] + 1


def test_health_and_metrics(served):
    served.op("add_drawer", {"wing": "w", "room": "r", "content": "counted"})
    served.op("search", {"query": "counted"})
    assert json.loads(served.get("/health/live")[1]) == {"status": "live"}
    status, data = served.get("/health/ready")
    assert status == 200 and json.loads(data)["status"] == "ready"
    status, data = served.get("/metrics")
    text = data.decode()
    assert status == 200
    assert 'palazzo_requests_total{op="add_drawer",outcome="ok"} 1' in text
    assert 'palazzo_request_seconds_count{op="search"} 1' in text
    assert "palazzo_seq " in text and "palazzo_journal_records " in text


def test_foreign_hosts_and_origins_and_oversized_bodies_are_refused(served):
    status, _, body = served.request("GET", "/health/live", headers={"Host": "evil.example"})
    assert status == 403 and json.loads(body)["error"]["code"] == "forbidden_host"
    status, _, body = served.request("GET", "/health/live",
                                     headers={"Host": f"localhost:{served.port + 1}"})
    assert status == 403  # another port is another origin
    status, _, body = served.request(
        "POST", "/api/ops/add_drawer", json.dumps({"wing": "w", "room": "r",
                                                   "content": "from a page"}).encode(),
        {"Origin": "http://evil.example"})
    assert status == 403 and json.loads(body)["error"]["code"] == "forbidden_origin"
    status, _, _ = served.request("GET", "/health/live",
                                  headers={"Origin": f"http://127.0.0.1:{served.port}"})
    assert status == 200  # its own pages may call it
    # A body that claims a gigabyte is refused before a byte of it is sent.
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as s:
        s.sendall(f"POST /api/ops/add_drawer HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {1 << 30}\r\n\r\n"
                  .encode())
        head = s.recv(4096).decode()
    assert head.startswith("HTTP/1.1 413")
    assert served.op("palace_status")[1]["drawers"] == 0  # nothing of it was written


def test_the_web_app_is_served_from_the_same_origin_and_other_addresses_are_refused(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<!doctype html><title>palazzo</title>")
    server = Served(tmp_path / "atrium", "--site", str(site))
    try:
        status, headers, body = server.request("GET", "/")
        assert status == 200 and b"<title>palazzo</title>" in body
        assert headers["cross-origin-opener-policy"] == "same-origin"
        assert headers["cross-origin-embedder-policy"] == "require-corp"
    finally:
        server.stop()
    done = subprocess.run([sys.executable, "-m", "palazzo", "serve", "--palace",
                           str(tmp_path / "atrium"), "--host", "0.0.0.0", "--embedder", "hash"],
                          env=ENV, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "asks every caller for a token" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_server_killed_mid_writes_loses_no_acknowledged_write(tmp_path):
    server = Served(tmp_path / "atrium")
    acked = []
    for i in range(40):
        status, out = server.op("add_drawer", {"wing": "w", "room": "r",
                                               "content": f"acknowledged {i}"})
        assert status == 200
        acked.append(out["drawer_id"])
    server.stop(signal.SIGKILL)
    again = Served(tmp_path / "atrium")
    try:
        for did in acked:
            assert again.op("get_drawer", {"drawer_id": did})[0] == 200
        assert again.op("palace_status")[1]["drawers"] == 40
    finally:
        again.stop()
    assert os.path.exists(tmp_path / "atrium" / ".lock")


def test_the_server_compacts_aside_and_keeps_every_write(tmp_path):
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.palace import Palace
    from palazzo.persist.palacestore import COMPACT_RECORDS, PalaceStore
    from palazzo.persist.storage import DirectorySpace

    server = Served(tmp_path / "atrium")
    try:
        ids = [server.op("add_drawer", {"wing": "w", "room": "r", "content": f"note {i}"})[1]
               ["drawer_id"] for i in range(COMPACT_RECORDS + 5)]
        deadline = time.monotonic() + 60
        while "palazzo_compactions 1" not in server.get("/metrics")[1].decode():
            assert time.monotonic() < deadline, "the server never compacted"
            time.sleep(0.2)
        assert server.op("palace_status")[1]["drawers"] == len(ids)
    finally:
        server.stop(signal.SIGKILL)
    on_disk = PalaceStore(DirectorySpace(tmp_path / "atrium"),
                          lambda **kw: Palace(embedder=HashEmbedder(), **kw), read_only=True)
    assert on_disk.status.generation >= 2  # (1: the new palace's own snapshot)
    assert on_disk.status.replayed < len(ids)
    again = Served(tmp_path / "atrium")
    try:
        assert again.op("palace_status")[1]["drawers"] == len(ids)
        assert all(again.op("get_drawer", {"drawer_id": i})[0] == 200 for i in ids[-10:])
    finally:
        again.stop()


@pytest.mark.parametrize("mode", ["auto", "legacy"])  # 2026-07-28 requests; the handshake
def test_mcp_over_streamable_http_with_the_official_sdk_client(served, mode):
    pytest.importorskip("mcp")
    import concurrent.futures

    import anyio
    from mcp import Client

    url = f"http://127.0.0.1:{served.port}/mcp"

    async def session() -> None:
        async with Client(url, mode=mode, read_timeout_seconds=60) as client:
            assert client.protocol_version == {"auto": "2026-07-28",
                                               "legacy": "2025-11-25"}[mode]
            tools = (await client.list_tools()).tools
            assert sorted(t.name for t in tools) == REGISTRY.names()
            added = await client.call_tool("add_drawer", {"wing": "w", "room": "r",
                                                          "content": "said over MCP HTTP"})
            assert not added.is_error, added.content[0].text
            did = added.structured_content["drawer_id"]
            done = cli(served.palace, "add", "--wing", "w", "--room", "r", "typed in a shell")
            assert done.returncode == 0, done.stderr
            found = await client.call_tool("search", {"query": "typed shell", "limit": 1})
            assert found.structured_content["results"][0]["content"] == "typed in a shell"
            status = (await client.call_tool("palace_status", {})).structured_content
            assert status["drawers"] == 2
            bad = await client.call_tool("add_drawer", {"wing": "w"})
            assert bad.is_error and "invalid_arguments" in bad.content[0].text
            prompts = (await client.list_prompts()).prompts
            assert [p.name for p in prompts] == ["palace_protocol", "wake_up"]
            assert served.op("get_drawer", {"drawer_id": did})[0] == 200  # the same palace

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, session).result()


def test_mcp_sessions_and_methods_over_http(served):
    def post(message: dict, headers: dict | None = None):
        return served.request("POST", "/mcp", json.dumps(message).encode(),
                              {"Content-Type": "application/json",
                               "Accept": "application/json, text/event-stream",
                               **(headers or {})})

    status, headers, body = post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
    assert status == 200 and json.loads(body)["result"]["protocolVersion"] == "2025-11-25"
    sid = headers["mcp-session-id"]
    status, _, body = post({"jsonrpc": "2.0", "method": "notifications/initialized"},
                           {"Mcp-Session-Id": sid})
    assert status == 202 and body == b""
    status, _, body = post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                           {"Mcp-Session-Id": sid})
    assert status == 200 and len(json.loads(body)["result"]["tools"]) == len(REGISTRY.names())
    status, _, body = post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
    assert "initialize" in json.loads(body)["error"]["message"]  # no session, no envelope
    status, _, _ = post({"jsonrpc": "2.0", "id": 4, "method": "ping"},
                        {"Mcp-Session-Id": "not-a-session"})
    assert status == 404
    assert served.request("GET", "/mcp")[0] == 405
    assert served.request("DELETE", "/mcp", headers={"Mcp-Session-Id": sid})[0] == 200
    status, _, _ = post({"jsonrpc": "2.0", "id": 5, "method": "ping"}, {"Mcp-Session-Id": sid})
    assert status == 404  # ended
    status, _, body = served.request("POST", "/mcp", b"{broken", {"Origin": "http://x.example"})
    assert status == 403  # a page elsewhere cannot reach it


def test_the_command_line_and_an_mcp_server_go_through_a_running_server(served):
    found = json.loads((served.palace / ".server.json").read_text())
    assert found["url"] == f"http://127.0.0.1:{served.port}" and found["pid"] == served.proc.pid
    assert os.stat(served.palace / ".server.json").st_mode & 0o777 == 0o600
    done = cli(served.palace, "add", "--wing", "w", "--room", "r", "through the server")
    assert done.returncode == 0, done.stderr
    status, _ = served.op("get_drawer", {"drawer_id": done.stdout.split()[0]})
    assert status == 200
    _, metrics = served.get("/metrics")
    assert b'palazzo_requests_total{op="add_drawer",outcome="ok"} 1' in metrics  # it came here
    status = cli(served.palace, "status")
    assert status.returncode == 0 and json.loads(status.stdout)["storage"]["served"] is True
    bad = cli(served.palace, "call", "get_drawer", "--args", '{"drawer_id": "drawer_nothere"}')
    assert bad.returncode == 1 and "no drawer" in bad.stderr.lower()
    mcp = subprocess.Popen([sys.executable, "-m", "palazzo", "mcp", "--palace",
                            str(served.palace), "--embedder", "hash"], env=ENV,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    for i, (method, params) in enumerate([
            ("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                            "clientInfo": {"name": "t", "version": "0"}}),
            ("tools/call", {"name": "add_drawer", "arguments": {
                "wing": "w", "room": "r", "content": "an assistant's note"}})]):
        mcp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                                    "params": params}) + "\n")
        mcp.stdin.flush()
        reply = json.loads(mcp.stdout.readline())
        assert "error" not in reply, reply
    mcp.stdin.close()
    assert mcp.wait(timeout=60) == 0
    assert "through the palace server" in mcp.stderr.read()
    _, metrics = served.get("/metrics")
    assert b'palazzo_requests_total{op="add_drawer",outcome="ok"} 2' in metrics
    served.stop()
    assert not (served.palace / ".server.json").exists()  # gone with the server
    alone = cli(served.palace, "add", "--wing", "w", "--room", "r", "the files again")
    assert alone.returncode == 0, alone.stderr


CLAUDE_CODE = Path(__file__).resolve().parents[1] / "palazzo" / "data" / "importers" / \
    "claude-code-2.1.332" / "projects" / "-home-user-project"


def test_import_chats_goes_through_a_running_server(served, tmp_path):
    """``palazzo import-chats`` with a server running sends its batches there (the palace is
    not loaded a second time): the palace ends as an import on the files gives, and a second
    import adds nothing and keeps each conversation in its room."""
    session = CLAUDE_CODE / "7d3c2a10-5b8e-4f61-9c2d-0a1b2c3d4e5f.jsonl"
    done = cli(served.palace, "import-chats", str(session))
    assert done.returncode == 0, done.stderr
    _, metrics = served.get("/metrics")
    assert b'palazzo_requests_total{op="batch",outcome="ok"}' in metrics
    assert b'palazzo_requests_total{op="list_rooms",outcome="ok"}' in metrics
    again = cli(served.palace, "import-chats", str(session))
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["created"].get("import_conversation", 0) == 0
    _, listed = served.op("list_drawers", {"limit": 1000})
    served.stop()
    alone = tmp_path / "alone"
    assert cli(alone, "import-chats", str(session)).returncode == 0
    with_files = json.loads(cli(alone, "call", "list_drawers", "--args",
                                '{"limit": 1000}').stdout)
    assert sorted((d["id"], d["room"]) for d in listed["drawers"]) == \
        sorted((d["id"], d["room"]) for d in with_files["drawers"])


def token(palace: Path, *argv: str) -> str:
    done = cli(palace, "token", "create", *argv)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_tokens_read_write_admin_and_wings(tmp_path):
    palace = tmp_path / "atrium"
    subprocess.run([sys.executable, "-m", "palazzo", "init", "--palace", str(palace)],
                   env=ENV, check=True, capture_output=True)
    for wing, text in (("work", "Clerk over Auth0, for pricing"),
                       ("home", "the garden's tomatoes need staking"),
                       ("home", "Kai's birthday is in June")):
        assert cli(palace, "add", "--wing", wing, "--room", "notes", text).returncode == 0
    reader = token(palace, "--scope", "read")
    writer = token(palace, "--scope", "write")
    admin = token(palace, "--scope", "admin")
    work = token(palace, "--scope", "write", "--wing", "work")
    listed = json.loads(cli(palace, "token", "list").stdout)
    assert [t["scope"] for t in listed] == ["read", "write", "admin", "write"]
    assert all("sha256" not in t for t in listed)
    stored = (palace / "tokens.json").read_text()
    assert reader not in stored and writer not in stored  # only hashes are kept
    assert os.stat(palace / "tokens.json").st_mode & 0o777 == 0o600

    server = Served(palace, "--tokens")
    try:
        status, err = server.op("palace_status")
        assert status == 401 and err["error"]["code"] == "unauthorized"
        assert server.op("palace_status", token="pzt_wrong")[0] == 401
        assert server.get("/metrics")[0] == 401 and server.get("/health/live")[0] == 200
        assert server.op("palace_status", token=reader)[1]["drawers"] == 3
        status, err = server.op("add_drawer", {"wing": "w", "room": "r", "content": "x"},
                                token=reader)
        assert status == 403 and err["error"]["code"] == "forbidden"  # a read token
        assert server.op("add_drawer", {"wing": "w", "room": "r", "content": "by a writer"},
                         token=writer)[0] == 200
        assert server.op("decay_now", {}, token=writer)[0] == 403  # admin only
        assert server.op("decay_now", {}, token=admin)[0] == 200

        # A wing-scoped token: its wing only, everything else refused or not told.
        status, found = server.op("search", {"query": "tomatoes garden pricing Kai"},
                                  token=work)
        assert status == 200 and {h["wing"] for h in found["results"]} == {"work"}
        assert set(found) == {"query", "results"}  # no knowledge-graph context
        status, _ = server.op("search", {"query": "garden", "wing": "home"}, token=work)
        assert status == 403
        wings = server.op("list_wings", {}, token=work)[1]["wings"]
        assert [w["name"] for w in wings] == ["work"]
        home = server.op("search", {"query": "tomatoes", "wing": "home"},
                         token=admin)[1]["results"][0]["drawer_id"]
        status, err = server.op("get_drawer", {"drawer_id": home}, token=work)
        assert status == 404  # not even told it exists
        assert server.op("delete_drawer", {"drawer_id": home}, token=work)[0] == 404
        for name, args in (("export", {}), ("kg_query", {"entity": "kai"}),
                           ("palace_status", {}), ("export_graph", {}),
                           ("list_turns", {"conversation": "c"})):
            status, err = server.op(name, args, token=work)
            assert status == 403 and "scoped to wings work" in err["error"]["message"]
        assert server.op("add_drawer", {"wing": "home", "room": "r", "content": "x"},
                         token=work)[0] == 403
        status, out = server.op("add_drawer", {"wing": "work", "room": "r",
                                               "content": "the work wing's note"}, token=work)
        assert status == 200

        # The change feed: a wing-scoped listener hears its wing's writes only.
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        conn.request("GET", "/api/events", headers={"Authorization": f"Bearer {work}"})
        stream = conn.getresponse()
        assert stream.status == 200
        stream.readline()
        server.op("add_drawer", {"wing": "home", "room": "r", "content": "private"},
                  token=admin)
        _, mine = server.op("add_drawer", {"wing": "work", "room": "r", "content": "shared"},
                            token=work)
        event = None
        while event is None:
            line = stream.readline().decode()
            if line.startswith("data: "):
                event = json.loads(line[6:])
        conn.close()
        assert event["ids"] == [mine["drawer_id"]] and "wings" not in event
        anonymous = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        anonymous.request("GET", "/api/events")
        assert anonymous.getresponse().status == 401
        anonymous.close()
    finally:
        server.stop()
    revoked = listed[0]["id"]
    assert cli(palace, "token", "revoke", revoked).returncode == 0
    server = Served(palace, "--tokens")
    try:
        assert server.op("palace_status", token=reader)[0] == 401  # revoked
        assert server.op("palace_status", token=writer)[0] == 200
    finally:
        server.stop()


def test_the_real_codex_clis_requests_replayed_get_the_answers_it_accepted(tmp_path):
    recorded = [json.loads(line) for line in
                (Path(__file__).parent / "data" / "codex-mcp-http" / "exchanges.jsonl")
                .read_text().splitlines()]
    palace = tmp_path / "atrium"
    subprocess.run([sys.executable, "-m", "palazzo", "init", "--palace", str(palace)],
                   env=ENV, check=True, capture_output=True)
    secret = token(palace, "--scope", "write")
    server = Served(palace, "--tokens")
    sessions: dict = {}
    try:
        for i, exchange in enumerate(recorded):
            q, want = exchange["request"], exchange["response"]
            headers = {k: v for k, v in q["headers"].items()
                       if k.lower() not in ("content-length", "accept-encoding")}
            headers["authorization"] = f"Bearer {secret}"
            old = headers.get("mcp-session-id")
            if old is not None:
                headers["mcp-session-id"] = sessions[old]
            status, got, body = server.request(q["method"], q["path"],
                                               q["body"].encode() or None, headers)
            assert status == want["status"], (q, status, body)
            assert ("mcp-session-id" in got) == want["session"]
            reply = json.loads(body) if body else None
            if want["session"]:  # the recorded session id stands for the one handed out now
                recorded_id = next(e["request"]["headers"]["mcp-session-id"]
                                   for e in recorded[i + 1:]
                                   if "mcp-session-id" in e["request"]["headers"])
                sessions[recorded_id] = got["mcp-session-id"]
            expected = want["reply"]
            if expected is None:
                assert reply is None
                continue
            if "tools" in (expected.get("result") or {}):
                assert [t["name"] for t in reply["result"]["tools"]] == \
                    expected["result"]["tools"]
            elif "content" in (expected.get("result") or {}):
                assert reply["result"]["isError"] is expected["result"]["isError"] is False
                text = reply["result"]["content"][0]["text"]
                assert "staging database moved to port 5433" in text or '"created": true' \
                    in text, text
            else:
                assert reply["result"]["protocolVersion"] == \
                    expected["result"]["protocolVersion"]
    finally:
        server.stop()


def test_the_server_runs_numpy_on_one_blas_thread_and_uvicorn_on_its_c_parts():
    """The server's process gives BLAS one thread (two spin between calls and took a core
    from compactions and clients), and uvicorn finds its C parser and event loop."""
    code = ("from threadpoolctl import threadpool_info\n"
            "from palazzo.hosts.server.app import one_blas_thread\n"
            "before = one_blas_thread()\n"
            "import scipy.linalg.blas\n"  # SciPy's own OpenBLAS is limited too
            "after = [p['num_threads'] for p in threadpool_info() if p['user_api'] == 'blas']\n"
            "assert len(after) == 2, after\n"
            "after = sorted(set(after))\n"
            "import uvicorn\n"
            "async def app(scope, receive, send): pass\n"
            "c = uvicorn.Config(app, lifespan='off')\n"
            "c.load()\n"
            "print(before, after, c.http_protocol_class.__name__,\n"
            "      c.get_loop_factory().__module__)\n")
    out = subprocess.run([sys.executable, "-c", code], env={**ENV, "OPENBLAS_NUM_THREADS": "2"},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "[1]", "HttpToolsProtocol", "uvloop"]


HOLD = """
import sys
from pathlib import Path
from palazzo.embed.hashing import HashEmbedder
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory
with PalaceDirectory(Path(sys.argv[1]), lambda **kw: Palace(embedder=HashEmbedder(), **kw)) as d:
    with d.hold():
        print("held", flush=True)
        sys.stdin.readline()
"""


@pytest.mark.parametrize("copies", ["two", "one"])
def test_a_write_waiting_for_the_lock_holds_up_no_read(tmp_path, copies):
    """Another process holds the writer lock; a write to the server waits for it. With the
    server's two copies (the default) a read meanwhile answers at once and a read after the
    write sees it; with --one-copy the read waits behind the write (what the pair is for)."""
    import threading

    server = Served(tmp_path / "atrium", *(["--one-copy"] if copies == "one" else []))
    holder = None
    try:
        held = f"palazzo_copies {2 if copies == 'two' else 1}"
        deadline = time.monotonic() + 60
        while held not in server.get("/metrics")[1].decode().splitlines():
            assert time.monotonic() < deadline, "the reader never came"
            time.sleep(0.1)
        assert server.op("add_drawer", {"wing": "w", "room": "r",
                                        "content": "the first note about lanterns"})[0] == 200
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(server.palace)], env=ENV,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "held"
        wrote, read = {}, {}
        write = threading.Thread(target=lambda: wrote.update(out=server.op(
            "add_drawer", {"wing": "w", "room": "r", "content": "a second note about lanterns"})))
        write.start()
        time.sleep(1.5)  # the write is waiting for the lock by now
        reading = threading.Thread(target=lambda: read.update(out=server.op(
            "search", {"query": "lanterns"})))
        reading.start()
        reading.join(timeout=10 if copies == "two" else 3)
        assert write.is_alive()  # still waiting for the other process's lock
        if copies == "two":
            status, found = read["out"]
            assert status == 200
            assert [h["content"] for h in found["results"]] == ["the first note about lanterns"]
        else:
            assert reading.is_alive()
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.wait(timeout=30) == 0
        write.join(timeout=60)
        reading.join(timeout=60)
        assert wrote["out"][0] == 200 and read["out"][0] == 200
        status, found = server.op("search", {"query": "lanterns"})
        assert sorted(h["content"] for h in found["results"]) == [
            "a second note about lanterns", "the first note about lanterns"]
    finally:
        if holder is not None and holder.poll() is None:
            holder.kill()
        server.stop()


@pytest.mark.parametrize("copies", ["two", "one"])
def test_a_heavy_read_holds_up_no_other_call(tmp_path, monkeypatch, copies):
    """The server in this process (uvicorn in a thread, real HTTP), its ``communities``
    made to take 4 s whenever it runs in another process than this one: while one runs
    (in a forked child), searches and a write answer at once, with two copies and with
    one; the heavy read's answer is the palace's."""
    import threading

    import uvicorn

    from palazzo.embed.hashing import HashEmbedder
    from palazzo.hosts.server.app import make_app
    from palazzo.hosts.server.pair import Pair
    from palazzo.palace import Palace
    from palazzo.persist.directory import PalaceDirectory

    writer = PalaceDirectory(tmp_path / "atrium",
                             lambda **kw: Palace(embedder=HashEmbedder(), **kw))
    for i in range(12):
        writer.call("add_drawer", {"wing": "w", "room": "r", "content": f"lantern note {i}"})
    inline = writer.call("communities", {})
    directory = Pair(writer, writer.another(reads_only=True)) if copies == "two" else writer
    marks, parent = tmp_path / "marks", os.getpid()
    marks.mkdir()
    for copy in ((directory.writer, directory.reader) if copies == "two" else (writer,)):
        def slow(name, args=None, real=copy.store.call):
            if name == "communities" and os.getpid() != parent:
                (marks / str(os.getpid())).write_text(name)
                time.sleep(4)
            return real(name, args)
        monkeypatch.setattr(copy.store, "call", slow)
    port = free_port()
    app, server = make_app(directory, port=port)
    httpd = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                          log_level="warning", lifespan="off"))
    thread = threading.Thread(target=httpd.run, daemon=True)
    thread.start()
    served = Served.__new__(Served)
    served.port = port
    try:
        deadline = time.monotonic() + 30
        while not httpd.started:
            assert time.monotonic() < deadline, "the server did not come up"
            time.sleep(0.05)
        heavy = {}
        t = threading.Thread(target=lambda: heavy.update(out=served.op("communities")))
        t.start()
        while not list(marks.iterdir()):
            assert time.monotonic() < deadline, "no child ran communities"
            time.sleep(0.02)
        t0 = time.monotonic()
        for _ in range(5):
            status, found = served.op("search", {"query": "lantern"})
            assert status == 200 and found["results"]
        assert served.op("add_drawer", {"wing": "w", "room": "r",
                                        "content": "written meanwhile"})[0] == 200
        assert time.monotonic() - t0 < 2.0 and t.is_alive()
        t.join(timeout=30)
        status, out = heavy["out"]
        assert status == 200
        assert {**out, "seconds": None} == {**inline, "seconds": None}  # (its own timings)
    finally:
        httpd.should_exit = True
        thread.join(timeout=10)
        if copies == "two":
            directory.close()
        writer.close()
