"""Real-sized memory (issue 13): a generated heavy user's history through the public CLI.

:func:`run` writes a ChatGPT export of a given number of messages
(:mod:`palazzo.bench.exportgen`), imports it with ``palazzo import-chats`` into a fresh palace
directory, and measures what a user waits for: the import, the palace's bytes on disk, a cold
open, a cold ``palazzo status`` and ``palazzo search`` (each a fresh process, Python's start
included), and warm searches in BM25, vector and hybrid mode in one process. Every step goes
through the command line or :class:`~palazzo.persist.directory.PalaceDirectory`, never the
snapshot's internals, so the same benchmark measures the palace before and after its on-disk
format changes.

Peak memory of a child process is its own ``ru_maxrss`` (``os.wait4``: per child, not the
maximum over all children that ``RUSAGE_CHILDREN`` gives).
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench import exportgen
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory

MODES = ("bm25", "vector", "hybrid")
# The search operation's arguments a warm-search row times: each mode as a user runs it (a
# hybrid query is enriched by default), and hybrid without enrichment to show its cost.
SEARCHES: dict[str, dict[str, Any]] = {**{m: {"mode": m} for m in MODES},
                                       "hybrid_unenriched": {"mode": "hybrid", "enrich": 1}}
# The queries again as questions that name an event, so the event list's cost (a clause to
# embed, a matvec over the event sentences: retrieval.events) is timed too.
EVENT_QUESTION = "What did I note when the {} happened?"
# A cold open, alone: the imports a command needs, then the palace directory, then nothing.
OPEN_SCRIPT = """
import json, sys, time
t0 = time.perf_counter()
from palazzo.embed import registry
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory
t1 = time.perf_counter()
embedder = registry.choose(sys.argv[2]).embedder
with PalaceDirectory(sys.argv[1], lambda **kw: Palace(embedder=embedder, **kw)) as d:
    t2 = time.perf_counter()
print(json.dumps({"import_s": t1 - t0, "open_s": t2 - t1}))
"""


def _package_root() -> Path:
    """Return the folder holding the ``palazzo`` package this process runs (``py/``), which
    the child processes run too."""
    return Path(__file__).resolve().parents[2]


def generated_palace(base: Path, drawers: int, embedder: str, seed: int = 0
                     ) -> tuple[Path, Path, dict[str, Any]]:
    """Write the generator's export of ``drawers`` messages into ``base`` and import it with
    ``palazzo import-chats`` into ``base``/palace; return (the export, the palace, the
    import's :func:`_child` record). Raises RuntimeError when the import fails. What the
    serve, writers and hooks benchmarks start from."""
    from palazzo.bench import exportgen

    export = base / "conversations.json"
    exportgen.write_export(export, drawers, seed=seed)
    palace = base / "palace"
    imp = _child(_palazzo("import-chats", str(export), "--palace", str(palace),
                          "--embedder", embedder), base / "import")
    if imp["exit"] != 0:
        raise RuntimeError(f"the import failed: {imp['stderr_tail'][-500:]}")
    return export, palace, imp


def bench_env() -> dict[str, str]:
    """Return the environment a benchmark's child processes run in: this one, with this
    package first on ``PYTHONPATH`` and without ``$PALAZZO_URL``/``$PALAZZO_TOKEN`` (a
    server those name would take the generated palace's writes into a person's own)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PALAZZO_URL", "PALAZZO_TOKEN")}
    env["PYTHONPATH"] = os.pathsep.join(
        [str(_package_root()), *filter(None, [os.environ.get("PYTHONPATH")])])
    return env


def _child(argv: Sequence[str], log: Path, timeout: float | None = None) -> dict[str, Any]:
    """Run ``argv`` with this package on ``PYTHONPATH``, stdout and stderr to ``log``.out and
    ``log``.err; return its wall seconds, peak RSS (MB), exit code, whether it timed out,
    and its stdout. Cost: the child's own; this process only waits."""
    env = bench_env()
    out, err = log.with_suffix(".out"), log.with_suffix(".err")
    with out.open("wb") as fo, err.open("wb") as fe:
        t0 = time.perf_counter()
        proc = subprocess.Popen(list(argv), stdout=fo, stderr=fe, env=env)
        timed_out = False
        deadline = None if timeout is None else t0 + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG if deadline else 0)
            if pid:
                break
            if time.perf_counter() > deadline:
                proc.kill()
                timed_out = True
                pid, status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05)
        seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return {"seconds": round(seconds, 3), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "exit": proc.returncode, "timed_out": timed_out,
            "stdout": out.read_text(encoding="utf-8", errors="replace"),
            "stderr_tail": err.read_text(encoding="utf-8", errors="replace")[-2000:]}


def _palazzo(*args: str) -> list[str]:
    return [sys.executable, "-m", "palazzo", *args]


@contextmanager
def scratch(prefix: str, workdir: Path | None, keep: bool,
            result: dict[str, Any]) -> Iterator[Path]:
    """Yield a new temporary folder (under ``workdir`` when given, made if missing) for a
    benchmark's exports and palaces; afterwards it is deleted, or with ``keep`` left in place
    and named in ``result["kept"]``. Cost: one folder; deleting what was written there."""
    if workdir is not None:
        Path(workdir).mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=workdir))
    try:
        yield base
    finally:
        if keep:
            result["kept"] = str(base)
        else:
            shutil.rmtree(base, ignore_errors=True)


def _bytes(folder: Path) -> dict[str, int]:
    """Return the size of each file in ``folder`` (the palace's snapshot, journal, keys)."""
    return {p.name: p.stat().st_size for p in sorted(folder.iterdir()) if p.is_file()}


def _percentiles(ms: list[float]) -> dict[str, float]:
    a = np.asarray(ms)
    return {"p50_ms": round(float(np.percentile(a, 50)), 3),
            "p95_ms": round(float(np.percentile(a, 95)), 3),
            "mean_ms": round(float(a.mean()), 3), "queries": len(ms)}


def _warm(palace: Path, embedder: Any, queries: list[str],
          limit: int) -> dict[str, Any]:
    """Open ``palace`` in this process and time ``search`` in each of :data:`SEARCHES` over
    ``queries``, and the default search over them as :data:`EVENT_QUESTION`s, after one
    warm-up query a row; return the open seconds, the RSS it added and p50/p95/mean
    milliseconds a row."""
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    with PalaceDirectory(palace, lambda **kw: Palace(embedder=embedder, **kw)) as d:
        opened = time.perf_counter() - t0
        out: dict[str, Any] = {"open_s": round(opened, 3)}
        events = [EVENT_QUESTION.format(q) for q in queries]
        runs = [*((mode, how, queries) for mode, how in SEARCHES.items()),
                ("hybrid_event_questions", {"mode": "hybrid"}, events)]
        for mode, how, asked in runs:
            d.call("search", {"query": asked[0], "limit": limit, **how})
            ms = []
            hits = 0
            for q in asked:
                t = time.perf_counter()
                found = d.call("search", {"query": q, "limit": limit, **how})["results"]
                ms.append((time.perf_counter() - t) * 1000)
                hits += bool(found)
            out[mode] = {**_percentiles(ms), "queries_with_hits": hits}
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out["peak_rss_growth_mb"] = round((rss1 - rss0) / 1024, 1)
    return out


def _progress_done(stderr: str) -> str | None:
    """Return the last ``done/total`` the import's progress bar printed, if any."""
    found = re.findall(r"(\d+)/(\d+)", stderr.rsplit("\r", 1)[-1] if "\r" in stderr else "")
    return f"{found[-1][0]}/{found[-1][1]}" if found else None


def _machine() -> dict[str, Any]:
    """Return what the figures depend on: CPUs, Python, NumPy, platform and the commit."""
    root = _package_root().parent

    def git(*args: str) -> str | None:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                                  text=True, timeout=10, check=True).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return None

    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "py")
    modified = None if dirty is None else [line.split(maxsplit=1)[-1]
                                           for line in dirty.splitlines()]
    return {"cpu_count": os.cpu_count(), "python": platform.python_version(),
            "implementation": platform.python_implementation(), "numpy": np.__version__,
            "platform": platform.platform(), "commit": git("rev-parse", "HEAD"),
            "modified_since_commit": modified,
            "source": str(_package_root())}


def run(messages: int, embedder_name: str, embedder: Any, *, seed: int = 0,
        queries: int = 50, limit: int = 10, import_timeout: float | None = None,
        workdir: Path | None = None, keep: bool = False,
        progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Return the scale figures for a generated export of ``messages`` messages.

    The export (``seed``) is written in a temporary folder (under ``workdir`` when given;
    kept there with ``keep``) and imported with ``palazzo import-chats --embedder
    embedder_name``; then a cold open, a cold ``status`` and a cold ``search`` run as fresh
    processes, and ``queries`` warm searches a mode run here with ``embedder`` (the same
    embedder, made by the host). An import that takes more than ``import_timeout`` seconds is
    stopped: the result then says how far it got and the later steps are left out.
    ``progress`` hears of each of the six steps. Cost: the import's (at 20,000 messages
    today, minutes) plus three cold boots and one warm boot of the palace.
    """
    tick = progress or (lambda done, total: None)
    steps = 6
    result: dict[str, Any] = {"benchmark": "scale", "messages": messages, "seed": seed,
                              "embedder": embedder_name, "machine": _machine()}
    with scratch("palazzo-scale-", workdir, keep, result) as base:
        export, palace = base / "conversations.json", base / "palace"
        t0 = time.perf_counter()
        conversations, stats = exportgen.make_export(messages, seed)
        export.write_text(json.dumps(conversations, ensure_ascii=False), encoding="utf-8")
        asked = exportgen.queries(conversations, queries, seed)
        del conversations
        result["export"] = {**stats.to_dict(), "bytes": export.stat().st_size,
                            "generate_s": round(time.perf_counter() - t0, 3)}
        tick(1, steps)

        imp = _child(_palazzo("import-chats", str(export), "--palace", str(palace),
                              "--embedder", embedder_name, "--progress"),
                     base / "import", import_timeout)
        result["import"] = {k: imp[k] for k in ("seconds", "peak_rss_mb", "exit", "timed_out")}
        result["import"]["ms_per_message"] = round(imp["seconds"] * 1000 / messages, 2)
        files = _bytes(palace) if palace.is_dir() else {}
        result["palace_bytes"] = {"total": sum(files.values()), "files": files}
        tick(2, steps)
        if imp["timed_out"] or imp["exit"] != 0:
            result["import"]["progress"] = _progress_done(imp["stderr_tail"])
            result["import"]["stderr_tail"] = imp["stderr_tail"][-500:]
            return result

        opened = _child([sys.executable, "-c", OPEN_SCRIPT, str(palace), embedder_name],
                        base / "open")
        inner = json.loads(opened["stdout"] or "{}") if opened["exit"] == 0 else {}
        result["cold_open"] = {"seconds": opened["seconds"], "peak_rss_mb":
                               opened["peak_rss_mb"], "exit": opened["exit"],
                               **{k: round(v, 3) for k, v in inner.items()}}
        tick(3, steps)

        status = _child(_palazzo("status", "--palace", str(palace), "--embedder",
                                 embedder_name), base / "status")
        status_json = json.loads(status["stdout"])["palace"] if status["exit"] == 0 else {}
        counts = status_json
        result["cold_status"] = {k: status[k] for k in ("seconds", "peak_rss_mb", "exit")}
        result["counts"] = {k: counts.get(k) for k in ("wings", "rooms", "drawers", "edges",
                                                       "embedded")}
        # The target: a snapshot within 1.5x of the raw text and the float32 vectors,
        # counted two ways: the drawers' own vectors only, and every vector the palace keeps
        # (the chunk vectors of long drawers too).
        dim = (counts.get("embedder") or {}).get("dim") or 0
        raw = stats.text_bytes + (counts.get("embedded") or 0) * dim * 4
        every = raw + (status_json.get("chunk_vectors") or 0) * dim * 4
        total = result["palace_bytes"]["total"]
        result["palace_bytes"].update(
            text_and_vectors=raw, ratio=round(total / max(raw, 1), 2),
            chunk_vectors=status_json.get("chunk_vectors"),
            text_and_all_vectors=every, ratio_all_vectors=round(total / max(every, 1), 2))
        tick(4, steps)

        query = asked[0]
        search = _child(_palazzo("search", query, "--palace", str(palace), "--embedder",
                                 embedder_name, "--json", "--limit", str(limit)),
                        base / "search")
        found = json.loads(search["stdout"]) if search["exit"] == 0 else []
        result["cold_search"] = {"query": query, "hits": len(found), "command": shlex.join(
            ["palazzo", "search", query, "--json"]),
            **{k: search[k] for k in ("seconds", "peak_rss_mb", "exit")}}
        tick(5, steps)

        result["warm_search"] = _warm(palace, embedder, asked, limit)
        result["bench_peak_rss_mb"] = round(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
        tick(6, steps)
        return result
