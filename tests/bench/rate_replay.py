"""How steady the page's embedding speed is, replayed from an import_scale run.

    .venv/bin/python tests/bench/rate_replay.py bench-results/import-scale-embed-counted.json
    .venv/bin/python tests/bench/rate_replay.py --fit      # the model's cost a text, CPython

An import_scale run with ``--embed-minutes`` records, every 15 s, how many drawers had a
vector. The drawers get theirs in the embedding queue's order (``Palace.embedding_queue``), so
the drawers embedded in each interval are known: this script rebuilds the queue of the same
export (the scale benchmark's palace, ``.cache/bench-browser-scale/20000-0``, imported from the
generator's 20k export with seed 0, copied to a temporary folder) and counts what each
interval's drawers asked of the model (``Palace.embedding_texts`` with opening first, as the
page asks) in drawers, characters (plus a fixed cost a piece) and word pieces. Printed: the
spread of the speed over the intervals in each unit (standard deviation over mean: the unit
that makes the speed steadiest is the best one to count the queue in), and how often the
speed over the last W seconds was within 30 % of the next two minutes' (what the status
line's rate is judged by), for several W. Intervals around the reload and after every drawer
has a vector (the rests, whose order the replay does not follow) are left out.

``--fit`` times ONNX Runtime (CPython, 2 threads) on texts of 30 to 500 characters and fits
milliseconds a text = a + b · characters: a / b is what a piece costs in characters
(``palazzo.embed.workload.PIECE``).
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))

PALACE = ROOT / ".cache" / "bench-browser-scale" / "20000-0" / "palace"
WEIGHTS = ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz"


def queue_work(palace_dir: Path) -> dict[str, np.ndarray]:
    """Return, over the embedding queue of the palace at ``palace_dir`` with no vector yet,
    the cumulative drawers' characters, word pieces and pieces (index i: the first i)."""
    from palazzo.embed.hashing import HashEmbedder
    from palazzo.embed.minilm import read_card
    from palazzo.palace import Palace
    from palazzo.persist.directory import PalaceDirectory

    class EnglishOnly(HashEmbedder):
        name = "minilm"  # what the palace knows of an embedder's scripts is in its name

    tokenizer = read_card(WEIGHTS.read_bytes()).tokenizer
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "palace"
        shutil.copytree(palace_dir, copy)
        with PalaceDirectory(copy, lambda **kw: Palace(**kw)) as folder:
            palace = folder.store.palace
            palace.embedder = EnglishOnly()
            palace.drawers.has_vector[:] = False
            chars, pieces, words = [], [], []
            for row in palace.embedding_queue().tolist():
                texts = palace.embedding_texts(row, True)[0]
                chars.append(sum(len(t) for t in texts))
                pieces.append(len(texts))
                words.append(sum(len(tokenizer.encode(t).ids) for t in texts))
    return {k: np.concatenate([[0], np.cumsum(v)])
            for k, v in (("chars", chars), ("pieces", pieces), ("words", words))}


def replay(run: dict, work: dict[str, np.ndarray]) -> dict[str, object]:
    """Return the speed's spread by unit and the window comparison for one run's curve."""
    embedding = run["runs"][0]["embedding"]
    total = len(work["chars"]) - 1
    curve = [(x["at_s"], x["embedded"]) for x in embedding["curve"] if x["embedded"] < total]
    reload_at = (embedding.get("reload") or {}).get("at_s", -1e9)
    units = {"drawers": lambda e: float(e),
             "characters": lambda e: work["chars"][e],
             "characters + 40 a piece": lambda e: work["chars"][e] + 40 * work["pieces"][e],
             "word pieces": lambda e: work["words"][e],
             "word pieces + 10 a piece": lambda e: work["words"][e] + 10 * work["pieces"][e]}
    spans = [(a, b) for a, b in zip(curve, curve[1:], strict=False)
             if not (a[0] < reload_at < b[0] + 30) and b[1] > a[1]]
    spread = {}
    for name, f in units.items():
        speed = np.array([(f(b[1]) - f(a[1])) / (b[0] - a[0]) for a, b in spans])
        spread[name] = round(float(speed.std() / speed.mean()), 3)
    counted = units["characters + 40 a piece"]  # as the page counts
    windows = {}
    for window in (15, 30, 60, 120):
        close = checked = 0
        for k, (t, e) in enumerate(curve):
            past = [p for p in curve[:k] if t - p[0] <= window + 1 and not p[0] < reload_at < t]
            future = [f for f in curve[k + 1:] if f[0] - t <= 121 and not t < reload_at < f[0]]
            if not past or not future or future[-1][0] - t < 60 or t - past[0][0] < window - 1:
                continue
            before = (counted(e) - counted(past[0][1])) / (t - past[0][0])
            after = (counted(future[-1][1]) - counted(e)) / (future[-1][0] - t)
            checked += 1
            close += abs(before - after) / after <= 0.3
        windows[f"{window} s"] = f"{close} of {checked}"
    return {"intervals": len(spans), "speed spread (std / mean)": spread,
            "last W s within 30 % of the next 2 min": windows}


def fit() -> dict[str, float]:
    """Return ONNX Runtime's milliseconds a text against its characters, fitted a + b·chars."""
    from palazzo.embed.runtime import OnnxMiniLM

    model = OnnxMiniLM(WEIGHTS, threads=2)
    words = (ROOT / "docs" / "browser.md").read_text(encoding="utf-8").split()
    rng = random.Random(1)

    def text(n: int) -> str:
        out: list[str] = []
        while len(" ".join(out)) < n:
            out.append(rng.choice(words))
        return " ".join(out)[:n]

    model.embed([text(100)] * 8)
    points = []
    for n in (30, 60, 120, 250, 400, 500):
        texts = [text(n) for _ in range(384)]
        best = min(_timed(model, texts) for _ in range(2))
        points.append((n, best / len(texts) * 1000))
    a, b = np.linalg.lstsq(np.array([[1.0, n] for n, _ in points]),
                           np.array([ms for _, ms in points]), rcond=None)[0]
    return {"ms_a_text": round(float(a), 3), "ms_a_character": round(float(b), 5),
            "piece_in_characters": round(float(a / b), 1),
            "points": [[n, round(ms, 3)] for n, ms in points]}


def _timed(model, texts: list[str]) -> float:
    t0 = time.perf_counter()
    model.embed(texts)
    return time.perf_counter() - t0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="*", help="import_scale JSON files (with --embed-minutes)")
    parser.add_argument("--palace", type=Path, default=PALACE)
    parser.add_argument("--fit", action="store_true")
    args = parser.parse_args()
    out: dict[str, object] = {}
    if args.runs:
        work = queue_work(args.palace)
        out["runs"] = {r: replay(json.loads(Path(r).read_text()), work) for r in args.runs}
    if args.fit:
        out["fit"] = fit()
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
