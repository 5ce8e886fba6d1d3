"""What query trails cost a search at 20k drawers: search with the learned term off, and on
with 1,000 and with 20,000 trails (the cap), on the same palace and queries.

    python tests/bench/trails_cost.py [--palace DIR] [--out FILE]

Without ``--palace`` it makes one once (the scale generator's 20,000-message export through
the real ``palazzo import-chats`` with the hash embedder) under .cache/bench-status-cost/
(shared with status_cost.py). Trails are made in memory only, nothing is written: each from
one of the palace's own user turns (its first 80 characters as the query) to a drawer drawn
by a seeded generator, so their words are the palace's words. Each of 20 queries (other
user turns) is searched 5 times a setting; prints and writes the median and p95 in ms.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from status_cost import make_palace  # noqa: E402


def timings(fn, queries: list[str], repeat: int = 5) -> dict[str, float]:
    ms = []
    for _ in range(repeat):
        for q in queries:
            t = time.perf_counter()
            fn(q)
            ms.append((time.perf_counter() - t) * 1e3)
    ms.sort()
    return {"median_ms": round(statistics.median(ms), 2),
            "p95_ms": round(ms[int(0.95 * (len(ms) - 1))], 2), "searches": len(ms)}


def report(out: dict[str, object], path: str | None) -> None:
    """Print ``out`` as JSON and, with ``path``, write it there too (its folder made)."""
    text = json.dumps(out, indent=1)
    print(text)
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text + "\n", encoding="utf-8")


@contextmanager
def user_turns(argv: list[str], doc: str) -> Iterator[tuple[Any, list[int], argparse.Namespace]]:
    """Parse ``--palace`` / ``--out`` from ``argv``, open the palace (the 20k one made once
    when none is named) with the hash embedder, and yield it, its user turns' rows (longer
    than 40 characters) in a shuffle seeded 0, and the parsed arguments."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--palace")
    parser.add_argument("--out")
    args = parser.parse_args(argv)
    palace = Path(args.palace) if args.palace else make_palace(
        ROOT / ".cache" / "bench-status-cost")
    args.palace = str(palace)

    from palazzo.embed.hashing import HashEmbedder
    from palazzo.palace import Palace
    from palazzo.persist.directory import PalaceDirectory

    with PalaceDirectory(palace, lambda **kw: Palace(embedder=HashEmbedder(), **kw)) as d:
        p = d.store.palace
        s = p.drawers
        own = [r for r in range(s.size) if s.alive[r] and len(s.content[r]) > 40
               and s.source[r] and "user" in s.source[r]] or list(range(s.size))
        random.Random(0).shuffle(own)
        yield p, own, args


def main(argv: list[str]) -> int:
    from palazzo.ops import REGISTRY
    from palazzo.stigmergy.trails import QueryTrails

    with user_turns(argv, __doc__) as (p, own, args):
        s = p.drawers
        rng = random.Random(1)
        queries = [s.content[r][:80] for r in own[:20]]
        out: dict[str, object] = {"benchmark": "trails_cost", "palace": args.palace,
                                  "drawers": int(s.alive[: s.size].sum())}

        def ask(weight: float):
            return lambda q: REGISTRY.call(p, "search", {"query": q, "limit": 10,
                                                         "pheromone": weight})

        results = {"off": timings(ask(0.0), queries)}
        for n in (1_000, 20_000):
            p.trails = QueryTrails()
            tok = p.text_index.tokenizer
            for r in own[20:20 + n]:
                p.trails.deposit(QueryTrails.region(tok, s.content[r][:80]),
                                 [s.ids[rng.randrange(s.size)]], [1.0])
            results[f"{len(p.trails)} trails"] = timings(ask(1.0), queries)
        out["search"] = results
    report(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
