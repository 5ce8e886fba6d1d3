"""The palace server under load (issue 33): many HTTP clients on one ``palazzo serve``.

:func:`run` generates a heavy user's export (the scale benchmark's generator), imports it
with ``palazzo import-chats``, starts ``palazzo serve`` on it and lets ``clients`` threads,
each with its own keep-alive connection, send operations back to back for ``seconds``:
``search`` (a query of two words of the export's vocabulary; a share ``search_share``) or
``add_drawer`` (a new note each time). Halfway through (``kill``) the server is killed with
SIGKILL and started again, as a machine's crash and restart would; the clients keep trying
meanwhile (what fails then is counted as ``unavailable``, not as errors). At the end every
``add_drawer`` the server acknowledged must be in the palace read from its files.

What it reports: latency as a client sees it (HTTP included) by operation, p50/p95/p99,
apart for the calls in the seconds after the restart; errors (any other answer than 200);
the restart's seconds until the server answered again; acknowledged writes lost; how many
compactions the run made (the palace's generation from ``/metrics`` at the start and the end)
and how many calls took over a second. With the
``hash`` embedder a search's query embedding costs next to nothing (the issue's "excluding
query embedding"); ``minilm`` includes it. Operations run one at a time in the server (its
palace is not thread-safe), so with every client sending back to back the latency is mostly
waiting in line: ``think`` seconds between a client's calls set a lighter load (and each
client starts at a random moment within its first ``think`` seconds, as independent agents
would, not all in the same millisecond). ``hold``: every 20 s another holder of the
palace's writer lock keeps it for that many seconds, as another process's import batch
would: the server's writes wait for it, and its reads (two copies in memory,
:mod:`palazzo.hosts.server.pair`) should not; ``one_copy`` runs the server with one copy.
``slow``: one more client sends that read (``communities``: seconds at 20k drawers, and
computed again after every add) back to back, its latency reported apart; the other clients'
reads should not wait for it.
"""

from __future__ import annotations

import http.client
import json
import random
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from palazzo.bench.scale import _machine, _palazzo, generated_palace, scratch
from palazzo.bench.writers import _env, _open, _percentiles
from palazzo.persist.storage import DirectoryRoot

READY_S = 120.0  # how long a (re)start may take before the benchmark gives up


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


HOLD_EVERY_S = 20.0  # with ``hold``: another holder of the writer lock takes it this often


class _Process:
    """``palazzo serve`` on the palace and port, started and waited for."""

    def __init__(self, palace: Path, port: int, embedder: str, log: Path,
                 extra: tuple[str, ...] = ()) -> None:
        self.port = port
        t0 = time.perf_counter()
        with log.open("ab") as err:
            self.proc = subprocess.Popen(
                _palazzo("serve", "--palace", str(palace), "--embedder", embedder, "--port",
                         str(port), *extra), env=_env(), stdout=subprocess.DEVNULL,
                stderr=err)
        while not _live(port):
            if self.proc.poll() is not None or time.perf_counter() - t0 > READY_S:
                raise RuntimeError(f"palazzo serve did not start: see {log}")
            time.sleep(0.05)
        self.start_s = time.perf_counter() - t0


def _holder(palace: Path, hold: float, stop: threading.Event) -> None:
    """Every :data:`HOLD_EVERY_S` seconds take the palace's writer lock for ``hold`` seconds,
    as another process's import batch would (through the files' ``flock``, on a descriptor
    of this process: the server cannot tell it from another process)."""
    root = DirectoryRoot(palace.parent)
    while not stop.wait(HOLD_EVERY_S / 2):
        if root.lock(palace.name, wait=30):
            try:
                stop.wait(hold)
            finally:
                root.unlock(palace.name)
        stop.wait(HOLD_EVERY_S / 2)


def _live(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/health/live")
        ok = conn.getresponse().status == 200
        conn.close()
        return ok
    except OSError:
        return False


def _generation(port: int) -> int | None:
    """Return the palace's generation as the server's metrics say (None when unreadable):
    one more after each compaction."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", "/metrics")
        text = conn.getresponse().read().decode()
        conn.close()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("palazzo_generation "):
            return int(float(line.split()[1]))
    return None


def run(drawers: int, seconds: float, clients: int = 50, embedder: str = "hash",
        search_share: float = 0.8, think: float = 0.0, kill: bool = True, seed: int = 0,
        workdir: Path | None = None, keep: bool = False, one_copy: bool = False,
        hold: float = 0.0, slow: str = "") -> dict[str, Any]:
    """Return the measurements described in the module docstring, as JSON-able data."""
    result: dict[str, Any] = {"benchmark": "serve", "drawers": drawers, "seconds": seconds,
                              "clients": clients, "embedder": embedder,
                              "search_share": search_share, "think_s": think, "kill": kill,
                              "one_copy": one_copy, "hold_s": hold, "slow": slow,
                              "machine": _machine()}
    with scratch("palazzo-serve-", workdir, keep, result) as base:
        export, palace, _ = generated_palace(base, drawers, embedder, seed)
        words = sorted({w for w in export.read_text(encoding="utf-8").split()
                        if w.isalpha() and len(w) > 4})
        port = _free_port()
        extra = ("--one-copy",) if one_copy else ()
        server = _Process(palace, port, embedder, base / "serve.log", extra)
        result["start_s"] = round(server.start_s, 2)
        stop = threading.Event()
        holder = threading.Thread(target=_holder, args=(palace, hold, stop), daemon=True) \
            if hold else None
        if holder is not None:
            holder.start()
        try:
            result.update(_load(server, palace, port, embedder, base, words, seconds,
                                clients, search_share, think, kill, seed, extra, slow))
        finally:
            stop.set()
            if holder is not None:
                holder.join()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=60)
        store = _open(palace)
        ids = set(store.palace.drawers.ids[r] for r in store.palace.drawers.live_rows())
        acked = result.pop("_acked")
        result["end"] = {"drawers": len(ids), "acknowledged_adds": len(acked),
                         "lost": len(acked - ids), "status_problem": store.status.problem}
    return result


def _load(server: _Process, palace: Path, port: int, embedder: str, base: Path,
          words: list[str], seconds: float, clients: int, search_share: float, think: float,
          kill: bool, seed: int, extra: tuple[str, ...] = (), slow: str = ""
          ) -> dict[str, Any]:
    """Run the clients (and the kill and restart, and the slow reader); return what they
    saw."""
    lock = threading.Lock()
    lat: dict[str, list[float]] = {"search": [], "add_drawer": []}
    slow_ms: list[float] = []
    slow_status: dict[str, int] = {}
    after: dict[str, list[float]] = {"search": [], "add_drawer": []}
    errors: list[str] = []
    unavailable = [0]
    acked: set[str] = set()
    down = threading.Event()
    restarted_at = [None]
    t_start = time.perf_counter()
    stop = t_start + seconds

    def client(k: int) -> None:
        rng = random.Random(seed * 1000 + k)
        conn = None
        i = 0
        time.sleep(rng.random() * think)  # independent clients: not all at the same instant
        while time.perf_counter() < stop:
            i += 1
            if rng.random() < search_share:
                op, args = "search", {"query": " ".join(rng.sample(words, 2)), "limit": 10}
            else:
                op, args = "add_drawer", {"wing": "served", "room": f"client-{k}",
                                          "content": f"serve bench client {k} note {i}"}
            body = json.dumps(args).encode()
            t0 = time.perf_counter()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                conn.request("POST", f"/api/ops/{op}", body,
                             {"Content-Type": "application/json"})
                r = conn.getresponse()
                data = r.read()
                status = r.status
            except OSError:
                conn = None
                with lock:
                    unavailable[0] += 1
                time.sleep(0.05)
                continue
            ms = (time.perf_counter() - t0) * 1000
            with lock:
                if status != 200 and down.is_set():
                    unavailable[0] += 1  # answered while it went down: not an error
                elif status != 200:
                    errors.append(f"{op} {status} {data[:200]!r}")
                else:
                    since = restarted_at[0]
                    (after if since is not None and t0 - since < 10 else lat)[op].append(ms)
                    if op == "add_drawer":
                        acked.add(json.loads(data)["drawer_id"])
            if think:
                time.sleep(think)

    def slow_client() -> None:
        """Send the slow read back to back on a connection of its own."""
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
                conn.request("POST", f"/api/ops/{slow}", b"{}",
                             {"Content-Type": "application/json"})
                r = conn.getresponse()
                r.read()
                status = str(r.status)
                conn.close()
            except OSError:
                status = "unavailable"
                time.sleep(0.05)
            with lock:
                slow_status[status] = slow_status.get(status, 0) + 1
                if status == "200":
                    slow_ms.append((time.perf_counter() - t0) * 1000)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    if slow:
        threads.append(threading.Thread(target=slow_client))
    for t in threads:
        t.start()
    restart: dict[str, Any] = {}
    first_generation = _generation(port)
    if kill:
        time.sleep(seconds / 2)
        down.set()
        t0 = time.perf_counter()
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait()
        again = _Process(palace, port, embedder, base / "serve.log", extra)
        restart = {"seconds_until_answering": round(time.perf_counter() - t0, 2)}
        with lock:
            restarted_at[0] = time.perf_counter()
        down.clear()
        server.proc = again.proc
    for t in threads:
        t.join()
    last_generation = _generation(port)
    over_1s = sum(1 for v in (*lat.values(), *after.values()) for ms in v if ms > 1000)
    return {"compactions": None if None in (first_generation, last_generation)
            else last_generation - first_generation,  # (a kill's restart compacts none)
            "calls_over_1s": over_1s,
            **({"slow_read": {"op": slow, "answers": slow_status, **_percentiles(slow_ms)}}
               if slow else {}),
            "search": _percentiles(lat["search"]),
            "add_drawer": _percentiles(lat["add_drawer"]),
            "after_restart_10s": {op: _percentiles(v) for op, v in after.items()},
            "errors": len(errors), "error_examples": errors[:5],
            "unavailable_during_restart": unavailable[0], "restart": restart,
            "calls_per_s": round((sum(len(v) for v in lat.values()) +
                                  sum(len(v) for v in after.values())) /
                                 (time.perf_counter() - t_start), 1),
            "_acked": acked}
