"""What exact replay costs on a real-sized palace: record size, boot and rollback time.

A palace of ``size`` drawers (the throughput benchmark's generator: Zipf words, precomputed
unit vectors, 8 wings × 64 rooms) is written as a snapshot in a directory; then ``records``
drawers are added through the journal (each record carries its vector), and the benchmark
measures the bytes a record takes, the time of a journaled add, a boot (snapshot + replay of
those records, which embeds nothing), an atomic operation's refusal (no reload) and what a
non-atomic operation failing part-way costs (a reload from disk: a boot).
"""

from __future__ import annotations

import contextlib
import os
import platform
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench.throughput import LookupEmbedder, _corpus, _unit
from palazzo.errors import NotFound
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore, journal_name
from palazzo.persist.storage import DirectorySpace


class CountingLookup(LookupEmbedder):
    """The lookup embedder, counting the texts it is asked for (replay should ask for none)."""

    def __init__(self, table: dict[str, np.ndarray], dim: int) -> None:
        super().__init__(table, dim)
        self.asked = 0

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.asked += len(texts)
        return super().embed(texts)


def measure(size: int = 20_000, records: int = 200, dim: int = 384, seed: int = 0,
            folder: Path | None = None) -> dict[str, Any]:
    """Return the measurements for one palace of ``size`` drawers plus ``records`` journaled
    adds (seconds, bytes)."""
    rng = np.random.default_rng(seed)
    texts = _corpus(size + records, rng)
    table = dict(zip(texts, _unit(rng, len(texts), dim), strict=True))
    embedders: list[CountingLookup] = []

    def make(**kw: Any) -> Palace:
        embedders.append(CountingLookup(table, dim))
        return Palace(embedder=embedders[-1], clock=lambda: 0.0, **kw)

    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        space = DirectorySpace(Path(tmp))
        store = PalaceStore(space, make, compact_records=10**9, compact_bytes=1 << 40)
        t = time.perf_counter()
        for i, text in enumerate(texts[:size]):
            store.palace.add_drawer(f"wing{i % 8}", f"room{i % 64}", text)
        build_s = time.perf_counter() - t
        t = time.perf_counter()
        store.compact()
        compact_s = time.perf_counter() - t
        gen = store.status.generation
        t = time.perf_counter()
        for i, text in enumerate(texts[size:]):
            store.call("add_drawer", {"wing": f"wing{i % 8}", "room": f"room{i % 64}",
                                      "content": text})
        add_s = (time.perf_counter() - t) / max(records, 1)
        journal_bytes = len(space.read(journal_name(gen)) or b"")
        snapshot_bytes = sum(p.stat().st_size for p in Path(tmp).glob("snapshot-*"))
        embedders.clear()
        t = time.perf_counter()
        again = PalaceStore(space, make)
        boot_s = time.perf_counter() - t
        asked = sum(e.asked for e in embedders)
        same = again.palace.counts() == store.palace.counts()
        t = time.perf_counter()
        with contextlib.suppress(NotFound):  # atomic: refused before any change, no reload
            store.call("update_drawer", {"drawer_id": "drawer_missing", "content": "x"})
        refused_s = time.perf_counter() - t
        t = time.perf_counter()
        store.boot()  # what a non-atomic operation failing part-way costs
        reload_s = time.perf_counter() - t
    return {
        "drawers": size, "journaled_adds": records, "dim": dim,
        "build_in_memory_s": round(build_s, 3),
        "snapshot_write_s": round(compact_s, 3), "snapshot_mb": round(snapshot_bytes / 1e6, 1),
        "journaled_add_ms": round(add_s * 1000, 2),
        "journal_bytes_per_add": round(journal_bytes / max(records, 1)),
        "boot_s": round(boot_s, 3), "texts_embedded_by_boot": asked,
        "boot_state_equal": same,
        "atomic_refusal_s": round(refused_s, 4),
        "failed_call_reload_s": round(reload_s, 3),
    }


def run(size: int = 20_000, records: int = 200) -> dict[str, Any]:
    """Measure once; returns the result with the machine it ran on."""
    return {"benchmark": "journal", "python": platform.python_version(),
            "numpy": np.__version__, "cpus": os.cpu_count(),
            "result": measure(size, records)}
