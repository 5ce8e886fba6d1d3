"""What the z-score sum costs a search at 20k drawers: hybrid search with ``zsum`` 0 (the
default) and 0.02, on the same palace and queries, alternated twice.

    python tests/bench/zsum_cost.py [--palace DIR] [--out FILE]

The palace and queries are trails_cost.py's (the scale generator's 20,942-drawer palace
through the real ``palazzo import-chats`` with the hash embedder, made once under
.cache/bench-status-cost/; 20 of its user turns' first 80 characters, each searched 5 times a
round). Prints and writes the median and p95 in ms of each setting in each round.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from trails_cost import report, timings, user_turns  # noqa: E402


def main(argv: list[str]) -> int:
    from palazzo.retrieval.search import search

    with user_turns(argv, __doc__) as (p, own, args):
        s = p.drawers
        queries = [s.content[r][:80] for r in own[:20]]
        out: dict[str, object] = {"benchmark": "zsum_cost", "palace": args.palace,
                                  "drawers": int(s.alive[: s.size].sum()), "rounds": []}
        for _ in range(2):
            out["rounds"].append({
                f"zsum {z:g}": timings(lambda q, z=z: search(p, q, limit=10, zsum=z), queries)
                for z in (0.0, 0.02)})
    report(out, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
