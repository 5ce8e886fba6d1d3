"""The ``palazzo`` command line (CPython host). Errors are one line and a non-zero exit."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from palazzo.errors import PalazzoError


class ProgressBar:
    """A one-line progress bar on stderr for long runs (silent when stderr is not a TTY
    unless ``force``)."""

    def __init__(self, label: str, force: bool = False) -> None:
        self.label = label
        self.live = force or sys.stderr.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.live:
            return
        width = 30
        filled = int(width * done / max(total, 1))
        sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                         f"{done}/{total}")
        if done >= total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def make_embedder(name: str):
    """Return the embedder called ``name`` (minilm needs its weights: see README)."""
    from palazzo.embed import registry

    return registry.make(name)


def _bench_longmemeval(args) -> int:
    from palazzo.bench import longmemeval

    embedder = None if args.mode == "bm25" else make_embedder(args.embedder)
    result = longmemeval.run(Path(args.data), embedder, args.mode,
                             progress=ProgressBar("questions", args.progress),
                             chunk_size=args.chunk_size or None)
    _write(args.out, result)
    print(json.dumps(result["metrics"], indent=1))
    return 0


def _bench_make_longtext(args) -> int:
    from palazzo.bench import longmemeval, longtext

    questions = longtext.make(longmemeval.load(Path(args.data)), args.group)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(questions), encoding="utf-8")
    print(f"{len(questions)} questions written to {out}", file=sys.stderr)
    return 0


def _bench_throughput(args) -> int:
    from palazzo.bench import throughput

    sizes = [int(s) for s in args.sizes.split(",")]
    result = throughput.run(sizes, similar=args.similar,
                            progress=ProgressBar("sizes", args.progress))
    _write(args.out, result)
    for r in result["results"]:
        print(json.dumps(r))
    return 0


def _bench_embedder(args) -> int:
    from palazzo.bench import embedder

    result = embedder.run(Path(args.data), make_embedder(args.embedder))
    _write(args.out, result)
    print(json.dumps(result, indent=1))
    return 0


def _bench_pathfinding(args) -> int:
    from palazzo.bench import pathfinding

    result = pathfinding.run()
    _write(args.out, result)
    print(json.dumps(result, indent=1)[:4000])
    return 0


def _bench_decay(args) -> int:
    from palazzo.bench import stigmergy

    sizes = tuple(int(s) for s in args.sizes.split(","))
    result = stigmergy.run(sizes)
    _write(args.out, result)
    print(json.dumps(result, indent=1))
    return 0


def _bench_learning(args) -> int:
    from palazzo.bench import learning

    weights = [float(w) for w in args.weights.split(",")]
    embedder = make_embedder(args.embedder)
    result = learning.run(Path(args.data), embedder, weights, rounds=args.rounds,
                          seed=args.seed, progress=ProgressBar("weights", args.progress))
    _write(args.out, result)
    for row in result["table"]:
        print(json.dumps(row))
    return 0


def _bench_swarm(args) -> int:
    from palazzo.bench import swarm

    result = swarm.run(agents=args.agents, cycles=args.cycles, seed=args.seed)
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k not in ("curve", "summary")},
                     indent=1))
    return 0


def _write(path: str, result: dict) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"written to {out}", file=sys.stderr)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="palazzo", description="A memory palace for AI agents.")
    sub = p.add_subparsers(dest="command", required=True)
    bench = sub.add_parser("bench", help="benchmarks").add_subparsers(dest="bench", required=True)
    lme = bench.add_parser("longmemeval", help="session retrieval on a LongMemEval file")
    lme.add_argument("--data", required=True)
    lme.add_argument("--out", required=True)
    lme.add_argument("--embedder", default="minilm", choices=["minilm", "tfidf", "hash"])
    lme.add_argument("--mode", default="hybrid")
    lme.add_argument("--progress", action="store_true", help="show progress when not a TTY")
    lme.add_argument("--chunk-size", type=int, default=900, help="characters; 0 embeds whole")
    lme.set_defaults(fn=_bench_longmemeval)
    mlt = bench.add_parser("make-longtext", help="LongMemEval file with sessions grouped into "
                           "long drawers")
    mlt.add_argument("--data", required=True)
    mlt.add_argument("--out", required=True)
    mlt.add_argument("--group", type=int, default=6, help="sessions a drawer")
    mlt.set_defaults(fn=_bench_make_longtext)
    emb = bench.add_parser("embedder", help="embedder speed on a LongMemEval file's text")
    emb.add_argument("--data", required=True)
    emb.add_argument("--out", required=True)
    emb.add_argument("--embedder", default="minilm", choices=["minilm", "tfidf", "hash"])
    emb.set_defaults(fn=_bench_embedder)
    pf = bench.add_parser("pathfinding", help="Semantic A* on the paper's synthetic palaces")
    pf.add_argument("--out", required=True)
    pf.set_defaults(fn=_bench_pathfinding)
    dec = bench.add_parser("decay", help="pheromone decay and cost recomputation throughput")
    dec.add_argument("--sizes", default="100,5000,100000")
    dec.add_argument("--out", required=True)
    dec.set_defaults(fn=_bench_decay)
    lrn = bench.add_parser("learning", help="does retrieval learn from use? repeated workload "
                           "with feedback vs held-apart questions")
    lrn.add_argument("--data", required=True)
    lrn.add_argument("--out", required=True)
    lrn.add_argument("--embedder", default="minilm", choices=["minilm", "tfidf", "hash"])
    lrn.add_argument("--weights", default="0,0.25,0.5,1,2", help="pheromone term weights")
    lrn.add_argument("--rounds", type=int, default=10)
    lrn.add_argument("--seed", type=int, default=0, help="workload/held-apart split seed")
    lrn.add_argument("--progress", action="store_true")
    lrn.set_defaults(fn=_bench_learning)
    sw = bench.add_parser("swarm", help="swarm soak run: pheromone mass and convergence curve")
    sw.add_argument("--agents", type=int, default=5)
    sw.add_argument("--cycles", type=int, default=500)
    sw.add_argument("--seed", type=int, default=0)
    sw.add_argument("--out", required=True)
    sw.set_defaults(fn=_bench_swarm)
    thr = bench.add_parser("throughput", help="insert/search/export/import at several sizes")
    thr.add_argument("--sizes", default="100,1000,5000,100000")
    thr.add_argument("--out", required=True)
    thr.add_argument("--similar", action="store_true", help="also link SIMILAR_TO on insert")
    thr.add_argument("--progress", action="store_true")
    thr.set_defaults(fn=_bench_throughput)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.fn(args)
    except PalazzoError as err:
        print(f"palazzo: {err}", file=sys.stderr)
        return 1
    except (OSError, json.JSONDecodeError) as err:
        print(f"palazzo: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
