"""Whether the speakers' names written into LoCoMo's turns ("Maria: Hey John, …") are what
makes vectors weak on real conversations (issue 32): vectors of the chunks with each line's
"Name: " taken off, and of the question without the words nearly every session holds
(:func:`palazzo.bench.ablation.without_common`), alone and fused with BM25 as search fuses
them (RRF, no enrichment nor event list). BM25 reads the text as written throughout.

    python tests/bench/speaker_names.py DATA [--turns user]

Prints R@5 any / R@5 all / NDCG@10 of each variant. Cost: ``bench ablate``'s preparation,
plus one embedding of every distinct chunk without its names (MiniLM, from PALAZZO_MINILM).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))

SPEAKER = re.compile(r"^\s*[A-Z][\w .'-]{0,30}:\s*", re.MULTILINE)  # "Maria: " at a line's start


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("data")
    parser.add_argument("--turns", default="user", choices=["user", "all"])
    args = parser.parse_args(argv)

    from palazzo.bench import ablation as A
    from palazzo.bench.metrics import summarise
    from palazzo.core.chunking import spans
    from palazzo.hosts.cli import make_embedder

    embedder = make_embedder("minilm")
    questions = A.prepare(Path(args.data), embedder, args.turns)
    vectors: dict[str, np.ndarray] = {}

    def embed(texts: list[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in vectors]
        for i in range(0, len(todo), 64):
            for t, v in zip(todo[i:i + 64], embedder.embed(todo[i:i + 64]), strict=True):
                vectors[t] = np.asarray(v, dtype=np.float32)
        return np.array([vectors[t] for t in texts])

    rows: dict[str, list] = {k: [] for k in (
        "vector, chunks as written", "vector, chunks without speaker names",
        "hybrid, chunks without names", "hybrid, chunks and question without names")}
    for q in questions:
        chunks = [SPEAKER.sub("", t[a:b]) for t in q.texts for a, b in spans(t, 500, None)]
        cv = embed(chunks)
        asked, rare = embed([q.text, A.without_common(q.text, q.texts)])
        plain = A.by_session(q.ccos, q)
        bare = A.by_session((cv @ asked).astype(np.float64), q)
        both = A.by_session((cv @ rare).astype(np.float64), q)
        bm = A._ranked(q.bm, True, A.DEPTH)
        scored = {
            "vector, chunks as written": (plain, False),
            "vector, chunks without speaker names": (bare, False),
            "hybrid, chunks without names": (A._rrf(q, [A._ranked(bare, False, A.DEPTH), bm]),
                                             True),
            "hybrid, chunks and question without names": (
                A._rrf(q, [A._ranked(both, False, A.DEPTH), bm]), True)}
        for name, (s, positive) in scored.items():
            ranked = [q.sids[i] for i in A._ranked(s, positive)]
            ranked += [x for x in q.sids if x not in set(ranked)]
            rows[name].append((ranked, q.gold))
    for name, r in rows.items():
        m = summarise(r)
        print(f"{name}: " + " / ".join(f"{m[k]:.3f}" for k in
                                       ("recall_any@5", "recall_all@5", "ndcg_any@10")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
