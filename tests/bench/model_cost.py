"""What the model costs the command line's chat import, by ONNX Runtime's threads and batch size.

    .venv/bin/python tests/bench/model_cost.py --out bench-results/model-cost.json
    .venv/bin/python tests/bench/model_cost.py --settings 2x1024,1x1024,2x512 --repeat 2

Issue 31's point 9 asks for 4x less CPU on a chat export's import. The import's CPU is mostly
ONNX Runtime's; this script measures what is left to win there. It generates the chat-import
benchmark's export (:func:`palazzo.bench.exportgen.write_export`, 2,688 messages, seed 0),
imports it with ``palazzo import-chats`` in this process with MiniLM's ``embed`` replaced by a
recorder (random unit vectors: the import runs as it does, only the model is left out), and
keeps the texts the import asked the model for, in order. Then, for each setting
``THREADSxBATCH_TOKENS``, it loads ONNX Runtime's MiniLM with those intra-op threads and
padded-batch size and embeds the same texts in the import's steps (64 texts a call), timing
wall and process CPU seconds (``time.process_time``: every thread). Printed and written:
texts, word pieces, characters, and per setting its runs.

Cost: the import (~10 s) and one pass of the model per setting and repeat (~35 s at 2 threads
on this 2-core machine, ~65 s at 1).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))

STEP = 64  # texts an embedding call gets, about what one import step asks


def recorded_texts(messages: int, seed: int, weights: Path) -> list[str]:
    """Return the texts ``palazzo import-chats`` asks MiniLM for on the generated export of
    ``messages`` messages, in the order asked (the model replaced by a recorder)."""
    import os

    from palazzo.bench.exportgen import write_export
    from palazzo.embed import runtime
    from palazzo.hosts.cli import main

    asked: list[str] = []

    def record(self: object, texts: list[str]) -> np.ndarray:
        asked.extend(texts)
        v = np.random.default_rng(len(asked)).standard_normal((len(texts), 384))
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    real = runtime.OnnxMiniLM.embed
    runtime.OnnxMiniLM.embed = record  # type: ignore[method-assign]
    os.environ["PALAZZO_MINILM"] = str(weights)
    try:
        with tempfile.TemporaryDirectory(prefix="model-cost-") as tmp:
            export = Path(tmp) / "conversations.json"
            write_export(export, messages, seed)
            code = main(["import-chats", str(export), "--palace", str(Path(tmp) / "palace"),
                         "--embedder", "minilm"])
            if code:
                raise SystemExit(f"import-chats failed ({code})")
    finally:
        runtime.OnnxMiniLM.embed = real  # type: ignore[method-assign]
    return asked


def timed(texts: list[str], weights: Path, threads: int, batch_tokens: int) -> dict[str, float]:
    """Return wall and CPU seconds of embedding ``texts`` in steps of :data:`STEP` with ONNX
    Runtime at ``threads`` intra-op threads and ``batch_tokens`` padded positions a batch."""
    from palazzo.embed.runtime import OnnxMiniLM

    model = OnnxMiniLM(weights, threads=threads, batch_tokens=batch_tokens)
    model.embed(texts[:16])  # the first run's allocations are not the import's cost
    cpu, wall = time.process_time(), time.perf_counter()
    for i in range(0, len(texts), STEP):
        model.embed(texts[i:i + STEP])
    return {"wall_s": round(time.perf_counter() - wall, 2),
            "cpu_s": round(time.process_time() - cpu, 2)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--messages", type=int, default=2688)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--weights", type=Path,
                    default=ROOT / "dist" / "vendor" / "models" / "minilm" / "minilm.npz")
    ap.add_argument("--settings", default="2x1024,1x1024,2x512,1x512",
                    help="comma-separated THREADSxBATCH_TOKENS")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if not args.weights.exists():
        raise SystemExit(f"no MiniLM weights at {args.weights}: run `npm run build` first")
    texts = recorded_texts(args.messages, args.seed, args.weights)
    from palazzo.embed.minilm import read_card

    tokenizer = read_card(args.weights.read_bytes()).tokenizer
    pieces = sum(len(tokenizer.encode(t).ids) for t in texts)
    result = {"messages": args.messages, "seed": args.seed, "texts": len(texts),
              "characters": sum(map(len, texts)), "word_pieces": pieces, "runs": []}
    print(f"{len(texts)} texts, {result['characters']} characters, {pieces} word pieces",
          file=sys.stderr)
    for _ in range(args.repeat):
        for setting in args.settings.split(","):
            threads, batch = (int(x) for x in setting.split("x"))
            run = {"threads": threads, "batch_tokens": batch,
                   **timed(texts, args.weights, threads, batch)}
            result["runs"].append(run)
            print(json.dumps(run), file=sys.stderr)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
