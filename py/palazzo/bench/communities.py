"""``palazzo bench communities``: Louvain communities of a generated palace of real size.

The drawers are the messages of :func:`palazzo.bench.exportgen.make_export` (the scale
benchmark's generator), one room a conversation, twelve wings taking the conversations in
turn, added through ``batch`` (embedded, linked and extracted as an import would). Then
:func:`palazzo.memory.communities.detect` runs once a setting asked for, timed step by step
(k-NN, graph, Louvain, naming), and once more under ``tracemalloc`` for its peak memory.

The generator knows two truths the communities can be held against. Each conversation has a
topic (four words of its language's list and two names or products, about one word in
seven) and a language (six of them, each with its own word list): so a good partition keeps
a conversation together (**conversation completeness**: the share of drawers in their
conversation's commonest community; **NMI** and **adjusted Rand** against the conversations)
and never mixes languages (**language purity**: the share of drawers whose community's
commonest language is theirs). The language of a conversation is read back from its words.
Wings are assigned in turn, so they carry no signal. Modularity is the partition's own.

Big palaces are not the only ones: each setting also runs on thirty small palaces of four
planted topics (:func:`planted`), where a topic of a few drawers must not fall apart.
"""

from __future__ import annotations

import random
import time
import tracemalloc
from typing import Any

import numpy as np

from palazzo.bench.exportgen import WORDS, conversation_texts
from palazzo.core.model import drawer_id
from palazzo.memory.communities import Settings, detect
from palazzo.ops import call
from palazzo.palace import Palace

BATCH = 1000
KANA = range(0x3040, 0x3100)
PLANTED_DRAWS = 30
# Small palaces with known topics (planted): each topic's words, and words of none.
PLANTED = {topic: words.split(" ") for topic, words in {
    "garden": "roses tulips soil compost pruning seeds watering mulch bloom hedges",
    "database": "postgres replication query vacuum schema migration replica lag index",
    "music": "guitar piano chords melody rhythm tempo scales song practice concert",
    "travel": "flight hotel passport luggage train ticket museum beach visa airport",
}.items()}
FILLER = ["today", "really", "thing", "maybe", "think", "good", "went", "also", "quite", "still"]


def _language(texts: list[str], vocab: dict[str, set[str]]) -> str:
    """Return the generator language whose word list most of ``texts``' words are in."""
    sample = " ".join(texts)[:5000]
    if any(ord(ch) in KANA for ch in sample):
        return "ja"
    words = sample.lower().split()
    return max(sorted(vocab), key=lambda lang: sum(w.strip(".?!,") in vocab[lang]
                                                   for w in words))


def messages(count: int, seed: int) -> list[tuple[str, str, str, float, str]]:
    """Return (wing, room, text, time, language) of each generated message with text."""
    vocab = {lang: {w.lower() for w in words.split()} for lang, words in WORDS.items()
             if lang != "ja"}
    out = []
    for mine in conversation_texts(count, seed):
        lang = _language([m[2] for m in mine], vocab)
        out += [(*m, lang) for m in mine]
    return out


def build(count: int, embedder: Any, seed: int = 0,
          progress: Any = None) -> tuple[Palace, list[str], list[str], float]:
    """Return (the palace of ``count`` generated messages, each drawer's conversation and
    language in store-row order, seconds to build)."""
    rows = messages(count, seed)
    palace = Palace(embedder=embedder)
    t = time.perf_counter()
    for lo in range(0, len(rows), BATCH):
        call(palace, "batch", {"calls": [
            {"name": "add_drawer", "args": {"wing": w, "room": r, "content": text,
                                            "created_at": when}}
            for w, r, text, when, _ in rows[lo:lo + BATCH]]})
        if progress:
            progress(min(lo + BATCH, len(rows)), len(rows))
    built = time.perf_counter() - t
    store = palace.drawers
    conv = [""] * store.size
    lang = [""] * store.size
    for w, r, text, _, language in rows:
        row = store.row_of.get(drawer_id(text, w, r))
        if row is not None:
            conv[row], lang[row] = r, language
    return palace, conv, lang, built


def _codes(values: list[str]) -> np.ndarray:
    return np.unique(np.array(values, dtype=object), return_inverse=True)[1]


def _comb2(x: np.ndarray) -> float:
    x = x.astype(np.float64)
    return float((x * (x - 1) / 2).sum())


def agreement(labels: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Return NMI (arithmetic mean), adjusted Rand, completeness (share of items in their
    true class's commonest label) and purity (share in their label's commonest class) of
    ``labels`` against ``truth`` (both non-negative ints). Cost: O(n + labels × classes)."""
    n = len(labels)
    _, a = np.unique(labels, return_inverse=True)
    _, b = np.unique(truth, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1), dtype=np.int64)
    np.add.at(table, (a, b), 1)
    rows, cols = table.sum(axis=1), table.sum(axis=0)
    index = _comb2(table)
    expected = _comb2(rows) * _comb2(cols) / (n * (n - 1) / 2)
    top = (_comb2(rows) + _comb2(cols)) / 2
    ari = (index - expected) / (top - expected) if top != expected else 1.0
    p = table / n
    pa, pb = rows / n, cols / n
    nz = p > 0
    mi = float((p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz])).sum())
    ha = -float((pa[pa > 0] * np.log(pa[pa > 0])).sum())
    hb = -float((pb[pb > 0] * np.log(pb[pb > 0])).sum())
    nmi = mi / ((ha + hb) / 2) if ha + hb > 0 else 1.0
    return {"nmi": round(nmi, 4), "ari": round(ari, 4),
            "completeness": round(float(table.max(axis=0).sum()) / n, 4),
            "purity": round(float(table.max(axis=1).sum()) / n, 4)}


def measure(palace: Palace, conv: list[str], lang: list[str], settings: Settings,
            memory: bool = True) -> dict[str, Any]:
    """Return one setting's figures: step seconds, communities and their sizes, modularity,
    agreement with the conversations and languages, and (``memory``) the peak bytes
    ``detect`` allocated (a second run under ``tracemalloc``)."""
    t = time.perf_counter()
    found = detect(palace, settings)
    total = time.perf_counter() - t
    live = palace.drawers.live_rows()
    labels = found.labels[live]
    sizes = np.array([c.size for c in found.communities])
    by_conv = agreement(labels, _codes([conv[r] for r in live.tolist()]))
    by_lang = agreement(labels, _codes([lang[r] for r in live.tolist()]))
    out: dict[str, Any] = {
        "settings": {"k": settings.k, "min_cosine": settings.min_cosine,
                     "entity_weight": settings.entity_weight,
                     "resolution": settings.resolution, "seed": settings.seed},
        "similarity": found.similarity, "links": found.links,
        "seconds": {**found.seconds, "total": round(total, 3)},
        "communities": len(sizes), "singletons": int((sizes == 1).sum()),
        "largest": int(sizes.max()) if len(sizes) else 0,
        "median_size_of_non_singletons": float(np.median(sizes[sizes > 1]))
        if (sizes > 1).any() else 0.0,
        "modularity": round(found.modularity, 4),
        "conversations": by_conv, "language_purity": by_lang["purity"],
        "examples": [{"name": c.name, "size": c.size, "entities": c.entities[:3]}
                     for c in found.communities[:8]],
    }
    if memory:
        tracemalloc.start()
        detect(palace, settings)
        out["peak_mb"] = round(tracemalloc.get_traced_memory()[1] / 2**20, 1)
        tracemalloc.stop()
    return out


def planted(embedder: Any, settings: Settings, draws: int = PLANTED_DRAWS,
            seed: int = 0) -> dict[str, Any]:
    """Return how well ``settings`` find the topics of small palaces: ``draws`` palaces of
    the four :data:`PLANTED` topics, 5–40 drawers each, each drawer 8–30 words of which a
    share of 0.3–0.6 are its topic's and the rest :data:`FILLER`. Gives how many palaces
    came out as exactly their topics and the mean NMI against the topics."""
    exact, nmi = 0, []
    for draw in range(draws):
        rng = random.Random(seed * 1000 + draw)
        palace = Palace(embedder=embedder, clock=lambda: 1.0)
        topic: dict[str, int] = {}
        for t, words in enumerate(PLANTED.values()):
            for i in range(rng.randint(5, 40)):
                share = rng.uniform(0.3, 0.6)
                text = " ".join(rng.choice(words) if rng.random() < share else
                                rng.choice(FILLER) for _ in range(rng.randint(8, 30)))
                did, _ = palace.add_drawer(f"w{i % 2}", f"r{i % 3}", text)
                topic[did] = t
        found = detect(palace, settings)
        live = palace.drawers.live_rows()
        truth = np.array([topic[palace.drawers.ids[r]] for r in live.tolist()])
        figures = agreement(found.labels[live], truth)
        exact += figures["ari"] == 1.0
        nmi.append(figures["nmi"])
    return {"draws": draws, "exact": exact, "nmi": round(float(np.mean(nmi)), 4)}


def run(count: int, embedder: Any, settings: list[Settings], *, seed: int = 0,
        memory: bool = True, progress: Any = None) -> dict[str, Any]:
    """Return the benchmark's result for a palace of ``count`` generated messages, one entry
    in ``runs`` a setting (see the module docstring), each with its :func:`planted`
    figures."""
    palace, conv, lang, built = build(count, embedder, seed, progress)
    counts = palace.counts()
    runs = [{**measure(palace, conv, lang, s, memory), "planted": planted(embedder, s)}
            for s in settings]
    return {"benchmark": "communities", "messages": count, "seed": seed,
            "embedder": getattr(embedder, "name", None), "build_s": round(built, 2),
            "drawers": counts["drawers"], "entities": counts["entities"],
            "conversations": len({c for c in conv if c}),
            "languages": sorted({x for x in lang if x}), "runs": runs}


def table(result: dict[str, Any]) -> str:
    """Return one line a run: settings, seconds, communities, quality."""
    lines = [f"{result['drawers']} drawers, {result['conversations']} conversations, "
             f"built in {result['build_s']} s"]
    lines.append(" k  cos   ent  res | knn   graph louvain name  | comms single mod   "
                 "| conv: compl  nmi   ari  | lang pur | planted exact nmi | peak MB")
    for r in result["runs"]:
        s, t, c = r["settings"], r["seconds"], r["conversations"]
        lines.append(
            f"{s['k']:2} {s['min_cosine']:.2f} {s['entity_weight']:.2f} {s['resolution']:4.2f}"
            f" | {t['knn']:5.2f} {t['graph']:5.2f} {t['louvain']:6.2f} {t['naming']:5.2f} "
            f"| {r['communities']:5} {r['singletons']:6} {r['modularity']:.3f} "
            f"| {c['completeness']:.3f} {c['nmi']:.3f} {c['ari']:.3f} "
            f"| {r['language_purity']:.3f}    | {r['planted']['exact']:2}/{r['planted']['draws']}"
            f" {r['planted']['nmi']:.3f}    | {r.get('peak_mb', '-')}")
    return "\n".join(lines)
