"""The ``palazzo bench …`` subcommands: their arguments, and running the one asked for.

The ``palazzo`` command line (:mod:`palazzo.hosts.cli`) adds them with :func:`add_parsers` and
runs them with :func:`run`, handing in how it makes embedders and progress bars: the bench
layer does not import the hosts (they import it), so the terminal stays the host's. Each
benchmark writes its result to ``--out`` as JSON and prints a summary on stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palazzo.core.model import CHUNK_SIZE

# Makes the embedder of a name (the host's, which may say on stderr what it picked).
MakeEmbedder = Callable[[str], Any]
# Makes a progress callback from a label and whether to show it when stderr is no terminal.
MakeProgress = Callable[[str, bool], Callable[[int, int], None]]
Bench = Callable[[argparse.Namespace, MakeEmbedder, MakeProgress], int]

EMBEDDERS = ["minilm", "tfidf", "hash"]


def add_parsers(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Add ``bench`` and its subcommands to ``sub`` (the subcommands of the ``palazzo``
    parser); return the ``bench`` parser, so the host can set what runs it (:func:`run`)."""
    parser = sub.add_parser("bench", help="benchmarks")
    bench = parser.add_subparsers(dest="bench", required=True)

    def add(name: str, fn: Bench, help: str) -> argparse.ArgumentParser:  # noqa: A002
        c = bench.add_parser(name, help=help)
        c.set_defaults(bench_fn=fn)
        return c

    lme = add("longmemeval", _longmemeval, "session retrieval on a LongMemEval file")
    lme.add_argument("--data", required=True)
    lme.add_argument("--out", required=True)
    lme.add_argument("--embedder", default="minilm", choices=EMBEDDERS)
    lme.add_argument("--mode", default="hybrid", help="one mode, or several comma-separated "
                     "(e.g. hybrid,vector,bm25: one run each, the embeddings shared)")
    lme.add_argument("--progress", action="store_true", help="show progress when not a TTY")
    lme.add_argument("--chunk-size", type=int, default=CHUNK_SIZE,
                     help="characters; 0 embeds whole")
    lme.add_argument("--rrf-k", default="60", help="hybrid's RRF k; several comma-separated "
                     "run one each")
    lme.add_argument("--vector-weight", type=float, default=1.0,
                     help="hybrid: the vector list's RRF weight (BM25's is 1)")
    lme.add_argument("--recency", default="1", help="hybrid: the time prior's weight for "
                     "queries about the present (0 off); several comma-separated run one each")
    lme.add_argument("--events", default="2", help="hybrid: the event list's weight for "
                     "questions that name an event (0 off; search's default 2); several "
                     "comma-separated run one each")
    for flag, what in (("--event-depth", "drawers a clause's event list ranks"),
                       ("--event-min-cosine", "the cosine an event sentence must reach"),
                       ("--event-penalty", "taken off someone else's event for a "
                                           "first-person question"),
                       ("--event-words", "the weight of a clause's rare words in an event "
                                         "sentence")):
        lme.add_argument(flag, default="", help=f"hybrid: {what} (retrieval.events; "
                         "default: search's); several comma-separated run one each")
    lme.add_argument("--turns", default="user", choices=["user", "all"],
                     help="a session's drawer: its user turns (default) or every turn")
    lme.add_argument("--drawers", default="session", choices=["session", "turn"],
                     help="a drawer per session (default) or per turn, as the chat "
                     "importers store a conversation (a session ranks by its best turn)")
    lme.add_argument("--list-weights", default="equal", choices=["equal", "standout"],
                     help="hybrid: the vector and BM25 lists weighed equally (search's "
                     "default) or by how far each one's best stands out")
    lme.add_argument("--zsum", type=float, default=0.0,
                     help="hybrid: add this times the two lists' z-score sum to the fused "
                     "score (0: search's default, off)")
    lme.add_argument("--fuse", default="rrf", choices=["rrf", "z"],
                     help="hybrid: rank fusion (search's default) or one fusion of z-scores "
                     "(--events and --recency then weigh their lists in standard deviations)")
    lme.add_argument("--pooled", action="store_true",
                     help="one palace of every session in the file, every question asked "
                     "of it (instead of a palace per question of its haystack)")
    lme.add_argument("--rerank", default="none", help="hybrid: re-rankers to measure, "
                     "comma-separated among none, recency, mmr, composite (one run each)")
    lme.add_argument("--half-life", default="1000", help="days, for recency and composite "
                     "(search's default); several comma-separated run one each")
    lme.add_argument("--mmr-lambda", default="0.95", help="MMR's relevance weight in [0, 1] "
                     "(search's default); several comma-separated run one each")
    lme.add_argument("--enrich", default="0.9", help="hybrid: enrichment's alpha (the "
                     "semantic weight; the search operation's default 0.9), comma-separated, "
                     "'none' for plain fused search; one run each")
    abl = add("ablate", _ablate, "fusion, long-drawer and time variants scored on one "
              "embedding pass of a LongMemEval file, by question type")
    abl.add_argument("--data", required=True)
    abl.add_argument("--out", required=True)
    abl.add_argument("--embedder", default="minilm", choices=EMBEDDERS)
    abl.add_argument("--turns", default="all", choices=["user", "all"])
    abl.add_argument("--chunk-size", type=int, default=CHUNK_SIZE, help="characters a chunk")
    abl.add_argument("--overlap", type=int, help="characters chunks share (default: a sixth "
                     "of the chunk, as the palace cuts them)")
    mlt = add("make-longtext", _make_longtext, "LongMemEval file with sessions grouped into "
              "long drawers")
    mlt.add_argument("--data", required=True)
    mlt.add_argument("--out", required=True)
    mlt.add_argument("--group", type=int, default=6, help="sessions a drawer")
    mlc = add("make-longconv", _make_longconv, "generated LongMemEval file of long "
              "multi-session conversations with single-hop, multi-hop and temporal questions")
    mlc.add_argument("--people", type=int, default=5, help="people, 6–8 questions each")
    mlc.add_argument("--seed", type=int, default=0)
    mlc.add_argument("--out", required=True)
    emb = add("embedder", _embedder, "MiniLM in NumPy vs ONNX Runtime fp32 vs int8: load, "
              "bytes, query latency, paragraphs/s at batch 1/8 and 100/256 tokens, int8 "
              "nearest-neighbour agreement and retrieval on a LongMemEval file")
    emb.add_argument("--data", required=True)
    emb.add_argument("--out", required=True)
    emb.add_argument("--embedder", choices=EMBEDDERS, help="instead: the older measurement "
                     "of one embedder (query latency, paragraphs/s on 200 sessions)")
    emb.add_argument("--weights", help="minilm.npz (default: the one `palazzo search` uses, "
                     "fetched on first use)")
    emb.add_argument("--variants", default="numpy,ort-fp32,ort-int8")
    emb.add_argument("--paragraphs", type=int, default=64, help="paragraphs a token length")
    emb.add_argument("--tokens", default="100,256", help="paragraph lengths in word pieces")
    emb.add_argument("--batches", default="1,8")
    emb.add_argument("--queries", type=int, default=50)
    emb.add_argument("--threads", default="1", help="ONNX Runtime threads, e.g. 1,2 (0: a "
                     "thread a core); NumPy's follow OPENBLAS_NUM_THREADS")
    emb.add_argument("--questions", type=int, help="int8 checks on the first N questions")
    emb.add_argument("--no-retrieval", action="store_true", help="skip the search runs")
    emb.add_argument("--int8-out", help="also write the int8 model here")
    emb.add_argument("--progress", action="store_true")
    pf = add("pathfinding", _pathfinding, "Semantic A* on the paper's synthetic palaces "
             "(or, with --palace, on a palace directory, e.g. one bench scale --keep made)")
    pf.add_argument("--out", required=True)
    pf.add_argument("--palace", help="a palace directory to measure instead")
    pf.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    pf.add_argument("--trials", type=int, default=50, help="node pairs a scenario (--palace)")
    pf.add_argument("--queries", type=int, default=100, help="goal queries a kind (--palace)")
    dec = add("decay", _decay, "pheromone decay and cost recomputation throughput")
    dec.add_argument("--sizes", default="100,5000,100000")
    dec.add_argument("--out", required=True)
    lrn = add("learning", _learning, "does retrieval learn from use? repeated workload with "
              "feedback vs held-apart questions")
    lrn.add_argument("--data", required=True)
    lrn.add_argument("--out", required=True)
    lrn.add_argument("--embedder", default="minilm", choices=EMBEDDERS)
    lrn.add_argument("--weights", default="0,0.25,0.5,1,2", help="pheromone term weights")
    lrn.add_argument("--rounds", type=int, default=10)
    lrn.add_argument("--seed", type=int, default=0, help="workload/held-apart split seed")
    lrn.add_argument("--progress", action="store_true")
    sw = add("swarm", _swarm, "swarm soak run: pheromone mass and convergence curve; "
             "--archetypes: what each archetype does on a palace with planted twin rooms")
    sw.add_argument("--agents", type=int, default=5)
    sw.add_argument("--cycles", type=int, default=500)
    sw.add_argument("--seed", type=int, default=0)
    sw.add_argument("--out", required=True)
    sw.add_argument("--archetypes", action="store_true",
                    help="per archetype: coverage, trail use, tunnels, diary entries")
    sw.add_argument("--wings", type=int, default=8)
    sw.add_argument("--rooms", type=int, default=10, help="rooms a wing")
    sw.add_argument("--drawers", type=int, default=10, help="drawers a room")
    sw.add_argument("--twins", type=int, default=8, help="planted pairs of similar rooms")
    sw.add_argument("--per-archetype", type=int, default=3, help="agents a run")
    sw.add_argument("--palace", help="with --archetypes: a palace directory (read only) "
                    "instead of a generated palace")
    sw.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    fz = add("fuzz", _fuzz, "hostile palace files, chat exports and folders: how many get a "
             "clear error, are accepted, raise or hang")
    fz.add_argument("--count", type=int, default=2000, help="inputs, the families taking turns")
    fz.add_argument("--seed", type=int, default=0)
    fz.add_argument("--families", help="comma-separated: palace-document, palace-text, chats, "
                    "folder (default: all)")
    fz.add_argument("--timeout", type=float, default=10.0, help="seconds one input may take")
    fz.add_argument("--out", required=True)
    fz.add_argument("--progress", action="store_true")
    dm = add("damage", _damage, "damaged palace files (flips, cuts, zeroed pages, records "
             "repeated, swapped or removed, stray files): told, whole, silent or traceback")
    dm.add_argument("--count", type=int, default=600, help="cases, the kinds taking turns")
    dm.add_argument("--seed", type=int, default=0)
    dm.add_argument("--cost", action="store_true", help="instead: what it costs on a palace "
                    "imported from a generated export (compaction with read-back, boot, "
                    "check, a rebuild around a damaged page, the previous generation's bytes)")
    dm.add_argument("--messages", type=int, default=20_000, help="with --cost")
    dm.add_argument("--out", required=True)
    thr = add("throughput", _throughput, "insert/search/export/import at several sizes")
    thr.add_argument("--sizes", default="100,1000,5000,100000")
    thr.add_argument("--out", required=True)
    thr.add_argument("--similar", action="store_true", help="also link SIMILAR_TO on insert")
    thr.add_argument("--progress", action="store_true")
    sc = add("scale", _scale, "a generated ChatGPT export of N messages through the CLI: "
             "import, bytes, cold open/status/search, warm search, peak RSS")
    sc.add_argument("--messages", type=int, default=20_000)
    sc.add_argument("--out", required=True)
    sc.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    sc.add_argument("--seed", type=int, default=0)
    sc.add_argument("--queries", type=int, default=50, help="warm queries a search mode")
    sc.add_argument("--import-timeout", type=float, help="seconds; stop a longer import and "
                    "report how far it got")
    sc.add_argument("--workdir", help="where the temporary export and palace go (default: "
                    "the system's temporary folder)")
    sc.add_argument("--keep", action="store_true", help="keep the export and palace")
    sc.add_argument("--progress", action="store_true")
    up = add("upkeep", _upkeep, "dedup, repair and wake-up on a generated palace of N "
             "messages with planted near-duplicates: seconds, planted pairs found")
    up.add_argument("--messages", type=int, default=20_000)
    up.add_argument("--planted", type=int, default=300)
    up.add_argument("--seed", type=int, default=0)
    up.add_argument("--threshold", type=float, help="dedup's cosine (default: its own)")
    up.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    up.add_argument("--out", required=True)
    up.add_argument("--progress", action="store_true")
    st = add("structure", _structure, "palazzo index of a wing of N rooms (a folder of N "
             "subfolders) and of a flat folder of M files: seconds, peak RSS, rooms, edges, "
             "drawers, bytes")
    st.add_argument("--rooms", type=int, default=2_000)
    st.add_argument("--files", type=int, default=5_000)
    st.add_argument("--seed", type=int, default=0)
    st.add_argument("--timeout", type=float, help="seconds; stop a longer index and say so")
    st.add_argument("--workdir", help="where the generated folders and palaces go (default: "
                    "the system's temporary folder)")
    st.add_argument("--keep", action="store_true", help="keep the folders and palaces")
    st.add_argument("--out", required=True)
    st.add_argument("--progress", action="store_true")
    sv = add("serve", _served, "palazzo serve under load: N HTTP clients (80 % search, 20 % "
             "add) for S seconds on a generated palace, the server killed and restarted "
             "halfway (latency, errors, acknowledged writes lost)")
    sv.add_argument("--drawers", type=int, default=20_000)
    sv.add_argument("--seconds", type=float, default=120.0)
    sv.add_argument("--clients", type=int, default=50)
    sv.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    sv.add_argument("--search-share", type=float, default=0.8)
    sv.add_argument("--think", type=float, default=0.0, help="seconds between a client's calls")
    sv.add_argument("--no-kill", action="store_true", help="no kill and restart halfway")
    sv.add_argument("--one-copy", action="store_true", help="palazzo serve --one-copy")
    sv.add_argument("--hold", type=float, default=0.0, metavar="S",
                    help="another holder of the writer lock takes it for S seconds every "
                    "20 s (as another process's import batch would)")
    sv.add_argument("--slow", default="", metavar="OP",
                    help="one more client sends this read back to back (communities: a "
                    "slow one); its latency is reported apart")
    sv.add_argument("--seed", type=int, default=0)
    sv.add_argument("--workdir")
    sv.add_argument("--keep", action="store_true")
    sv.add_argument("--out", required=True)
    hk = add("hooks", _hooks, "assistant hooks on a generated palace: a Claude Code session "
             "grown two turns before each Stop hook, and SessionStart, run as the assistant "
             "runs them (wall time with process start; messages lost or twice)")
    hk.add_argument("--drawers", type=int, default=20_000)
    hk.add_argument("--rounds", type=int, default=30)
    hk.add_argument("--turns", type=int, default=48, help="turns the session starts with")
    hk.add_argument("--no-server", action="store_true",
                    help="no palazzo serve: each hook opens the palace's files")
    hk.add_argument("--writer", action="store_true",
                    help="an MCP server writes notes to the palace while the hooks run")
    hk.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    hk.add_argument("--seed", type=int, default=0)
    hk.add_argument("--workdir")
    hk.add_argument("--keep", action="store_true")
    hk.add_argument("--out", required=True)
    wr = add("writers", _writers, "many writers on one palace: two MCP servers, the command "
             "line and an importer writing at once for N seconds (latency, writes that "
             "followed another's, refused, lost, duplicated, read-your-writes)")
    wr.add_argument("--drawers", type=int, default=20_000, help="messages of the palace's "
                    "generated export")
    wr.add_argument("--seconds", type=float, default=120.0)
    wr.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    wr.add_argument("--seed", type=int, default=0)
    wr.add_argument("--workdir", help="where the export and palace go (default: the system's "
                    "temporary folder)")
    wr.add_argument("--keep", action="store_true", help="keep the export and palace")
    wr.add_argument("--out", required=True)
    jr = add("journal", _journal, "record size, boot, refusal and reload with exact replay")
    jr.add_argument("--size", type=int, default=20_000)
    jr.add_argument("--records", type=int, default=200)
    jr.add_argument("--out", default="bench-results/journal.json")
    ci = add("chat-import", _chat_import, "a generated heavy user's chat export through "
             "palazzo import-chats: keyword-searchable and embedded seconds, CPU, vectors "
             "made, and what a kill during embedding loses")
    ci.add_argument("--messages", type=int, default=2688)
    ci.add_argument("--seed", type=int, default=0)
    ci.add_argument("--embedder", default="minilm", choices=EMBEDDERS)
    ci.add_argument("--kill-at", type=float, default=None, help="also kill a second import "
                    "this many seconds into its embedding, then finish it with reindex")
    ci.add_argument("--workdir", default=None)
    ci.add_argument("--keep", action="store_true")
    ci.add_argument("--out", required=True)
    ex = add("extraction", _extraction, "entity and fact extraction: precision/recall/F1 on "
             "a hand-labelled set, characters/s on the long-conversation set")
    ex.add_argument("--data", default="tests/palazzo/data/extraction_labelled.json")
    ex.add_argument("--speed-data", default=None, help="LongMemEval-shaped file to time "
                    "(default: tests/palazzo/data/longconv_dev.json)")
    ex.add_argument("--repeat", type=int, default=3, help="timed passes; the best counts")
    ex.add_argument("--out", required=True)
    lg = add("languages", _languages, "non-English queries on a palace of real "
             "mixed-language text (the UDHR in eight languages): hit@1, R@5, MRR per "
             "language, BM25 alone vs the default search")
    lg.add_argument("--data", default=None, help="the set (default: "
                    "tests/palazzo/data/mixed_language.json)")
    lg.add_argument("--embedder", default="minilm", choices=EMBEDDERS)
    lg.add_argument("--languages", help="comma-separated, e.g. ko,ja,de (default: all)")
    lg.add_argument("--per-language", type=int, help="the first N queries of each language")
    lg.add_argument("--out", required=True)
    lg.add_argument("--progress", action="store_true")
    at = add("atlas", _atlas, "the provenance atlas on a generated history of N messages: "
             "batch vs one-by-one slicing, overlap, bridges, betweenness, budgeted slices")
    at.add_argument("--messages", type=int, default=3000)
    at.add_argument("--anchors", default="50,200", help="anchor counts, comma-separated")
    at.add_argument("--budget", type=int, default=2000, help="tokens a budgeted slice")
    at.add_argument("--seed", type=int, default=0)
    at.add_argument("--repeat", type=int, default=3, help="timed runs; the best counts")
    at.add_argument("--out", required=True)
    cm = add("communities", _communities, "Louvain communities of a generated palace of N "
             "messages: k-NN, graph, Louvain and naming seconds, peak memory, agreement "
             "with the generator's conversations and languages")
    cm.add_argument("--messages", type=int, default=20_000)
    cm.add_argument("--embedder", default="hash", choices=EMBEDDERS)
    cm.add_argument("--seed", type=int, default=0, help="the generator's seed")
    for flag, name in (("--k", "k"), ("--min-cosine", "min_cosine"),
                       ("--entity-weight", "entity_weight"), ("--resolution", "resolution")):
        cm.add_argument(flag, help=f"{name}, comma-separated values run one each (every "
                        "combination; default: the engine's)")
    cm.add_argument("--no-memory", action="store_true", help="skip the tracemalloc run")
    cm.add_argument("--out", required=True)
    cm.add_argument("--progress", action="store_true")
    return parser


def run(args: argparse.Namespace, make_embedder: MakeEmbedder, progress: MakeProgress) -> int:
    """Run the benchmark ``args`` names (parsed by a parser :func:`add_parsers` built) with
    the host's ``make_embedder`` and ``progress``; return the exit code (0). Its errors
    (:class:`~palazzo.errors.PalazzoError`, ``OSError``) are the host's to report. Cost: the
    benchmark's own, from seconds to hours."""
    return args.bench_fn(args, make_embedder, progress)


def _longmemeval(args: argparse.Namespace, make_embedder: MakeEmbedder,
                 progress: MakeProgress) -> int:
    from palazzo.bench import longmemeval

    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    embedder = None if modes == ["bm25"] else make_embedder(args.embedder)
    ks = [int(k) for k in str(args.rrf_k).split(",") if k.strip()]
    ws = [float(w) for w in str(args.recency).split(",") if w.strip()]
    reranks = longmemeval.rerank_plans(
        [r.strip() for r in args.rerank.split(",") if r.strip()],
        [float(h) for h in str(args.half_life).split(",") if h.strip()],
        [float(m) for m in str(args.mmr_lambda).split(",") if m.strip()])
    enrich = [{} if a.strip() == "none" else {"enrich_alpha": float(a)}
              for a in str(args.enrich).split(",") if a.strip()]
    events = [{"events": float(e)} for e in str(args.events).split(",") if e.strip()]
    for key, values in (("depth", args.event_depth), ("min_cosine", args.event_min_cosine),
                        ("other_penalty", args.event_penalty),
                        ("words", args.event_words)):
        if str(values).strip():
            events = [{**ev, "event_tuning": {**ev.get("event_tuning", {}), key: float(v)}}
                      for ev in events for v in str(values).split(",") if v.strip()]
    reranks = [{**rr, **en, **ev} for rr in reranks for en in enrich for ev in events]
    plans = [(mode, k, w, rr) for mode in modes
             for k in (ks if mode == "hybrid" else [ks[0]])
             for w in (ws if mode == "hybrid" else [ws[0]])
             for rr in (reranks if mode == "hybrid" else [{}])]
    palaces: dict = {}  # each haystack's palace, built once for every setting
    runs = [longmemeval.run(Path(args.data), None if mode == "bm25" else embedder, mode,
                            progress=progress(f"questions ({mode})", args.progress),
                            chunk_size=args.chunk_size or None, turns=args.turns,
                            drawers=args.drawers, pooled=args.pooled, palaces=palaces,
                            fusion={"rrf_k": k, "vector_weight": args.vector_weight,
                                    "recency": w, **rr,
                                    **({"list_weights": args.list_weights}
                                       if args.list_weights != "equal" else {}),
                                    **({"zsum": args.zsum} if args.zsum else {}),
                                    **({"fuse": args.fuse} if args.fuse != "rrf" else {})}
                            if mode == "hybrid" else None)
            for mode, k, w, rr in plans]
    _write(args.out, runs[0] if len(runs) == 1 else {"benchmark": "longmemeval",
                                                       "runs": runs})
    print(longmemeval.table(runs))
    return 0


def _ablate(args: argparse.Namespace, make_embedder: MakeEmbedder,
            progress: MakeProgress) -> int:
    from palazzo.bench import ablation

    result = ablation.run(Path(args.data), make_embedder(args.embedder), args.turns,
                          size=args.chunk_size, overlap=args.overlap)
    _write(args.out, result)
    print(ablation.table(result))
    print()
    print(ablation.below_table(result, ["bm25", "hybrid+recency"]))
    return 0


def _make_longtext(args: argparse.Namespace, make_embedder: MakeEmbedder,
                   progress: MakeProgress) -> int:
    from palazzo.bench import longmemeval, longtext

    questions = longtext.make(longmemeval.load(Path(args.data)), args.group)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(questions), encoding="utf-8")
    print(f"{len(questions)} questions written to {out}", file=sys.stderr)
    return 0


def _make_longconv(args: argparse.Namespace, make_embedder: MakeEmbedder,
                   progress: MakeProgress) -> int:
    from palazzo.bench import convgen

    questions = convgen.make(args.people, args.seed)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(questions), encoding="utf-8")
    print(f"{len(questions)} questions written to {out}", file=sys.stderr)
    return 0


def _throughput(args: argparse.Namespace, make_embedder: MakeEmbedder,
                progress: MakeProgress) -> int:
    from palazzo.bench import throughput

    sizes = [int(s) for s in args.sizes.split(",")]
    result = throughput.run(sizes, similar=args.similar,
                            progress=progress("sizes", args.progress))
    _write(args.out, result)
    for r in result["results"]:
        print(json.dumps(r))
    return 0


def _upkeep(args: argparse.Namespace, make_embedder: MakeEmbedder,
            progress: MakeProgress) -> int:
    from palazzo.bench import upkeep

    result = upkeep.run(args.messages, make_embedder(args.embedder), seed=args.seed,
                        planted=args.planted, threshold=args.threshold,
                        progress=progress("drawers", args.progress))
    _write(args.out, result)
    print(json.dumps(result, indent=1, ensure_ascii=False))
    return 0


def _scale(args: argparse.Namespace, make_embedder: MakeEmbedder,
           progress: MakeProgress) -> int:
    from palazzo.bench import scale

    result = scale.run(args.messages, args.embedder, make_embedder(args.embedder),
                       seed=args.seed, queries=args.queries, import_timeout=args.import_timeout,
                       workdir=Path(args.workdir) if args.workdir else None, keep=args.keep,
                       progress=progress("steps", args.progress))
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1,
                     ensure_ascii=False))
    return 0


def _structure(args: argparse.Namespace, make_embedder: MakeEmbedder,
               progress: MakeProgress) -> int:
    from palazzo.bench import structure

    result = structure.run(args.rooms, args.files, seed=args.seed, timeout=args.timeout,
                           workdir=Path(args.workdir) if args.workdir else None,
                           keep=args.keep, progress=progress("cases", args.progress))
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    return 0


def _served(args: argparse.Namespace, make_embedder: MakeEmbedder,
            progress: MakeProgress) -> int:
    from palazzo.bench import served

    result = served.run(args.drawers, args.seconds, args.clients, args.embedder,
                        search_share=args.search_share, think=args.think,
                        kill=not args.no_kill, seed=args.seed,
                        workdir=Path(args.workdir) if args.workdir else None, keep=args.keep,
                        one_copy=args.one_copy, hold=args.hold, slow=args.slow)
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    return 0


def _hooks(args: argparse.Namespace, make_embedder: MakeEmbedder,
           progress: MakeProgress) -> int:
    from palazzo.bench import hooks

    result = hooks.run(args.drawers, args.rounds, args.turns, served=not args.no_server,
                       embedder=args.embedder, seed=args.seed,
                       workdir=Path(args.workdir) if args.workdir else None, keep=args.keep,
                       writer=args.writer)
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    return 0


def _writers(args: argparse.Namespace, make_embedder: MakeEmbedder,
             progress: MakeProgress) -> int:
    from palazzo.bench import writers

    result = writers.run(args.drawers, args.seconds, args.embedder, seed=args.seed,
                         workdir=Path(args.workdir) if args.workdir else None, keep=args.keep)
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    return 0


def _journal(args: argparse.Namespace, make_embedder: MakeEmbedder,
             progress: MakeProgress) -> int:
    from palazzo.bench import journal

    result = journal.run(args.size, args.records)
    _write(args.out, result)
    print(json.dumps(result["result"]))
    return 0


def _embedder(args: argparse.Namespace, make_embedder: MakeEmbedder,
              progress: MakeProgress) -> int:
    from palazzo.bench import embedder
    from palazzo.embed.minilm import find_weights
    from palazzo.errors import PalazzoError
    from palazzo.hosts.model import ensure_weights

    if args.embedder:
        result = embedder.run(Path(args.data), make_embedder(args.embedder))
        _write(args.out, result)
        print(json.dumps(result, indent=1))
        return 0
    if args.weights is not None:
        weights = find_weights(args.weights)
        if weights is None:
            raise PalazzoError(f"MiniLM weights: {args.weights} is not a file")
    else:
        weights = ensure_weights()  # as `palazzo search` finds (or fetches) them

    def ints(text: str) -> list[int]:
        return [int(x) for x in text.split(",") if x.strip()]

    def say(msg: str) -> None:
        if args.progress or sys.stderr.isatty():
            print(f"bench embedder: {msg}", file=sys.stderr, flush=True)

    result = embedder.compare(
        Path(args.data), Path(weights), [v.strip() for v in args.variants.split(",")],
        paragraphs=args.paragraphs, tokens=ints(args.tokens), batches=ints(args.batches),
        queries=args.queries, threads=ints(args.threads), questions=args.questions,
        retrieval=not args.no_retrieval, int8_out=Path(args.int8_out) if args.int8_out else None,
        progress=say)
    _write(args.out, result)
    print(embedder.summary(result))
    return 0


def _pathfinding(args: argparse.Namespace, make_embedder: MakeEmbedder,
                 progress: MakeProgress) -> int:
    from palazzo.bench import pathfinding

    if args.palace:
        result = pathfinding.run_palace(Path(args.palace), make_embedder(args.embedder),
                                        args.trials, args.queries)
    else:
        result = pathfinding.run()
    _write(args.out, result)
    print(json.dumps(result, indent=1)[:4000])
    return 0


def _decay(args: argparse.Namespace, make_embedder: MakeEmbedder,
           progress: MakeProgress) -> int:
    from palazzo.bench import stigmergy

    sizes = tuple(int(s) for s in args.sizes.split(","))
    result = stigmergy.run(sizes)
    _write(args.out, result)
    print(json.dumps(result, indent=1))
    return 0


def _learning(args: argparse.Namespace, make_embedder: MakeEmbedder,
              progress: MakeProgress) -> int:
    from palazzo.bench import learning

    weights = [float(w) for w in args.weights.split(",")]
    embedder = make_embedder(args.embedder)
    result = learning.run(Path(args.data), embedder, weights, rounds=args.rounds,
                          seed=args.seed, progress=progress("weights", args.progress))
    _write(args.out, result)
    for row in result["table"]:
        print(json.dumps(row))
    return 0


def _swarm(args: argparse.Namespace, make_embedder: MakeEmbedder,
           progress: MakeProgress) -> int:
    from palazzo.bench import swarm

    if args.archetypes:
        result = swarm.run_archetypes(
            args.wings, args.rooms, args.drawers, args.twins, cycles=args.cycles,
            per_archetype=args.per_archetype, seed=args.seed,
            palace_dir=Path(args.palace) if args.palace else None,
            embedder=make_embedder(args.embedder) if args.palace else None)
        _write(args.out, result)
        print(json.dumps(result, indent=1))
        return 0
    result = swarm.run(agents=args.agents, cycles=args.cycles, seed=args.seed)
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k not in ("curve", "summary")},
                     indent=1))
    return 0


def _fuzz(args: argparse.Namespace, make_embedder: MakeEmbedder,
          progress: MakeProgress) -> int:
    from palazzo.bench import fuzz

    families = tuple(args.families.split(",")) if args.families else fuzz.FAMILIES
    result = fuzz.run(args.count, seed=args.seed, families=families, timeout=args.timeout,
                      progress=progress("inputs", args.progress))
    _write(args.out, result)
    print(json.dumps({"totals": result["totals"], "families": result["families"]}, indent=1))
    return 0


def _damage(args: argparse.Namespace, make_embedder: MakeEmbedder,
            progress: MakeProgress) -> int:
    from palazzo.bench import damage

    if args.cost:
        result = damage.cost(args.messages)
        _write(args.out, result)
        print(json.dumps(result, indent=1))
        return 0
    result = damage.run(args.count, seed=args.seed).to_dict()
    _write(args.out, result)
    print(json.dumps({k: result[k] for k in ("count", "outcomes", "lost", "seconds")} |
                     {"failures": len(result["failures"])}, indent=1))
    return 0 if not result["failures"] else 1


def _atlas(args: argparse.Namespace, make_embedder: MakeEmbedder,
           progress: MakeProgress) -> int:
    from palazzo.bench import atlas

    result = atlas.run(args.messages, tuple(int(n) for n in args.anchors.split(",")),
                       seed=args.seed, budget=args.budget, repeat=args.repeat)
    _write(args.out, result)
    print(json.dumps({k: v for k, v in result.items() if k != "machine"}, indent=1))
    return 0


def _chat_import(args: argparse.Namespace, make_embedder: MakeEmbedder,
                 progress: MakeProgress) -> int:
    from palazzo.bench import chatimport

    result = chatimport.run(args.messages, args.embedder, seed=args.seed, kill_at=args.kill_at,
                            workdir=Path(args.workdir) if args.workdir else None,
                            keep=args.keep)
    _write(args.out, result)
    print(chatimport.table(result))
    return 0 if result["import"]["exit"] == 0 else 1


def _extraction(args: argparse.Namespace, make_embedder: MakeEmbedder,
                progress: MakeProgress) -> int:
    from palazzo.bench import extraction

    result = extraction.run(Path(args.data), speed_data=Path(args.speed_data)
                            if args.speed_data else extraction.SPEED_DATA, repeat=args.repeat)
    _write(args.out, result)
    print(extraction.table(result))
    return 0


def _languages(args: argparse.Namespace, make_embedder: MakeEmbedder,
               progress: MakeProgress) -> int:
    from palazzo.bench import languages

    result = languages.run(
        Path(args.data) if args.data else languages.DATA, make_embedder(args.embedder),
        languages=[x.strip() for x in args.languages.split(",") if x.strip()]
        if args.languages else None, per_language=args.per_language,
        progress=progress("queries", args.progress))
    _write(args.out, result)
    print(languages.table(result))
    return 0


def _communities(args: argparse.Namespace, make_embedder: MakeEmbedder,
                 progress: MakeProgress) -> int:
    from itertools import product

    from palazzo.bench import communities
    from palazzo.memory.communities import Settings

    base = Settings()

    def values(text: str | None, default: Any, kind: type) -> list[Any]:
        return [kind(v) for v in text.split(",") if v.strip()] if text else [default]

    settings = [Settings(k, c, e, r) for k, c, e, r in product(
        values(args.k, base.k, int), values(args.min_cosine, base.min_cosine, float),
        values(args.entity_weight, base.entity_weight, float),
        values(args.resolution, base.resolution, float))]
    result = communities.run(args.messages, make_embedder(args.embedder), settings,
                             seed=args.seed, memory=not args.no_memory,
                             progress=progress("drawers", args.progress))
    _write(args.out, result)
    print(communities.table(result))
    return 0


def _write(path: str, result: dict[str, Any]) -> None:
    """Write ``result`` as indented JSON to ``path`` (creating its folder) and say where on
    stderr."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"written to {out}", file=sys.stderr)
