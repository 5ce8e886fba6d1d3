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
