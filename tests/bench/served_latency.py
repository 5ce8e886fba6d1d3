"""One client's latency on ``palazzo serve``, back to back, against the same calls made in the
server's own process (docs/server.md, "Finding the server").

    PYTHONPATH=py .venv/bin/python tests/bench/served_latency.py PALACE EXPORT

PALACE: a palace imported (hash embedder) from EXPORT, the scale generator's
conversations.json, whose words make the queries. Prints p50/p95 in milliseconds.
"""

import http.client
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from palazzo.embed import registry
from palazzo.palace import Palace
from palazzo.persist.directory import PalaceDirectory

PORT = 18890


def queries(export: Path, n: int = 300) -> list[str]:
    words = sorted({w for w in export.read_text(encoding="utf-8").split()
                    if w.isalpha() and len(w) > 4})
    rng = random.Random(0)
    return [" ".join(rng.sample(words, 2)) for _ in range(n)]


def timed(fn, items) -> str:
    ms = []
    for item in items:
        t0 = time.perf_counter()
        fn(item)
        ms.append((time.perf_counter() - t0) * 1000)
    return f"p50 {np.percentile(ms, 50):.2f} p95 {np.percentile(ms, 95):.2f}"


def main(palace: Path, export: Path) -> None:
    qs = queries(export)
    embedder = registry.choose("hash").embedder
    with PalaceDirectory(palace, lambda **kw: Palace(embedder=embedder, **kw)) as d:
        d.call("palace_status")
        print("in-process search", timed(lambda q: d.call("search", {"query": q}), qs))
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2] / "py"))
    server = subprocess.Popen([sys.executable, "-m", "palazzo", "serve", "--palace",
                               str(palace), "--embedder", "hash", "--port", str(PORT)],
                              env=env, stderr=subprocess.DEVNULL)
    try:
        time.sleep(4)
        conn = http.client.HTTPConnection("127.0.0.1", PORT)

        def call(op: str, args: dict) -> None:
            conn.request("POST", f"/api/ops/{op}", json.dumps(args),
                         {"Content-Type": "application/json"})
            conn.getresponse().read()

        for q in qs[:20]:
            call("search", {"query": q})  # warm
        print("http search", timed(lambda q: call("search", {"query": q}), qs))
        print("http search unenriched",
              timed(lambda q: call("search", {"query": q, "enrich": 1}), qs))
        print("http get_drawer of an unknown id",
              timed(lambda _: call("get_drawer", {"drawer_id": "nope"}), range(100)))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
