"""Structure that grows linearly (issue 13, item 4): many rooms and many files through the CLI.

:func:`run` writes two generated folders of short English text files and indexes each with
``palazzo index --embedder hash`` into a fresh palace directory:

- **rooms**: a folder of ``rooms`` subfolders, one file in each. The folder importer makes a
  room of each folder (:func:`palazzo.importers.folder.room_of`), so this is one wing of
  ``rooms`` rooms, each made by the ``add_room`` an ``add_drawer`` into a new room implies —
  the path a user's folder takes, not ``add_room`` calls made one by one.
- **flat**: a folder of ``files`` files directly in it (no subfolder), the case that used to
  make a room a file.

For each: the index's wall seconds and peak RSS (a child process, ``os.wait4``), then a cold
``palazzo status`` for the rooms, edges and drawers it holds, and the palace's bytes on disk
(the snapshot file and every file); then the same index again, which finds every file
unchanged (what re-running ``palazzo index`` on a folder costs). The figures come from the
command line only, so they measure the palace whatever its internals.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palazzo.bench.exportgen import WORDS
from palazzo.bench.scale import _bytes, _child, _machine, _palazzo, scratch

EMBEDDER = "hash"  # the point is structure, not embedding time
VOCABULARY = WORDS["en"].split()


def _text(rng: random.Random, index: int) -> str:
    """Return a note of 20 to 400 words (a few hundred to a few thousand characters, under
    the importer's 4,000-character chunk most of the time), numbered so no two are alike."""
    words = [rng.choice(VOCABULARY) for _ in range(rng.randint(20, 400))]
    return f"Note {index}: " + " ".join(words) + ".\n"


def write_rooms(folder: Path, rooms: int, seed: int = 0) -> int:
    """Write ``rooms`` subfolders of ``folder`` (``topic-00000``…), one ``note.md`` in each;
    return the bytes written. The same arguments write the same files."""
    rng = random.Random(seed)
    total = 0
    for i in range(rooms):
        sub = folder / f"topic-{i:05d}"
        sub.mkdir(parents=True)
        total += (sub / "note.md").write_bytes(_text(rng, i).encode())
    return total


def write_flat(folder: Path, files: int, seed: int = 0) -> int:
    """Write ``files`` text files directly in ``folder`` (``note-00000.txt``…); return the
    bytes written. The same arguments write the same files."""
    rng = random.Random(seed + 1)
    folder.mkdir(parents=True)
    return sum((folder / f"note-{i:05d}.txt").write_bytes(_text(rng, i).encode())
               for i in range(files))


def _case(source: Path, palace: Path, wing: str, logs: Path,
          timeout: float | None) -> dict[str, Any]:
    """Index ``source`` into ``palace`` (wing ``wing``), then read its counts and bytes, then
    index it again; return the figures. A first index past ``timeout`` seconds is stopped and
    the rest left out."""
    argv = _palazzo("index", str(source), "--palace", str(palace), "--wing", wing,
                    "--embedder", EMBEDDER)
    first = _child(argv, logs / f"{wing}-index", timeout)
    out: dict[str, Any] = {"command": " ".join(["palazzo", *argv[3:]]),
                           "index": {k: first[k] for k in ("seconds", "peak_rss_mb", "exit",
                                                           "timed_out")}}
    files = _bytes(palace) if palace.is_dir() else {}
    out["palace_bytes"] = {"total": sum(files.values()),
                           "snapshot": sum(v for k, v in files.items()
                                           if k.startswith("snapshot")),
                           "files": files}
    if first["timed_out"] or first["exit"] != 0:
        out["index"]["stderr_tail"] = first["stderr_tail"][-500:]
        return out
    # stdout is the apply's result (the plan's summary goes to stderr)
    out["index"]["drawers_added"] = json.loads(first["stdout"])["created"].get("add_drawer", 0)
    status = _child(_palazzo("status", "--palace", str(palace), "--embedder", EMBEDDER),
                    logs / f"{wing}-status")
    counts = json.loads(status["stdout"])["palace"] if status["exit"] == 0 else {}
    out["counts"] = {k: counts.get(k) for k in ("wings", "rooms", "drawers", "edges")}
    out["cold_status"] = {k: status[k] for k in ("seconds", "peak_rss_mb", "exit")}
    again = _child(argv, logs / f"{wing}-again", timeout)
    out["index_unchanged"] = {k: again[k] for k in ("seconds", "peak_rss_mb", "exit",
                                                     "timed_out")}
    if again["exit"] == 0:
        out["index_unchanged"]["calls"] = json.loads(again["stdout"])["total"]
    return out


def run(rooms: int = 2000, files: int = 5000, *, seed: int = 0, timeout: float | None = None,
        workdir: Path | None = None, keep: bool = False,
        progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Return the figures of indexing a wing of ``rooms`` rooms and a flat folder of
    ``files`` files (see the module's docstring), each into its own fresh palace.

    The folders and palaces go in a temporary folder (under ``workdir`` when given; kept with
    ``keep``). ``timeout`` stops an index that takes longer (its figures say so).
    ``progress`` hears of each of the two cases. Cost: the two indexes, each run twice, plus
    two cold ``status`` runs; at 2,000 and 5,000, about a minute on the 2-core machine of
    docs/benchmarks.md.
    """
    tick = progress or (lambda done, total: None)
    result: dict[str, Any] = {"benchmark": "structure", "rooms": rooms, "files": files,
                              "seed": seed, "embedder": EMBEDDER, "machine": _machine()}
    with scratch("palazzo-structure-", workdir, keep, result) as base:
        t0 = time.perf_counter()
        written = write_rooms(base / "rooms", rooms, seed)
        result["rooms_case"] = {"source": {"folders": rooms, "files": rooms, "bytes": written,
                                           "generate_s": round(time.perf_counter() - t0, 3)},
                                **_case(base / "rooms", base / "palace-rooms", "rooms", base,
                                        timeout)}
        tick(1, 2)
        t0 = time.perf_counter()
        written = write_flat(base / "flat", files, seed)
        result["flat_case"] = {"source": {"folders": 1, "files": files, "bytes": written,
                                          "generate_s": round(time.perf_counter() - t0, 3)},
                               **_case(base / "flat", base / "palace-flat", "flat", base,
                                       timeout)}
        tick(2, 2)
        return result
