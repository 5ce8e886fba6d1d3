"""Assistant hooks on a big palace (issue 34): what ``palazzo hook`` costs the assistant.

:func:`run` generates a heavy user's export (the scale benchmark's generator), imports it with
``palazzo import-chats``, and (unless ``served`` is False) starts ``palazzo serve`` on it, as a
person whose hooks should not slow the assistant would. Then it plays a Claude Code session:
a session file in the shape Claude Code 2.1 writes (``user`` lines and one ``assistant`` line
a text block, chained by ``parentUuid``, bookkeeping lines between), grown by two turns
before each ``Stop`` hook, which runs as Claude Code runs it: the ``palazzo`` command (process
start included) with the event's JSON on standard input. The session starts at ``turns``
turns (saved once before timing); ``SessionStart`` (source ``resume``, the default budget of
1,500 tokens) is run as many times.

With ``writer`` an MCP server (``palazzo mcp`` over stdio, as an assistant starts it) writes
a note after another to the same palace for as long as the hooks run, as an assistant would
beside its own hooks; every note it acknowledged must be there at the end, once.

What it reports: the hooks' wall time p50/p95/p99 (the issue's targets: Stop p50 ≤ 300 ms and
p95 ≤ 800 ms, SessionStart p50 ≤ 500 ms), every hook's exit status and standard error (a hook
fails soft, so a failure shows there and nowhere else), and at the end the session's
messages in the palace read from its files against the messages written: none lost, none
twice.
"""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from palazzo.bench.scale import _machine, _palazzo, generated_palace, scratch
from palazzo.bench.served import _free_port, _Process
from palazzo.bench.writers import _env, _open, _percentiles, _Server

SESSION = "5e55a0e1-0000-4000-8000-00000000b0b0"
CWD = "/home/user/palazzo-bench"


def _command() -> list[str]:
    """The ``palazzo`` command as an assistant's settings name it: the installed script
    beside this Python when there is one, else ``python -m palazzo``."""
    script = Path(sys.executable).with_name("palazzo")
    return [str(script)] if script.is_file() else _palazzo()


class Session:
    """A Claude Code session file, grown a turn at a time."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.parent: str | None = None
        self.turns = 0
        self.texts: list[str] = []
        path.write_text("", encoding="utf-8")

    def turn(self) -> None:
        """Append one turn: the user's prompt, the assistant's answer, and the bookkeeping
        lines Claude Code writes around them."""
        k = self.turns
        stamp = f"2026-12-07T10:{k // 60 % 60:02d}:{k % 60:02d}.000Z"
        ask = f"Turn {k}: how should the palace keep note {k} about the lantern plan?"
        say = (f"For note {k}, keep the lantern plan in the attic room and link it to note "
               f"{max(k - 1, 0)}; it mentions the garden wall and the {k}th rehearsal.")
        u, a = str(uuid.uuid4()), str(uuid.uuid4())
        base = {"isSidechain": False, "sessionId": SESSION, "cwd": CWD, "version": "2.1.332",
                "userType": "external", "entrypoint": "cli", "gitBranch": "main"}
        lines = [
            {"type": "queue-operation", "operation": "enqueue", "timestamp": stamp,
             "sessionId": SESSION, "content": ask},
            {**base, "parentUuid": self.parent, "type": "user", "uuid": u,
             "timestamp": stamp, "message": {"role": "user", "content": ask}},
            {**base, "parentUuid": u, "type": "assistant", "uuid": a, "timestamp": stamp,
             "requestId": f"req_{k:06d}",
             "message": {"id": f"msg_{k:06d}", "type": "message", "role": "assistant",
                         "model": "claude-bench", "content": [{"type": "text", "text": say}],
                         "stop_reason": "end_turn"}},
            {"type": "last-prompt", "lastPrompt": ask, "leafUuid": a, "sessionId": SESSION},
        ]
        with self.path.open("a", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line) + "\n")
        self.parent = a
        self.turns += 1
        self.texts += [ask, say]


def _hook(event: str, data: dict[str, Any], palace: Path, embedder: str
          ) -> tuple[float, int, str, str]:
    """Run ``palazzo hook EVENT``; return (wall seconds, exit status, stdout, stderr)."""
    t0 = time.perf_counter()
    done = subprocess.run([*_command(), "hook", event, "--palace", str(palace), "--embedder",
                           embedder], input=json.dumps(data), capture_output=True, text=True,
                          env=_env(), timeout=300)
    return time.perf_counter() - t0, done.returncode, done.stdout, done.stderr


class _Writer:
    """An MCP server writing notes back to back in a thread until :meth:`stop`."""

    def __init__(self, palace: Path, embedder: str) -> None:
        self.server = _Server(palace, embedder)
        self.acked: list[str] = []
        self.refused: list[str] = []
        self.ms: list[float] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        i = 0
        while not self._stop.is_set():
            text = f"hooks bench: a note the assistant's MCP server wrote, number {i}"
            i += 1
            t0 = time.perf_counter()
            ok, got = self.server.tool("add_drawer", {"wing": "mcp", "room": "notes",
                                                      "content": text})
            self.ms.append((time.perf_counter() - t0) * 1000)
            if ok:
                self.acked.append(text)
            else:
                self.refused.append(str(got)[:200])
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=300)
        self.server.close()


def _served_calls(port: int) -> dict[str, int]:
    """Return how many calls of each operation the server at ``port`` answered ok, read from
    its ``/metrics``."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
    finally:
        conn.close()
    found = re.findall(r'^palazzo_requests_total\{op="([^"]+)",outcome="ok"\} (\d+)', text,
                       re.M)
    return {op: int(n) for op, n in found}


def run(drawers: int = 20_000, rounds: int = 30, turns: int = 48, served: bool = True,
        embedder: str = "hash", seed: int = 0, workdir: Path | None = None,
        keep: bool = False, writer: bool = False) -> dict[str, Any]:
    """Return the measurements described in the module docstring, as JSON-able data."""
    result: dict[str, Any] = {"benchmark": "hooks", "drawers": drawers, "rounds": rounds,
                              "turns_at_start": turns, "served": served, "writer": writer,
                              "embedder": embedder, "command": _command()[0],
                              "machine": _machine()}
    with scratch("palazzo-hooks-", workdir, keep, result) as base:
        export, palace, imp = generated_palace(base, drawers, embedder, seed)
        server = None
        if served:
            server = _Process(palace, _free_port(), embedder, base / "serve.log")
            result["server_start_s"] = round(server.start_s, 2)
        session = Session(base / f"{SESSION}.jsonl")
        stop_ms: list[float] = []
        start_ms: list[float] = []
        failures: list[str] = []

        def note(event: str, seconds: float, code: int, err: str, into: list[float]) -> None:
            into.append(seconds * 1000)
            if code != 0 or err.strip():
                failures.append(f"{event} exit {code}: {err.strip()[:300]}")

        mcp = None
        try:
            for _ in range(turns):
                session.turn()
            stop = {"session_id": SESSION, "transcript_path": str(session.path), "cwd": CWD,
                    "hook_event_name": "Stop", "stop_hook_active": False}
            first = _hook("Stop", stop, palace, embedder)
            result["first_stop_ms"] = round(first[0] * 1000, 1)
            if first[1] != 0 or first[3].strip():
                failures.append(f"first Stop exit {first[1]}: {first[3].strip()[:300]}")
            mcp = _Writer(palace, embedder) if writer else None
            for _ in range(rounds):
                session.turn()
                session.turn()
                seconds, code, _out, err = _hook("Stop", stop, palace, embedder)
                note("Stop", seconds, code, err, stop_ms)
                wake = {"session_id": SESSION, "cwd": CWD, "source": "resume",
                        "hook_event_name": "SessionStart"}
                seconds, code, out, err = _hook("SessionStart", wake, palace, embedder)
                note("SessionStart", seconds, code, err, start_ms)
                if code == 0 and "additionalContext" not in out:
                    failures.append("SessionStart gave no additionalContext")
            if server is not None:  # (that the hooks went through it, and none opened the files)
                calls = _served_calls(server.port)
                result["server_calls"] = calls
                if calls.get("wake_up", 0) < rounds or calls.get("batch", 0) < rounds:
                    failures.append(f"the hooks did not all go through the server: {calls}")
        finally:
            if mcp is not None:
                mcp.stop()
            if server is not None:
                server.proc.send_signal(signal.SIGTERM)
                server.proc.wait(timeout=60)
        store = _open(palace)
        drawers_ = store.palace.drawers
        held = [drawers_.content[r] for r in drawers_.live_rows()]
        written, kept = session.texts, set(held)
        result.update({
            "stop": _percentiles(stop_ms), "session_start": _percentiles(start_ms),
            "failures": len(failures), "failure_examples": failures[:5],
            "end": {"messages_written": len(written),
                    "lost": sum(1 for t in written if t not in kept),
                    "twice": sum(1 for t in written if held.count(t) > 1),
                    "status_problem": store.status.problem}})
        if mcp is not None:
            result["mcp_writer"] = {
                "writes": _percentiles(mcp.ms), "acknowledged": len(mcp.acked),
                "refused": len(mcp.refused), "refusals": mcp.refused[:3],
                "lost": sum(1 for t in mcp.acked if t not in kept),
                "twice": sum(1 for t in mcp.acked if held.count(t) > 1)}
    return result
