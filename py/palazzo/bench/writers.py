"""Many writers on one palace (issue 33): real processes writing one palace directory at once.

:func:`run` generates a heavy user's export (:mod:`palazzo.bench.exportgen`, the scale
benchmark's generator), imports it into a palace with ``palazzo import-chats``, and then for
``seconds`` lets four kinds of real processes write it together, as a user's machine does:

- two ``palazzo mcp`` servers (MCP over stdio, JSON-RPC lines, as an assistant starts them),
  each driven by a thread of this process: ``add_drawer`` twice, then a read, over and over;
- the command line: ``palazzo add`` again and again, each a new process;
- an importer: ``palazzo import-chats`` of a small new export again and again.

What it measures: every write's latency as its caller sees it (the servers' round trip; the
command line's process, Python's start and the palace's open included), p50/p95/p99; writes
refused;
reads: each server read asks for the drawer whose write was acknowledged last, by any
process, before the read was sent (``get_drawer``), so a read that misses it breaks
read-your-writes across processes. At the end the palace is opened again from its files and
every acknowledged drawer must be there once: lost and duplicated are counted, not assumed.

Then, on the same palace, what following costs (:func:`alternate`): two processes take
turns, each write coming right after the other's, so each must first replay the other's
record (:meth:`palazzo.persist.palacestore.PalaceStore.follow`); timed inside the process
(the call alone), against the same process writing twice in a row (nothing to follow).

Cost: the import of ``drawers`` messages, then ``seconds`` of four writers on two cores, then
``turns`` writes of each of two processes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench import exportgen
from palazzo.bench.scale import (
    _child,
    _machine,
    _palazzo,
    bench_env,
    generated_palace,
    scratch,
)
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import DirectorySpace

IMPORT_MESSAGES = 200  # messages of each small export the importer brings in
TURNS = 200  # writes of each process when two take turns
# A process that writes when told: one JSON line in ("write" or "write again"), one out.
TURN_SCRIPT = """
import json, sys, time
from palazzo.embed import registry
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory
embedder = registry.choose(sys.argv[2]).embedder
name = sys.argv[3]
with PalaceDirectory(sys.argv[1], lambda **kw: Palace(embedder=embedder, **kw)) as d:
    d.call("palace_status")
    print(json.dumps({"ready": True}), flush=True)
    for i, line in enumerate(sys.stdin):
        t0 = time.perf_counter()
        d.call("add_drawer", {"wing": "turns", "room": name,
                              "content": f"writers bench {name} turn {i}"})
        ms = (time.perf_counter() - t0) * 1000
        print(json.dumps({"ms": ms, "followed": [c["op"] for c in d.store.changes]}),
              flush=True)
        d.store.changes.clear()
"""


def _env() -> dict[str, str]:
    return bench_env()


def _percentiles(ms: list[float]) -> dict[str, Any]:
    if not ms:
        return {"count": 0}
    a = np.asarray(ms)
    return {"count": len(ms), **{f"p{q}_ms": round(float(np.percentile(a, q)), 2)
                                 for q in (50, 95, 99)}, "max_ms": round(float(a.max()), 2)}


class _Acks:
    """Every acknowledged write, in the order this process learnt of it: (time, process,
    drawer id or None for an import's batch)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.items: list[tuple[float, str, str | None]] = []

    def add(self, who: str, drawer: str | None) -> None:
        with self.lock:
            self.items.append((time.perf_counter(), who, drawer))

    def latest(self) -> tuple[float, str, str | None] | None:
        with self.lock:
            return next((a for a in reversed(self.items) if a[2] is not None), None)


class _Server:
    """``palazzo mcp`` on the palace, spoken to one JSON-RPC line at a time."""

    def __init__(self, palace: Path, embedder: str) -> None:
        self.proc = subprocess.Popen(
            _palazzo("mcp", "--palace", str(palace), "--embedder", embedder),
            env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, text=True, encoding="utf-8")
        self.next_id = 0
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id,
                                          "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def tool(self, name: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any] | str]:
        out = self.request("tools/call", {"name": name, "arguments": args})
        text = out["content"][0]["text"]
        return (False, text) if out["isError"] else (True, json.loads(text))

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=120)


def run(drawers: int, seconds: float, embedder: str = "hash", seed: int = 0,
        workdir: Path | None = None, keep: bool = False, turns: int = TURNS
        ) -> dict[str, Any]:
    """Return the measurements described in the module docstring, as JSON-able data."""
    result: dict[str, Any] = {"benchmark": "writers", "drawers": drawers, "seconds": seconds,
                              "embedder": embedder, "machine": _machine()}
    with scratch("palazzo-writers-", workdir, keep, result) as base:
        export, palace, imp = generated_palace(base, drawers, embedder, seed)
        start = _count(palace)
        result["start"] = {"drawers": start, "import_s": imp["seconds"]}
        result.update(_write_together(base, palace, seconds, embedder, seed))
        notes = result.pop("_notes")
        end = _open(palace)
        s = end.palace.drawers
        contents = [s.content[r] for r in s.live_rows()]
        mine = [c for c in contents if c.startswith("writers bench ")]
        acked = result["acknowledged"]
        expected = start + acked["server"] + acked["cli"] + acked["imported"]
        result["end"] = {
            "drawers": len(contents), "expected": expected,
            "lost": len(notes - set(mine)),  # acknowledged notes not in the palace
            "duplicated": len(mine) - len(set(mine)),  # a note stored twice
            "unexplained": len(contents) - expected,  # drawers neither more nor fewer
            "status_problem": end.status.problem}
        del end
        result["alternate"] = alternate(palace, embedder, turns)
    return result


def _count(palace: Path) -> int:
    return _open(palace).palace.counts()["drawers"]


def _open(palace: Path) -> PalaceStore:
    return PalaceStore(DirectorySpace(palace), lambda **kw: Palace(embedder=None, **kw),
                       read_only=True)


def _write_together(base: Path, palace: Path, seconds: float, embedder: str,
                    seed: int) -> dict[str, Any]:
    """Run the four writers for ``seconds``; return what each saw."""
    acks = _Acks()
    notes: set[str] = set()
    notes_lock = threading.Lock()
    out: dict[str, Any] = {}
    servers = [_Server(palace, embedder) for _ in range(2)]
    stop = time.perf_counter() + seconds  # each writer goes round at least once

    def server_loop(k: int, server: _Server) -> None:
        writes, refused, reads, missed = [], [], 0, []
        i = 0
        while i == 0 or time.perf_counter() < stop:
            text = f"writers bench server {k} note {i}: the kettle, the violin, week {i % 52}"
            i += 1
            t0 = time.perf_counter()
            ok, got = server.tool("add_drawer", {"wing": "bench", "room": f"server-{k}",
                                                 "content": text})
            t1 = time.perf_counter()
            if not ok:
                refused.append(str(got)[:200])
                continue
            acks.add(f"server {k}", got["drawer_id"])
            with notes_lock:
                notes.add(text)
            writes.append((t1 - t0) * 1000)
            if i % 2:
                continue  # every other write comes straight after the last one
            latest = acks.latest()  # acknowledged before this read is sent
            ok, got = server.tool("get_drawer", {"drawer_id": latest[2]})
            reads += 1
            if not ok:
                missed.append({"drawer": latest[2], "by": latest[1], "said": str(got)[:200]})
        out[f"server_{k}"] = {"writes": _percentiles(writes),
                              "refused": len(refused), "refusals": refused[:3],
                              "reads": reads, "reads_missing_a_write": len(missed),
                              "misses": missed[:3]}

    def cli_loop() -> None:
        times, refused, i = [], [], 0
        while i == 0 or time.perf_counter() < stop:
            text = f"writers bench command line note {i}: the garden, the bakery, day {i}"
            i += 1
            done = _child(_palazzo("add", "--palace", str(palace), "--embedder", embedder,
                                   "--wing", "bench", "--room", "cli", text),
                          base / f"cli-{i}")
            if done["exit"] != 0:
                refused.append(done["stderr_tail"][-200:])
                continue
            acks.add("cli", done["stdout"].split()[0])
            with notes_lock:
                notes.add(text)
            times.append(done["seconds"] * 1000)
        out["cli"] = {"writes": _percentiles(times), "refused": len(refused),
                      "refusals": refused[:3]}

    def import_loop() -> None:
        runs, refused, added, i = [], [], 0, 0
        while i == 0 or time.perf_counter() < stop:
            i += 1
            export = base / f"small-{i}.json"
            exportgen.write_export(export, IMPORT_MESSAGES, seed=seed + 1000 + i)
            done = _child(_palazzo("import-chats", str(export), "--palace", str(palace),
                                   "--embedder", embedder, "--name", f"import {i}"),
                          base / f"import-{i}")
            if done["exit"] != 0:
                refused.append(done["stderr_tail"][-200:])
                continue
            added += json.loads(done["stdout"])["created"].get("import_conversation", 0)
            acks.add("importer", None)
            runs.append(done["seconds"] * 1000)
        out["importer"] = {"imports": _percentiles(runs), "drawers_added": added,
                           "refused": len(refused), "refusals": refused[:3]}

    threads = [threading.Thread(target=server_loop, args=(k, s)) for k, s in
               enumerate(servers)]
    threads += [threading.Thread(target=cli_loop), threading.Thread(target=import_loop)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    for server in servers:
        server.close()
    out["acknowledged"] = {
        "server": sum(out[f"server_{k}"]["writes"]["count"] for k in range(2)),
        "cli": out["cli"]["writes"]["count"], "imported": out["importer"]["drawers_added"],
        "notes": len(notes)}
    out["refused"] = sum(out[k]["refused"] for k in ("server_0", "server_1", "cli",
                                                     "importer"))
    out["reads_missing_a_write"] = sum(out[f"server_{k}"]["reads_missing_a_write"]
                                       for k in range(2))
    out["_notes"] = notes
    return out


def alternate(palace: Path, embedder: str, turns: int = TURNS) -> dict[str, Any]:
    """Return what a write costs right after another process's write (two processes taking
    turns: each write follows exactly one record of the other's) and right after the same
    process's own (one process writing twice: nothing to follow), p50/p95, timed inside the
    writing process. Cost: 4 × ``turns`` writes."""
    procs = [subprocess.Popen([sys.executable, "-c", TURN_SCRIPT, str(palace), embedder, who],
                              env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, text=True) for who in ("a", "b")]
    for p in procs:
        json.loads(p.stdout.readline())  # opened

    def write(p: subprocess.Popen) -> dict[str, Any]:
        p.stdin.write("write\n")
        p.stdin.flush()
        return json.loads(p.stdout.readline())

    after_other, after_own, followed = [], [], 0
    for _ in range(turns):
        for p in procs:
            got = write(p)  # the other wrote last
            after_other.append(got["ms"])
            followed += got["followed"].count("add_drawer") - 1  # minus its own
    for _ in range(turns):
        write(procs[0])
        after_own.append(write(procs[0])["ms"])
    for p in procs:
        p.stdin.close()
        p.wait(timeout=120)
    return {"after_another_process": _percentiles(after_other[2:]),
            "after_its_own": _percentiles(after_own),
            "records_followed": followed}
