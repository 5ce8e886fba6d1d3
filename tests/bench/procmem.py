"""Memory of the Chromium that Playwright drives from this process, as the operating system
counts it: the sum of PSS (proportional set size: each shared page split among the processes
that map it, so the sum is what they hold together) over every Chromium process below this
Python process (the browser, its renderers, GPU and utility processes, the page's workers
inside the renderer). That is the figure a person sees as "Chromium uses 3 GB".

    with Sampler() as s: ...   # s.peak_mb, s.last_mb: sampled every 0.25 s

Linux only (``/proc/<pid>/smaps_rollup``); elsewhere the figures are None. Cost: one read of
``/proc`` per sample (a few ms with ten processes).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the name may hold spaces or ")"
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def chromium_pids(root: int | None = None) -> list[int]:
    """Return the pids of every Chromium process descended from ``root`` (this process)."""
    kids = _children()
    out, todo = [], [root or os.getpid()]
    while todo:
        pid = todo.pop()
        for k in kids.get(pid, ()):
            todo.append(k)
            try:
                name = (PROC / str(k) / "comm").read_text().strip()
            except OSError:
                continue
            if "chrom" in name:
                out.append(k)
    return out


def pss_mb(pids: list[int]) -> float | None:
    """Return the summed PSS of ``pids`` in MB (10^6 bytes); None where /proc has none."""
    total, seen = 0, False
    for pid in pids:
        try:
            text = (PROC / str(pid) / "smaps_rollup").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("Pss:"):
                total += int(line.split()[1]) * 1024
                seen = True
                break
    return round(total / 1e6, 1) if seen else None


def by_process() -> dict[str, float]:
    """Return this process's Chromium's PSS in MB by process type (``browser`` for the one
    without a ``--type``, else its type: renderer, gpu-process, utility, zygote; several of
    one type summed), so a total can be told apart. Cost: :func:`pss_mb` per process plus
    one read of each one's command line."""
    out: dict[str, float] = {}
    for pid in chromium_pids():
        try:
            # (Chromium rewrites its processes' titles: the arguments are then one string)
            argv = (PROC / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").split()
        except OSError:
            continue
        kind = next((a.decode(errors="replace").split("=", 1)[1] for a in argv
                     if a.startswith(b"--type=")), "browser")
        if kind == "utility":  # which service: the network one holds the HTTP cache
            kind = next((a.decode(errors="replace").split("=", 1)[1].rsplit(".", 1)[-1]
                         for a in argv if a.startswith(b"--utility-sub-type=")), kind)
        mb = pss_mb([pid])
        if mb is not None:
            out[kind] = round(out.get(kind, 0.0) + mb, 1)
    return out


def tab_parts(page) -> dict[str, float]:
    """Return :func:`by_process` and the palace worker's WebAssembly memory of ``page`` (a
    Playwright page; Pyodide's heap, which never shrinks: the high-water mark of everything
    the engine held), to tell where a tab's figure goes. A worker that is booting (a reload)
    has no heap to read yet and is left out. Cost: one read of each Chromium process's
    smaps and one call into the worker."""
    out = by_process()
    for w in page.workers:
        if "palace.worker.js" in w.url:
            try:
                heap = w.evaluate("pyodide._module.HEAP8.buffer.byteLength")
            except Exception:  # the worker is booting: no heap to read yet
                continue
            out["palace worker wasm heap (in renderer)"] = round(heap / 1e6, 1)
    return out


def chromium_mb() -> float | None:
    """Return the summed PSS of this process's Chromium now, in MB."""
    return pss_mb(chromium_pids())


class Sampler:
    """Sample :func:`chromium_mb` every ``every`` seconds on a thread while in a ``with``
    block; ``peak_mb`` is the largest sample, ``last_mb`` the last."""

    def __init__(self, every: float = 0.25) -> None:
        self.every = every
        self.peak_mb: float | None = None
        self.last_mb: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.every)

    def sample(self) -> float | None:
        """Take one sample now and return it."""
        mb = chromium_mb()
        if mb is not None:
            self.last_mb = mb
            self.peak_mb = mb if self.peak_mb is None else max(self.peak_mb, mb)
        return mb

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()
