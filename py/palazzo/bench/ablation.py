"""Fusion and long-drawer ablations on a LongMemEval file: many scorings, one embedding pass.

``palazzo bench longmemeval`` runs the engine's search, one palace per question, so each
variant costs a full run. This benchmark embeds each distinct text once (the question, every
session's chunks cut as the palace cuts them: :func:`palazzo.core.chunking.spans`, 500
characters sharing a sixth), builds BM25 over sessions and over chunks with the engine's own
:class:`BM25Index`, and then scores every variant of :data:`VARIANTS` from those arrays, by
session, with LongMemEval's metrics per question type. Variant ``hybrid`` is the engine's
hybrid without the time prior and ``hybrid+recency`` the engine's default (the same figures
as ``bench longmemeval``); the others are the ideas of issue 17 measured against them:

- long drawers: BM25 over chunks with a drawer scored by its best chunk, the mean of its
  best two, or a soft maximum; the vector side by its best two chunks; RRF of chunk-level
  lists; three lists (vector, session BM25, chunk BM25);
- fusion: fixed vector weights, z-score sums, a query-dependent vector weight from the two
  lists' agreement in their top 5;
- time: a stronger recency prior (RRF constant 5 instead of 60);
- feedback: RM3-style pseudo-relevance feedback on BM25;
- scores instead of ranks: z-score and min-max sums, RRF plus a small z-score sum;
- words: BM25 over words as written (no stemming, palazzo before issue 17), the Porter
  stemmer, and Harman's S-stemmer (plurals only) instead of Snowball English;
- the vector list against BM25 on real conversations (issue 32): the vector query without
  the words nearly every session holds (:func:`without_common`, a two-person conversation's
  names), and each list weighted by how far its best score stands out (:func:`standout`),
  over the whole haystack or over the list's fused candidates only; z-score sums with BM25
  over chunks, alone or added to RRF (:func:`_zsum_chunks`).

:func:`below` and :func:`below_table` name the cells (question type × R@5 any, R@5 all,
NDCG@10) where a variant falls below a reference: issue 32's rule for a new default is that
none falls below the old default nor BM25 alone, on every set.

Cost: one embedding of every distinct chunk (MiniLM: about 2 minutes for the 25-person
generated set on 2 cores), then well under a second per variant.
"""

from __future__ import annotations

import functools
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from palazzo.bench import longmemeval
from palazzo.bench.metrics import by_category, summarise
from palazzo.core.chunking import spans
from palazzo.core.model import CHUNK_SIZE
from palazzo.retrieval import fusion, recency
from palazzo.retrieval.bm25 import BM25Index, Tokenizer, tokenize

DEPTH = 50  # search's list depth (MIN_DEPTH) for the lists it fuses
K = 60


@dataclass(slots=True)
class Question:
    """One question's arrays: per session (``n``) and per chunk (``chunk_of`` maps a chunk
    to its session)."""

    qid: str
    qtype: str | None
    text: str
    sids: list[str]
    gold: set[str]
    times: np.ndarray  # per session, epoch seconds (NaN when undated)
    bm: np.ndarray  # BM25 of each session
    cbm: np.ndarray  # BM25 of each chunk (statistics over chunks)
    ccos: np.ndarray  # cosine of each chunk to the question
    chunk_of: np.ndarray
    bm_words: dict[str, np.ndarray] = field(default_factory=dict)  # BM25 by WORDS tokenizer
    texts: list[str] = field(default_factory=list)  # the sessions' texts (for feedback)
    # cosine of each chunk to the question without its common words (None: it has none)
    ccos_rare: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.sids)


def prepare(path: Path, embedder, turns: str = "all", size: int = CHUNK_SIZE,
            overlap: int | None = None) -> list[Question]:
    """Return the questions of ``path`` with every array the variants read. Cost: one
    ``embedder.embed`` over the distinct question and chunk texts (batches of 64) and BM25
    indexes per question. ``overlap`` None is the palace's: a sixth of ``size``."""
    data = longmemeval.load(path)
    rows = []
    distinct: dict[str, int] = {}
    for q in data:
        texts, sids, times = [], [], []
        dates = q.get("haystack_dates") or [None] * len(q["haystack_sessions"])
        for sid, s, d in zip(q["haystack_session_ids"], q["haystack_sessions"], dates,
                             strict=True):
            t = longmemeval.session_text(s, turns)
            if t.strip():
                texts.append(t)
                sids.append(sid)
                when = longmemeval.session_time(d)
                times.append(math.nan if when is None else when)
        chunks, chunk_of = [], []
        for i, t in enumerate(texts):
            for a, b in spans(t, size, overlap):
                chunks.append(t[a:b])
                chunk_of.append(i)
        rare = without_common(q["question"], texts)
        for t in [q["question"], rare, *chunks]:
            distinct.setdefault(t, len(distinct))
        rows.append((q, texts, sids, times, chunks, chunk_of, rare))
    order = list(distinct)
    vectors = np.concatenate([np.asarray(embedder.embed(order[i:i + 64]), dtype=np.float32)
                              for i in range(0, len(order), 64)]) if order else None
    out = []
    for q, texts, sids, times, chunks, chunk_of, rare in rows:
        qv = vectors[distinct[q["question"]]]
        rv = vectors[distinct[rare]]
        cv = vectors[[distinct[c] for c in chunks]] if chunks else np.zeros((0, len(qv)))
        out.append(Question(
            qid=q["question_id"], qtype=q.get("question_type"), text=q["question"],
            sids=sids, gold=set(q["answer_session_ids"]), times=np.array(times),
            bm=_bm25(texts, q["question"]), cbm=_bm25(chunks, q["question"]),
            ccos=(cv @ qv).astype(np.float64), chunk_of=np.array(chunk_of, dtype=np.intp),
            bm_words={name: _bm25(texts, q["question"], tok) for name, tok in WORDS.items()},
            texts=texts,
            ccos_rare=None if rare == q["question"] else (cv @ rv).astype(np.float64)))
    return out


COMMON = 0.9  # a word this share of the sessions holds is "common"


def without_common(question: str, texts: Sequence[str], share: float = COMMON) -> str:
    """Return ``question`` without the words whose every term (palazzo's BM25 tokenizer)
    occurs in more than ``share`` of ``texts``: in a conversation of two people, their
    names. Why: MiniLM weighs a name heavily, and a name every session holds tells the
    sessions apart not at all. Cost: tokenizing every text once."""
    tok = Tokenizer()
    df: dict[str, int] = {}
    for t in texts:
        for term in set(tok(t)):
            df[term] = df.get(term, 0) + 1
    n = len(texts) or 1
    kept = []
    for word in re.findall(r"\w+|\W+", question):
        terms = tok(word) if word[:1].isalnum() else []
        if terms and all(df.get(term, 0) / n > share for term in terms):
            continue
        kept.append(word)
    return "".join(kept)


def _s_stem(term: str) -> str:
    """Harman's S-stemmer: plurals only (-ies -> -y, -es -> -e, -s -> '')."""
    if len(term) > 3 and term.endswith("ies") and not term.endswith(("eies", "aies")):
        return term[:-3] + "y"
    if len(term) > 3 and term.endswith("es") and not term.endswith(("aes", "ees", "oes")):
        return term[:-1]
    if len(term) > 3 and term.endswith("s") and not term.endswith(("us", "ss")):
        return term[:-1]
    return term


class _Stemmed:
    """A BM25 tokenizer with another stemmer (for the comparison only)."""

    def __init__(self, stem: Callable[[str], str]) -> None:
        self.stem = stem

    def __call__(self, text: str) -> list[str]:
        return [self.stem(t) for t in tokenize(text)]


@functools.lru_cache(maxsize=1)
def _porter() -> Callable[[str], str]:
    from snowballstemmer import stemmer

    return stemmer("porter").stemWord


WORDS: dict[str, Callable[[str], list[str]]] = {
    "as written": Tokenizer(stemmer=None),
    "porter": _Stemmed(lambda t: _porter()(t)),
    "s-stemmer": _Stemmed(_s_stem),
}


def _bm25(texts: Sequence[str], query: str, tokenizer=None) -> np.ndarray:
    index = BM25Index(tokenizer=tokenizer)
    for i, t in enumerate(texts):
        index.add(i, t)
    return index.scores(query, size=len(texts)).astype(np.float64)


def by_session(chunk_scores: np.ndarray, q: Question, how: str = "max") -> np.ndarray:
    """Return a session score from its chunks' scores: ``max``, ``top2`` (mean of the best
    two) or ``soft`` (log-sum-exp at temperature 2, a soft maximum). Cost: O(chunks)."""
    if how == "max":
        out = np.full(q.n, -np.inf)
        np.maximum.at(out, q.chunk_of, chunk_scores)
        return out
    out = np.zeros(q.n)
    for i in range(q.n):
        s = np.sort(chunk_scores[q.chunk_of == i])[::-1]
        if how == "top2":
            out[i] = s[:2].mean()
        else:
            out[i] = s[0] + 2.0 * math.log(np.exp((s - s[0]) / 2.0).sum())
    return out


def _ranked(scores: np.ndarray, positive: bool, depth: int | None = None) -> np.ndarray:
    return fusion.rank(scores, None, depth, positive=positive)


def _rrf(q: Question, lists: Sequence[np.ndarray], weights: Sequence[float] | None = None,
         k: int = K) -> np.ndarray:
    return fusion.rrf(lists, k=k, weights=weights, size=q.n)


def _vector(q: Question) -> np.ndarray:
    return by_session(q.ccos, q)


def _hybrid(q: Question, weight: float = 1.0, words: str | None = None) -> np.ndarray:
    bm = q.bm if words is None else q.bm_words[words]
    return _rrf(q, [_ranked(_vector(q), False, DEPTH), _ranked(bm, True, DEPTH)],
                None if weight == 1.0 else [weight, 1.0])


def _with_time(q: Question, fused: np.ndarray, k: int = K, weight: float = 1.0) -> np.ndarray:
    if not recency.asks_for_present(q.text):
        return fused
    return fused + recency.term(q.times, fused, weight, k=k)


def _agreement(q: Question, top: int = 5) -> float:
    a = set(_ranked(_vector(q), False, DEPTH)[:top].tolist())
    b = set(_ranked(q.bm, True, DEPTH)[:top].tolist())
    return len(a & b) / top


def _z(s: np.ndarray) -> np.ndarray:
    return np.nan_to_num(fusion.zscore(s), nan=-10.0)


def rm3(q: Question, feedback: int = 3, terms: int = 10, weight: float = 0.5) -> np.ndarray:
    """Return BM25 with pseudo-relevance feedback (RM3-style): the ``terms`` terms most
    frequent (relative to length) in the ``feedback`` best BM25 sessions, not in the query,
    are added as queries of their own, weighted by ``weight`` times their share. Cost: one
    BM25 index and ``terms`` queries."""
    top = _ranked(q.bm, True, feedback)
    scores = q.bm.copy()
    if not len(top):
        return scores
    index = BM25Index()
    for i, t in enumerate(q.texts):
        index.add(i, t)
    asked = set(index.tokenizer(q.text))
    mass: dict[str, float] = {}
    for r in top:
        words = index.tokenizer(q.texts[r])
        for w in words:
            if w not in asked:
                mass[w] = mass.get(w, 0.0) + 1.0 / len(words)
    best = sorted(mass.items(), key=lambda kv: (-kv[1], kv[0]))[:terms]
    total = sum(v for _, v in best) or 1.0
    for w, v in best:
        scores += weight * v / total * index.scores(w, size=q.n)
    return scores


def _vector_rare(q: Question) -> np.ndarray:
    return _vector(q) if q.ccos_rare is None else by_session(q.ccos_rare, q)


def standout(scores: np.ndarray, positive: bool, candidates: bool) -> float:
    """Return how far a list's best score stands out (:func:`palazzo.retrieval.fusion.
    standout`) over every session with a finite score, or (``candidates``) over the list's
    fused candidates only (its best :data:`DEPTH`, BM25's positive ones)."""
    return fusion.standout(scores[_ranked(scores, positive, DEPTH)] if candidates else scores)


def _by_standout(q: Question, vec: np.ndarray, candidates: bool) -> np.ndarray:
    weights = [max(standout(vec, False, candidates), 0.0),
               max(standout(q.bm, True, candidates), 0.0)]
    total = sum(weights) or 1.0
    return _rrf(q, [_ranked(vec, False, DEPTH), _ranked(q.bm, True, DEPTH)],
                [2 * w / total for w in weights])


def _rrf_apart(q: Question, vector_k: int = K, bm25_k: int = K,
               vector_depth: int = DEPTH) -> np.ndarray:
    """Return RRF of the vector list (its best ``vector_depth``, constant ``vector_k``) and
    the BM25 list (constant ``bm25_k``): a smaller constant lets a list's first ranks weigh
    more against the other's."""
    return (_rrf(q, [_ranked(_vector(q), False, vector_depth)], k=vector_k)
            + _rrf(q, [_ranked(q.bm, True, DEPTH)], k=bm25_k))


def _hybrid_chunks(q: Question) -> np.ndarray:
    """Return RRF of the vector list and BM25 over chunks (a session by its best chunk)."""
    return _rrf(q, [_ranked(_vector(q), False, DEPTH), _ranked(by_session(q.cbm, q), True,
                                                                DEPTH)])


def _zsum_chunks(q: Question) -> np.ndarray:
    """Return the z-score sum of the vector list and chunk BM25 (a session by its best
    chunk), half each: what a small multiple of it adds to RRF breaks RRF's near-ties by how
    far each score stands out over the haystack."""
    return fusion.zsum(_vector(q), by_session(q.cbm, q))


def _minmax(s: np.ndarray) -> np.ndarray:
    return fusion.minmax(np.where(np.isfinite(s), s, -np.inf))


Variant = Callable[[Question], np.ndarray]
# name -> (scores per session, whether only positive scores rank)
VARIANTS: dict[str, tuple[Variant, bool]] = {
    "bm25": (lambda q: q.bm, True),
    "bm25 chunks max": (lambda q: by_session(q.cbm, q), True),
    "bm25 chunks top2": (lambda q: by_session(q.cbm, q, "top2"), True),
    "bm25 chunks soft": (lambda q: by_session(q.cbm, q, "soft"), True),
    "vector": (_vector, False),
    "vector chunks top2": (lambda q: by_session(q.ccos, q, "top2"), False),
    "hybrid": (_hybrid, True),
    "hybrid+recency": (lambda q: _with_time(q, _hybrid(q)), True),
    "rrf vector + bm25 chunks max": (
        lambda q: _rrf(q, [_ranked(_vector(q), False), _ranked(by_session(q.cbm, q), True)]),
        True),
    "rrf of chunk lists": (
        lambda q: by_session(fusion.rrf([_ranked(q.ccos, False), _ranked(q.cbm, True)],
                                        k=K, size=len(q.ccos)), q), True),
    "rrf vector + bm25 + bm25 chunks": (
        lambda q: _rrf(q, [_ranked(_vector(q), False, DEPTH), _ranked(q.bm, True, DEPTH),
                           _ranked(by_session(q.cbm, q), True, DEPTH)]), True),
    "z-sum vector + bm25 chunks soft": (
        lambda q: 0.5 * _z(_vector(q)) + 0.5 * _z(by_session(q.cbm, q, "soft")), False),
    "hybrid vector weight 0.7": (lambda q: _hybrid(q, 0.7), True),
    "hybrid vector weight 0.5": (lambda q: _hybrid(q, 0.5), True),
    "hybrid weight by agreement 0.7-1.3": (lambda q: _hybrid(q, 0.7 + 0.6 * _agreement(q)),
                                           True),
    "hybrid+recency strong (k 5, w 0.1)": (
        lambda q: _with_time(q, _hybrid(q), k=5, weight=0.1), True),
    "bm25, words as written": (lambda q: q.bm_words["as written"], True),
    "hybrid+recency, words as written": (
        lambda q: _with_time(q, _hybrid(q, words="as written")), True),
    "hybrid+recency, porter stems": (lambda q: _with_time(q, _hybrid(q, words="porter")), True),
    "hybrid+recency, s-stemmer": (lambda q: _with_time(q, _hybrid(q, words="s-stemmer")), True),
    "hybrid+recency, vector weight 0.7": (lambda q: _with_time(q, _hybrid(q, 0.7)), True),
    "bm25 rm3 (3 sessions, 10 terms, 0.5)": (rm3, True),
    "hybrid+recency, bm25 rm3": (
        lambda q: _with_time(q, _rrf(q, [_ranked(_vector(q), False, DEPTH),
                                         _ranked(rm3(q), True, DEPTH)])), True),
    "z-sum vector + bm25": (lambda q: 0.5 * _z(_vector(q)) + 0.5 * _z(q.bm), False),
    "min-max sum vector + bm25": (
        lambda q: 0.5 * _minmax(_vector(q)) + 0.5 * _minmax(q.bm), False),
    "vector, without common words": (_vector_rare, False),
    "hybrid, vector without common words": (
        lambda q: _rrf(q, [_ranked(_vector_rare(q), False, DEPTH), _ranked(q.bm, True, DEPTH)]),
        True),
    "hybrid, lists weighted by standout": (lambda q: _by_standout(q, _vector(q), False), True),
    "hybrid, lists weighted by standout of candidates": (
        lambda q: _by_standout(q, _vector(q), True), True),
    "hybrid, BM25 k 20": (lambda q: _rrf_apart(q, bm25_k=20), True),
    "hybrid, BM25 k 30": (lambda q: _rrf_apart(q, bm25_k=30), True),
    "hybrid, vector k 100": (lambda q: _rrf_apart(q, vector_k=100), True),
    "hybrid, vector list's best 10": (lambda q: _rrf_apart(q, vector_depth=10), True),
    "hybrid, vector list's best 5": (lambda q: _rrf_apart(q, vector_depth=5), True),
    "z-sum vector + bm25 chunks max": (
        lambda q: 0.5 * _z(_vector(q)) + 0.5 * _z(by_session(q.cbm, q)), False),
    "hybrid+recency + 0.02 z-sum": (
        lambda q: _with_time(q, _hybrid(q)) + 0.02 * (0.5 * _z(_vector(q)) + 0.5 * _z(q.bm)),
        False),
    "z-sum vector 0.4 + bm25 chunks max 0.6": (
        lambda q: 0.4 * _z(_vector(q)) + 0.6 * _z(by_session(q.cbm, q)), False),
    "hybrid+recency, bm25 chunks max": (lambda q: _with_time(q, _hybrid_chunks(q)), True),
    "hybrid+recency, bm25 chunks max, + 0.01 z-sum": (
        lambda q: _with_time(q, _hybrid_chunks(q)) + 0.01 * _zsum_chunks(q), False),
    "hybrid+recency + 0.01 z-sum (bm25 chunks max)": (
        lambda q: _with_time(q, _hybrid(q)) + 0.01 * _zsum_chunks(q), False),
}


def score(questions: list[Question], name: str) -> dict[str, Any]:
    """Return the metrics of variant ``name`` over ``questions``, overall and by type."""
    fn, positive = VARIANTS[name]
    rows = []
    for q in questions:
        ranked = [q.sids[i] for i in _ranked(fn(q), positive)]
        seen = set(ranked)
        ranked += [s for s in q.sids if s not in seen]
        rows.append((ranked, q.gold))
    return {"variant": name, "metrics": summarise(rows),
            "by_type": by_category(rows, [q.qtype for q in questions])}


def run(path: Path, embedder, turns: str = "all",
        variants: Sequence[str] | None = None, size: int = CHUNK_SIZE,
        overlap: int | None = None) -> dict[str, Any]:
    """Return every variant's metrics on ``path`` (see the module docstring), chunks cut at
    ``size`` characters sharing ``overlap``."""
    t0 = time.perf_counter()
    questions = prepare(path, embedder, turns, size, overlap)
    prepared = time.perf_counter() - t0
    results = [score(questions, v) for v in (variants or VARIANTS)]
    return {"benchmark": "ablation", "data": str(path), "turns": turns,
            "chunk_size": size, "overlap": size // 6 if overlap is None else overlap,
            "embedder": getattr(embedder, "name", None), "questions": len(questions),
            "seconds_prepare": round(prepared, 2),
            "seconds_score": round(time.perf_counter() - t0 - prepared, 2),
            "variants": results}


COLUMNS = ("recall_any@5", "recall_all@5", "recall_any@10", "ndcg_any@10")


RULE = ("recall_any@5", "recall_all@5", "ndcg_any@10")  # issue 32's rule, by type


def below(result: dict[str, Any], reference: str) -> dict[str, list[tuple[str, str, float]]]:
    """Return, per variant of ``result``, the cells in which it scores below variant
    ``reference``: (question type or "all", metric, difference), for the metrics of
    :data:`RULE`. Issue 32's rule keeps a default only when no cell is below the old default
    nor BM25 alone, so this is what a candidate has to show empty on every set."""
    ref = next(v for v in result["variants"] if v["variant"] == reference)
    out: dict[str, list[tuple[str, str, float]]] = {}
    for v in result["variants"]:
        cells = []
        for kind, mine, theirs in [("all", v["metrics"], ref["metrics"]),
                                   *[(t, v["by_type"][t], ref["by_type"][t])
                                     for t in sorted(v["by_type"]) if t in ref["by_type"]]]:
            cells += [(kind, m, round(mine[m] - theirs[m], 4)) for m in RULE
                      if mine[m] < theirs[m] - 1e-9]
        out[v["variant"]] = cells
    return out


def below_table(result: dict[str, Any], references: Sequence[str]) -> str:
    """Return a Markdown table: per variant, how many cells (:func:`below`) fall below each
    of ``references`` and the worst of them."""
    counted = {r: below(result, r) for r in references}
    lines = ["| variant | " + " | ".join(f"cells below {r}" for r in references) + " |",
             "|" + " --- |" * (1 + len(references))]
    for v in result["variants"]:
        cells = []
        for r in references:
            found = counted[r][v["variant"]]
            worst = min(found, key=lambda c: c[2]) if found else None
            cells.append(f"{len(found)}" + (f" (worst {worst[0]} {worst[1]} {worst[2]:+.3f})"
                                             if worst else ""))
        lines.append(f'| {v["variant"]} | ' + " | ".join(cells) + " |")
    return "\n".join(lines)


def table(result: dict[str, Any]) -> str:
    """Return a Markdown table: a row per variant (all questions), R@5 any/all, R@10 and
    NDCG@10, then R@5 any/all per question type in one cell each."""
    types = sorted({t for v in result["variants"] for t in v["by_type"]})
    head = "| variant | " + " | ".join(COLUMNS) + " | " + " | ".join(
        f"{t} R@5 any/all" for t in types) + " |"
    lines = [head, "|" + " --- |" * (1 + len(COLUMNS) + len(types))]
    for v in result["variants"]:
        m = v["metrics"]
        cells = [f"{m[c]:.3f}" for c in COLUMNS]
        cells += [f'{v["by_type"][t]["recall_any@5"]:.2f} / {v["by_type"][t]["recall_all@5"]:.2f}'
                  if t in v["by_type"] else "" for t in types]
        lines.append(f'| {v["variant"]} | ' + " | ".join(cells) + " |")
    return "\n".join(lines)
