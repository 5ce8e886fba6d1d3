"""What reading an event clause's rare words costs a search at 20k drawers: questions that
name an event ("When did I …?"), searched with the event list as by default (meaning alone,
5 drawers a clause), with 1 drawer a clause, and with the clause's words read (weight 0.2).

    python tests/bench/event_words_cost.py [--palace DIR] [--out FILE]

Without ``--palace`` it makes one once (the scale generator's 20,000-message export through
the real ``palazzo import-chats`` with the hash embedder) under .cache/bench-status-cost/
(shared with status_cost.py and trails_cost.py). Each of 20 questions ("When did I " and
the first 60 characters of one of the palace's user turns) is searched 5 times a setting;
prints and writes the median and p95 in ms, and the palace's event sentence count.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from trails_cost import report, timings, user_turns  # noqa: E402


def main(argv: list[str]) -> int:
    from palazzo.ops import REGISTRY
    from palazzo.retrieval import events

    with user_turns(argv, __doc__) as (p, own, args):
        s = p.drawers
        out: dict[str, object] = {"benchmark": "event_words_cost", "palace": args.palace}
        queries = [f"When did I {s.content[r][:60].strip().rstrip('?.!')}?" for r in own[:20]]
        assert all(events.clauses(q) for q in queries), "every question names an event"
        out["drawers"] = int(s.alive[: s.size].sum())
        out["event_sentences"] = s.chunks.event_count()

        def ask(q: str):
            return REGISTRY.call(p, "search", {"query": q, "limit": 10})

        results = {}
        for name, tuning in (("default (5 drawers, meaning)", {}),
                             ("1 drawer, meaning", {"depth": 1}),
                             ("1 drawer, words 0.2", {"depth": 1, "words": 0.2})):
            with events.tuned(**tuning):
                results[name] = timings(ask, queries)
        out["search"] = results
    report(out, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
