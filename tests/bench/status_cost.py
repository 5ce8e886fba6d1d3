"""What the status and the embedding queue cost at 20k drawers, while every drawer waits for
a vector: the fixed part of each background-embedding step (the page asks for the status
and the queue after every step).

    python tests/bench/status_cost.py [--palace DIR] [--embedder minilm|hash]

Without ``--palace`` it makes one once (the scale generator's 20,000-message export through
the real ``palazzo import-chats`` with the hash embedder) under .cache/bench-status-cost/.
The palace is opened read-only in spirit: every vector flag is cleared in memory only and
nothing is written. ``--embedder minilm`` (the default) makes the status count the drawers
MiniLM does not read (the model is loaded, never run). Prints the median and the fastest of
7 calls of ``palace_status`` and of ``Palace.embedding_queue`` in ms.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))


def make_palace(folder: Path) -> Path:
    """Return the palace directory in ``folder``, made first if it is not there."""
    palace = folder / "palace"
    if palace.exists():
        return palace
    from palazzo.bench.exportgen import write_export

    folder.mkdir(parents=True, exist_ok=True)
    export = folder / "export.json"
    write_export(export, 20000)
    subprocess.run([sys.executable, "-m", "palazzo", "import-chats", "--palace", str(palace),
                    "--embedder", "hash", str(export)], check=True, stdout=subprocess.DEVNULL)
    return palace


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--palace")
    parser.add_argument("--embedder", default="minilm")
    args = parser.parse_args(argv)
    palace = Path(args.palace) if args.palace else make_palace(
        ROOT / ".cache" / "bench-status-cost")

    from palazzo.embed import registry
    from palazzo.ops import REGISTRY
    from palazzo.palace import Palace
    from palazzo.persist.directory import PalaceDirectory

    embedder = registry.choose(args.embedder).embedder
    with PalaceDirectory(palace, lambda **kw: Palace(embedder=embedder, **kw)) as d:
        p = d.store.palace
        s = p.drawers
        s.has_vector[: s.size] = False  # in memory only: every drawer waits for a vector
        REGISTRY.call(p, "palace_status")  # the first call reads each drawer's script
        for name, fn in [("palace_status", lambda: REGISTRY.call(p, "palace_status")),
                         ("embedding_queue", p.embedding_queue)]:
            ms = []
            for _ in range(7):
                t = time.perf_counter()
                fn()
                ms.append((time.perf_counter() - t) * 1e3)
            print(f"{name}: median {statistics.median(ms):.1f} ms, fastest {min(ms):.1f} ms")
        st = REGISTRY.call(p, "palace_status")
        print({k: st[k] for k in ("drawers", "to_embed", "to_embed_own", "unread")})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
