"""``palazzo bench chat-import``: a heavy user's chat export through the command line, timed
as the person meets it, with the embedder they use.

Issue 31's point 9: ``palazzo import-chats`` with MiniLM must make an export searchable by
keywords within minutes and by meaning soon after, in durable steps (a kill loses seconds of
work, not the import), and with far less model work than one vector per 500-character window
of every long answer. This benchmark generates an export shaped like a real heavy user's
(:mod:`palazzo.bench.exportgen`: conversations of a few to hundreds of messages, long
assistant answers, six languages), runs the real command in a child process and reads its
progress lines as they come:

- ``keyword_searchable_s``: the import's batches all written (every drawer found by its words);
- ``embedded_s``: the child's exit, every drawer with its vector;
- ``cpu_s``: the child's user + system CPU seconds (``os.wait4``: the whole import, parsing,
  extraction, indexing and the model; every thread);
- the vectors made (drawer and chunk vectors, from ``palazzo status``), and the model's share
  of the CPU is not split out: the child is the unit a user waits for.

With ``kill_at``, a second run is killed (SIGKILL) that many seconds in, during embedding; the
palace is then opened (``status``) to count the drawers whose vectors survived, against the
last progress line the child printed before it died (``acknowledged``: a step is shown only
after it is durable), and ``reindex`` finishes the work. ``lost_s`` is the time between that
last line and the kill: the work the kill threw away (the step that was running).

Cost: the child's own (minutes with MiniLM: an export of 2,688 messages is about 800 k word
pieces); this process only reads the child's stderr.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from palazzo.bench.exportgen import write_export
from palazzo.bench.scale import _machine, _package_root, scratch

# A progress line: "importing [###...] 120/2688" or "embedding [...] 64/2688, 31 drawers/s …".
LINE = re.compile(r"^(importing|embedding) \[[#.]*\] (\d+)/(\d+)")


@dataclass(slots=True)
class Step:
    """One progress line of the child: when (seconds since start), which stage, how far."""

    at: float
    stage: str
    done: int
    total: int


@dataclass(slots=True)
class ChildRun:
    """What a child import printed and used; :meth:`to_dict` gives the figures."""

    steps: list[Step] = field(default_factory=list)
    seconds: float = 0.0
    cpu_s: float = 0.0
    peak_rss_mb: float = 0.0
    exit: int | None = None
    killed_at: float | None = None
    stderr_tail: str = ""

    def first(self, stage: str, *, done: bool = False) -> float | None:
        """Return when ``stage`` first printed a line (with ``done``: its line at 100 %)."""
        for s in self.steps:
            if s.stage == stage and (not done or s.done >= s.total):
                return s.at
        return None

    def last(self, stage: str) -> Step | None:
        """Return the last line of ``stage``, or None."""
        found = [s for s in self.steps if s.stage == stage]
        return found[-1] if found else None

    def to_dict(self) -> dict[str, Any]:
        embedding = [s for s in self.steps if s.stage == "embedding"]
        gaps = [b.at - a.at for a, b in zip(embedding, embedding[1:], strict=False)]
        return {
            "exit": self.exit, "seconds": round(self.seconds, 2), "cpu_s": round(self.cpu_s, 2),
            "peak_rss_mb": round(self.peak_rss_mb, 1),
            "first_batch_s": _round(self.first("importing")),
            "keyword_searchable_s": _round(self.first("importing", done=True)),
            "embedding_started_s": _round(self.first("embedding")),
            "embedded_s": _round(self.first("embedding", done=True)),
            "embedding_steps": len(embedding),
            "step_gap_s": {"max": _round(max(gaps)) if gaps else None,
                           "mean": _round(sum(gaps) / len(gaps)) if gaps else None},
            "killed_at_s": _round(self.killed_at),
        }


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(_package_root()), *filter(None, [os.environ.get("PYTHONPATH")])]))


def child(argv: list[str], *, kill_at: float | None = None,
          kill_stage: str = "embedding") -> ChildRun:
    """Run ``argv`` (a ``palazzo`` command with ``--progress``) and read its stderr as it
    comes, timestamping each progress line; with ``kill_at``, SIGKILL it that many seconds
    after ``kill_stage`` first printed. Return the lines, wall and CPU seconds and peak RSS.
    Cost: the child's; a reader thread here."""
    run = ChildRun()
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env=_env())
    tail: list[str] = []

    def read() -> None:
        assert proc.stderr is not None
        buf = b""
        while chunk := proc.stderr.read1(65536):
            buf += chunk
            *lines, buf = re.split(rb"[\r\n]", buf)
            now = time.perf_counter() - t0
            for raw in lines:
                text = raw.decode("utf-8", "replace").replace("\033[K", "")
                m = LINE.match(text)
                if m:
                    run.steps.append(Step(now, m[1], int(m[2]), int(m[3])))
                elif text.strip():
                    tail.append(text)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        started = run.first(kill_stage)
        if kill_at is not None and run.killed_at is None and started is not None \
                and time.perf_counter() - t0 >= started + kill_at:
            run.killed_at = time.perf_counter() - t0
            os.kill(proc.pid, signal.SIGKILL)
        time.sleep(0.02)
    run.seconds = time.perf_counter() - t0
    reader.join(timeout=5)
    run.exit = os.waitstatus_to_exitcode(status)
    proc.returncode = run.exit
    run.cpu_s = usage.ru_utime + usage.ru_stime
    run.peak_rss_mb = usage.ru_maxrss / 1024
    run.stderr_tail = "\n".join(tail[-8:])
    return run


def _palazzo(*args: str) -> list[str]:
    return [sys.executable, "-m", "palazzo", *args]


def status(palace: Path, embedder: str) -> dict[str, Any]:
    """Return ``palazzo status``'s palace part for ``palace`` (drawers, embedded, chunk
    vectors …), opened as a user's next command would open it."""
    out = subprocess.run(_palazzo("status", "--palace", str(palace), "--embedder", embedder),
                         capture_output=True, text=True, env=_env(), check=True)
    return json.loads(out.stdout)["palace"]


def run(messages: int, embedder: str = "minilm", *, seed: int = 0,
        kill_at: float | None = None, workdir: Path | None = None,
        keep: bool = False) -> dict[str, Any]:
    """Generate an export of ``messages`` messages, import it with ``palazzo import-chats``
    and the ``embedder``, and (with ``kill_at``) import it again killed ``kill_at`` seconds
    into embedding, then finish with ``reindex``. Return the figures of each run, the
    palace's counts and the export's shape. Cost: one or two full imports (see the module)."""
    result: dict[str, Any] = {"messages": messages, "seed": seed, "embedder": embedder,
                              "machine": _machine()}
    with scratch("chat-import-", workdir, keep, result) as base:
        export = base / "conversations.json"
        result["export"] = write_export(export, messages, seed).to_dict()
        palace = base / "palace"
        full = child(_palazzo("import-chats", str(export), "--palace", str(palace),
                              "--embedder", embedder, "--progress"))
        result["import"] = full.to_dict()
        if full.exit != 0:
            result["import"]["stderr"] = full.stderr_tail
            return result
        counts = status(palace, embedder)
        result["palace"] = {k: counts.get(k) for k in
                            ("drawers", "embedded", "chunk_vectors", "event_sentences")}
        if kill_at is not None:
            result["kill"] = killed(export, base / "killed", embedder, kill_at)
    return result


def killed(export: Path, palace: Path, embedder: str, kill_at: float) -> dict[str, Any]:
    """Import ``export`` into ``palace``, SIGKILL the child ``kill_at`` seconds into its
    embedding, count what survived and finish with ``reindex``; return the figures."""
    cut = child(_palazzo("import-chats", str(export), "--palace", str(palace),
                         "--embedder", embedder, "--progress"), kill_at=kill_at)
    out: dict[str, Any] = {"run": cut.to_dict()}
    last = cut.last("embedding")
    after = status(palace, embedder)
    out["acknowledged_embedded"] = last.done if last is not None else 0
    out["embedded_after_kill"] = after["embedded"]
    out["drawers_after_kill"] = after["drawers"]
    if cut.killed_at is not None and last is not None:
        out["lost_s"] = round(cut.killed_at - last.at, 2)
    resume = child(_palazzo("reindex", "--palace", str(palace), "--embedder", embedder,
                            "--progress"))
    out["resume"] = resume.to_dict()
    final = status(palace, embedder)
    out["embedded_at_end"] = final["embedded"]
    out["drawers_at_end"] = final["drawers"]
    return out


def table(result: dict[str, Any]) -> str:
    """Return the figures as a few lines for the terminal."""
    imp = result["import"]
    lines = [f"{result['messages']} messages, {result['embedder']}: keyword-searchable "
             f"{imp['keyword_searchable_s']} s, embedded {imp['embedded_s']} s, exit "
             f"{imp['exit']} at {imp['seconds']} s, CPU {imp['cpu_s']} s, peak "
             f"{imp['peak_rss_mb']} MB, {imp['embedding_steps']} steps (gap max "
             f"{imp['step_gap_s']['max']} s)"]
    if "palace" in result:
        lines.append(f"palace: {json.dumps(result['palace'])}")
    if "kill" in result:
        k = result["kill"]
        lines.append(f"killed at {k['run']['killed_at_s']} s: acknowledged "
                     f"{k['acknowledged_embedded']}, kept {k['embedded_after_kill']}, lost "
                     f"{k.get('lost_s')} s of work; reindex {k['resume']['seconds']} s → "
                     f"{k['embedded_at_end']}/{k['drawers_at_end']} embedded")
    return "\n".join(lines)
