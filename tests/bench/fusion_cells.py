"""Issue 32's rule over `bench longmemeval` runs: per set, each z-fusion setting's R@5 any, R@5
all and NDCG@10, and how many cells (question type × those three) fall below BM25 alone and
below today's default (:func:`palazzo.bench.ablation.below`).

Reads ``bench-results/base-<set>.json`` (``--mode hybrid,bm25``: the default and BM25) and
``bench-results/fz-<set>.json`` (``--fuse z --events 0,0.25,0.5,1 --recency 0,0.25,0.5,1``);
the commands are in docs/benchmarks.md ("One currency"). Prints a Markdown table.

    PYTHONPATH=py .venv/bin/python tests/bench/fusion_cells.py
"""

import json
import sys
from pathlib import Path

from palazzo.bench.ablation import below

SETS = ["dev3", "lc5", "lc25", "dev50", "dev3-pooled", "dev50-pooled"]
SETTINGS = [(0.0, 0.0), (0.25, 0.25), (0.5, 0.5), (1.0, 0.25), (1.0, 0.5), (1.0, 1.0)]


def main(folder: Path = Path("bench-results")) -> int:
    print("| set | setting | R@5 any / all / NDCG@10 | cells below BM25 | cells below the "
          "default | worst cell |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name in SETS:
        base = json.loads((folder / f"base-{name}.json").read_text())["runs"]
        fz = json.loads((folder / f"fz-{name}.json").read_text())["runs"]
        variants = [{"variant": "bm25" if r["mode"] == "bm25" else "default",
                     "metrics": r["metrics"], "by_type": r["by_type"]} for r in base]
        for r in fz:
            f = r["fusion"]
            key = (float(f.get("recency", 1.0)), float(f.get("events", 2.0)))
            if key in SETTINGS:
                variants.append({"variant": f"z, recency {key[0]:g}, events {key[1]:g}",
                                 "metrics": r["metrics"], "by_type": r["by_type"]})
        result = {"variants": variants}
        under_bm25, under_default = below(result, "bm25"), below(result, "default")
        for v in variants:
            m = v["metrics"]
            cells = under_bm25[v["variant"]] + under_default[v["variant"]]
            worst = min(cells, key=lambda c: c[2], default=None)
            print(f"| {name} | {v['variant']} | {m['recall_any@5']:.3f} / "
                  f"{m['recall_all@5']:.3f} / {m['ndcg_any@10']:.3f} | "
                  f"{len(under_bm25[v['variant']])} | {len(under_default[v['variant']])} | "
                  + (f"{worst[0]} {worst[1]} {worst[2]:+.3f}" if worst else "–") + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(*[Path(a) for a in sys.argv[1:]]))
