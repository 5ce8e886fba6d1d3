"""Hybrid retrieval over a palace: vector top-k, BM25, fused by Reciprocal Rank Fusion.

Vector scores are one matrix-vector product over the normalised embedding matrix; BM25 is
sparse algebra over the text index; both are restricted to the wing/room mask before ranking.

Learning from use (issues 4 and 32): a hybrid search may add a pheromone term. A drawer
marked useful for a query (``pheromone_deposit`` or ``pheromone_use`` with ``query``) gets a
trail from that query's words (:mod:`palazzo.stigmergy.trails`); with ``pheromone`` = w > 0
each drawer that trails near this query lead to gains w·min(strength, 1)/(k + 1), i.e. w
times what first place in one RRF list is worth, where strength is each trail's reward
times how near its query's words are (none below half the words shared). Until issue 32 the
term read the drawer's exploitation, whatever the query: ``palazzo bench learning`` found
that it helped the repeated queries and hurt the others; the trails keep the first and not
the second (docs/benchmarks.md, "Learning from use"). It stays off (w = 0) by default: a
search's ranking never changes unless it asks.

Re-ranking (issue 18): ``rerank`` = "recency", "mmr" or "composite" orders the best
``max(3·limit, 30)`` fused candidates again (:mod:`palazzo.retrieval.rerank`): by relevance ×
a half-life decay of the drawer's time, by Maximal Marginal Relevance over the drawers'
vectors, or by Graph Kernel's 0.5/0.3/0.2 composite of relevance, outcome (exploitation
pheromone) and recency. It is opt-in per query (off by default; docs/benchmarks.md,
"Re-ranking", has the numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.errors import NotFound, ValidationError, VectorsPending
from palazzo.retrieval import events as event_list
from palazzo.retrieval import fusion, scripts
from palazzo.retrieval import recency as time_prior
from palazzo.retrieval import rerank as reranker

MODES = ("hybrid", "vector", "bm25", "blend")
# How deep each ranked list goes into the fusion, per requested result.
DEPTH_PER_RESULT = 8
MIN_DEPTH = 50
RRF_K = 60
MAX_PHEROMONE_WEIGHT = 10.0
# Candidates a re-ranker orders: RERANK_PER_RESULT per requested result, at least RERANK_MIN.
RERANK_PER_RESULT = 3
RERANK_MIN = 30
MAX_ZSUM = 1.0
FUSES = ("rrf", "z")


@dataclass(slots=True)
class Hit:
    """One search result with the scores that ranked it (None where a list did not rank it)."""

    drawer_id: str
    wing: str
    room: str
    content: str
    score: float
    vector: float | None
    bm25: float | None
    vector_rank: int | None
    bm25_rank: int | None
    pheromone: float | None = None
    recency: float | None = None
    rerank: float | None = None
    event: float | None = None
    # Where the drawer came from (palazzo.memory.sources): the operations fill it for the
    # hits they return; a search called directly leaves it None and to_dict leaves it out.
    source: dict[str, Any] | None = None

    def to_dict(self, snippet: int | None = None) -> dict[str, Any]:
        text = self.content if snippet is None else self.content[:snippet]
        out = {
            "drawer_id": self.drawer_id,
            "wing": self.wing,
            "room": self.room,
            "content": text,
            "score": self.score,
            "scores": {
                "vector": self.vector,
                "bm25": self.bm25,
                "vector_rank": self.vector_rank,
                "bm25_rank": self.bm25_rank,
                "pheromone": self.pheromone,
                "recency": self.recency,
                "rerank": self.rerank,
                "event": self.event,
            },
        }
        if self.source is not None:
            out["source"] = self.source
        return out


def vector_scores(palace, query: str, best_chunk: bool = True) -> np.ndarray | None:
    """Return cosine of the query to every row (None when vectors cannot be used).

    A drawer cut into chunks scores by its best chunk when ``best_chunk`` (search), else by
    the normalised mean of its chunks (near-duplicate checks compare whole drawers). Rows
    without a vector get -inf. Cost: one embedding and one matvec over the drawer matrix,
    plus one over the chunk matrix when some drawer has chunks.
    """
    store = palace.drawers
    n = store.size
    if palace.embedder is None or not store.has_vector[:n].any():
        return None
    try:
        q = palace.embedder.embed([query])[0]
    except VectorsPending:  # the query's vector is still being computed: words decide
        return None
    if not q.any():  # a query the embedder cannot read (no token): BM25 alone decides
        return None
    scores = store.vectors[:n] @ q
    if best_chunk and len(store.chunks):
        best = store.chunks.best(q, n)
        chunked = np.isfinite(best)
        scores[chunked] = best[chunked]
    scores[~store.has_vector[:n]] = -np.inf
    return scores


def unembedded_term(store, bm_ranked: np.ndarray, weight: float, k: int) -> np.ndarray:
    """Return, for the BM25-ranked drawers that have no vector yet, the vector list's share
    they would get at their BM25 place (``weight / (k + rank)``); 0 elsewhere.

    Why: while a palace is being embedded, a drawer without a vector is in one list only and
    would rank below unrelated drawers that happen to have one; a drawer's words keep its
    place until its vector arrives (a fully embedded palace gets nothing from this). Cost:
    O(BM25 depth)."""
    out = np.zeros(store.size, dtype=np.float64)
    if not len(bm_ranked):
        return out
    lacking = ~store.has_vector[: store.size][bm_ranked]
    if lacking.any():
        out[bm_ranked[lacking]] = weight / (k + np.flatnonzero(lacking) + 1.0)
    return out


def pheromone_term(palace, query: str, mask: np.ndarray, weight: float) -> np.ndarray:
    """Return weight·min(trail strength, 1)/(RRF_K + 1) on the rows of ``mask`` that trails
    near ``query`` lead to (:mod:`palazzo.stigmergy.trails`), 0 elsewhere.

    Why trails and not the drawers' exploitation: a reward read without its query pushed the
    rewarded drawer up for every question (``bench learning``); a trail pulls only queries
    whose words are near the one that earned it. Why clamp at 1: as in the edge factor Φ, a
    much-used drawer saturates instead of drowning every relevance signal. A trail's drawer
    gains even outside both lists: the person said it answers this query. Cost: tokenising
    the query and one set overlap per remembered query.
    """
    store = palace.drawers
    out = np.zeros(store.size, dtype=np.float64)
    trails = palace.trails
    for did, strength in trails.strengths(trails.region(palace.text_index.tokenizer,
                                                        query)).items():
        try:
            row = palace.row(did)
        except NotFound:  # a deleted drawer's trail: it fades with the decay
            continue
        if mask[row]:
            out[row] = weight * min(strength, 1.0) / (RRF_K + 1.0)
    return out


# Characters of a query that are read: MiniLM reads at most 256 word pieces (about 1,000
# characters) and BM25 gains nothing from a whole document as a query; a 10 MB query once
# held an MCP server for 30 s.
MAX_QUERY = 10_000


def search(
    palace,
    query: str,
    limit: int = 10,
    wing: str | None = None,
    room: str | None = None,
    mode: str = "hybrid",
    pheromone: float = 0.0,
    *,
    rrf_k: int = RRF_K,
    vector_weight: float = 1.0,
    recency: float = time_prior.WEIGHT,
    events: float = event_list.WEIGHT,
    rerank: str | None = None,
    half_life_days: float = reranker.HALF_LIFE_DAYS,
    mmr_lambda: float = reranker.MMR_LAMBDA,
    now: float | None = None,
    within: np.ndarray | None = None,
    list_weights: str = "equal",
    zsum: float = 0.0,
    fuse: str = "rrf",
) -> list[Hit]:
    """Return up to ``limit`` hits for ``query``, best first.

    ``hybrid`` fuses the vector and BM25 rankings with RRF (k = 60) and falls back to BM25
    when the palace has no vectors; ``vector`` and ``bm25`` use one list; ``blend`` is
    MemPalace's 0.6·cosine + 0.4·min-max(BM25), kept to measure against. ``pheromone`` > 0
    adds the learned term (hybrid only; see the module docstring); each hit then reports the
    term it got. Cost: one embedding, one matvec over all drawers, one sparse BM25 pass, and
    sorting the top candidates. A query longer than :data:`MAX_QUERY` characters is read up to
    there. ``rrf_k`` and ``vector_weight`` (the vector list's RRF weight against BM25's 1)
    exist for the benchmarks that choose them; the defaults are what the numbers chose.
    ``recency`` weighs the time prior a hybrid query about the present gets (see
    :mod:`palazzo.retrieval.recency`; 0 turns it off); each hit then reports its term.
    ``events`` weighs the event list a hybrid query naming an event ("… when the road exam
    happened?") adds: its clause against the drawers' event sentences (see
    :mod:`palazzo.retrieval.events`; 0 turns it off); each hit then reports its term.
    ``rerank`` ("recency", "mmr", "composite"; hybrid only) re-orders the best
    ``max(3·limit, 30)`` fused candidates (see the module docstring): ``half_life_days`` is
    the recency decay's half-life (recency, composite), ``mmr_lambda`` MMR's weight of
    relevance against novelty; ``now`` (epoch seconds) is the newest drawer's time unless
    given, so results do not depend on the wall clock. Each hit's ``score`` stays the fused
    relevance; ``rerank`` reports the score the re-ranker ordered it by. Cost: sorting the
    candidates, and for MMR O(limit · candidates · dim). ``within`` (a boolean mask over the
    drawer rows, e.g. a community's) narrows the search further than ``wing`` / ``room``.
    ``list_weights`` "standout" (hybrid; for the benchmarks of issue 32, not a default)
    weighs the vector and BM25 lists by how far each one's best score stands out
    (:func:`palazzo.retrieval.fusion.standout_weights`), times ``vector_weight``.
    ``zsum`` > 0 (hybrid; for the benchmarks of issue 32, not a default) adds ``zsum`` times
    the two lists' z-score sum over the scope searched (:func:`palazzo.retrieval.fusion.
    zsum`) to the fused score, every other term unchanged; a drawer in neither list can then
    rank. Cost: two passes over the scope's scores.
    ``fuse`` "z" (hybrid; for the benchmarks of issue 32, not a default) fuses in one
    currency instead of RRF: the two lists' z-score sum (:func:`palazzo.retrieval.fusion.
    zsum`), plus the event list in standard deviations (:func:`palazzo.retrieval.events.
    z_term`, ``events`` its weight) and the time prior as a linear gain of up to
    ``recency`` standard deviations (:func:`palazzo.retrieval.recency.term`); ``zsum``,
    ``list_weights``, ``rrf_k``, ``vector_weight`` and ``pheromone`` are not read. Cost: as
    hybrid.
    """
    query = query[:MAX_QUERY]
    if mode not in MODES:
        raise ValidationError(f"mode must be one of {', '.join(MODES)}")
    pheromone = float(pheromone)
    if not 0.0 <= pheromone <= MAX_PHEROMONE_WEIGHT:
        raise ValidationError(f"pheromone must be between 0 and {MAX_PHEROMONE_WEIGHT:g}")
    recency = float(recency)
    if not 0.0 <= recency <= time_prior.MAX_WEIGHT:
        raise ValidationError(f"recency must be between 0 and {time_prior.MAX_WEIGHT:g}")
    events = float(events)
    if not 0.0 <= events <= event_list.MAX_WEIGHT:
        raise ValidationError(f"events must be between 0 and {event_list.MAX_WEIGHT:g}")
    zsum = float(zsum)
    if not 0.0 <= zsum <= MAX_ZSUM:
        raise ValidationError(f"zsum must be between 0 and {MAX_ZSUM:g}")
    if fuse not in FUSES:
        raise ValidationError(f"fuse must be one of {', '.join(FUSES)}")
    if pheromone and mode != "hybrid":
        raise ValidationError("the pheromone term works with mode hybrid only")
    half_life_days, mmr_lambda = _check_rerank(rerank, mode, half_life_days, mmr_lambda)
    if not query.strip():
        raise ValidationError("query must not be empty")
    store = palace.drawers
    if store.size == 0:
        return []
    mask = store.mask(wing, room)
    if within is not None:
        mask = mask & within[: store.size]
    depth = max(MIN_DEPTH, DEPTH_PER_RESULT * limit)

    # A hybrid query in a script the embedder does not read (Korean for English MiniLM) is
    # ranked by its words: its vector would rank unrelated drawers first (scripts.py).
    read = mode != "hybrid" or scripts.readable(query, palace.embedder)
    vec = vector_scores(palace, query) if mode != "bm25" and read else None
    bm = palace.text_index.scores(query, size=store.size) if mode != "vector" else None
    if mode == "vector" and vec is None:
        raise ValidationError("this palace has no vectors: run reindex or search with bm25")

    vec_ranked = (fusion.rank(vec, mask, depth, positive=False) if vec is not None
                  else np.empty(0, np.intp))
    bm_ranked = fusion.rank(bm, mask, depth) if bm is not None else np.empty(0, np.intp)
    fused = None
    positive = True  # whether only rows of positive fused score rank (RRF: in some list)
    boost = None
    recent = None
    evented = None
    if mode == "vector":
        order = vec_ranked[:limit]
    elif mode == "hybrid" and vec is None and pheromone:
        # Ranked by words alone (no vectors, or a script the model does not read): the
        # trails still count, on the BM25 list's RRF scores.
        fused = fusion.rrf([bm_ranked], k=rrf_k, size=store.size)
        boost = pheromone_term(palace, query, mask, pheromone)
        fused = fused + boost
        order = fusion.rank(fused, mask, limit)
    elif mode == "bm25" or vec is None:
        order = bm_ranked[:limit]
    elif mode == "blend":
        fused = fusion.blend(vec, bm, alpha=0.6, mask=mask)
        order = fusion.rank(fused, mask, limit, positive=False)
    elif fuse == "z":
        fused = fusion.zsum(vec, bm, mask)
        if recency and time_prior.asks_for_present(query):
            recent = time_prior.term(store.columns["created_at"][: store.size], fused,
                                     recency, mask, linear=True)
            fused = fused + recent
        if events:
            evented = event_list.z_term(palace, query, mask, events)
            if evented is not None:
                fused = fused + evented
        positive = False  # z-scores: any finite score may rank
        order = fusion.rank(fused, mask, limit, positive=False)
    else:
        weights = [vector_weight, 1.0]
        if list_weights == "standout":
            weights = fusion.standout_weights([(vec, vec_ranked), (bm, bm_ranked)])
            weights[0] *= vector_weight
        elif list_weights != "equal":
            raise ValidationError("list_weights must be equal or standout")
        fused = fusion.rrf([vec_ranked, bm_ranked], k=rrf_k, size=store.size,
                           weights=None if weights == [1.0, 1.0] else weights)
        fused += unembedded_term(store, bm_ranked, vector_weight, rrf_k)
        if pheromone:
            boost = pheromone_term(palace, query, mask, pheromone)
            fused = fused + boost
        if recency and time_prior.asks_for_present(query):
            recent = time_prior.term(store.columns["created_at"][: store.size], fused,
                                     recency, mask, k=rrf_k)
            fused = fused + recent
        if events and vec is not None:
            evented = event_list.term(palace, query, mask, events, k=rrf_k)
            if evented is not None:
                fused = fused + evented
        if zsum:
            fused = fused + zsum * fusion.zsum(vec, bm, mask)
            positive = False  # a row in neither list may rank on its z-scores
        order = fusion.rank(fused, mask, limit, positive=positive)
    reranked = None
    if rerank is not None:
        relevance = fused if fused is not None else bm  # hybrid without vectors: BM25 decides
        order, reranked = _rerank(palace, rerank, relevance, mask, limit, half_life_days,
                                  mmr_lambda, now, positive=positive)

    vrank = {int(r): i + 1 for i, r in enumerate(vec_ranked)}
    brank = {int(r): i + 1 for i, r in enumerate(bm_ranked)}
    hits = []
    for r in order:
        r = int(r)
        if fused is not None:
            score = float(fused[r])
        elif mode == "vector":
            score = float(vec[r])
        else:
            score = float(bm[r])
        hits.append(Hit(
            drawer_id=store.ids[r], wing=store.wing[r], room=store.room[r],
            content=store.content[r], score=score,
            vector=float(vec[r]) if vec is not None and np.isfinite(vec[r]) else None,
            bm25=float(bm[r]) if bm is not None else None,
            vector_rank=vrank.get(r), bm25_rank=brank.get(r),
            pheromone=None if boost is None else float(boost[r]),
            recency=None if recent is None else float(recent[r]),
            rerank=None if reranked is None else float(reranked[r]),
            event=None if evented is None else float(evented[r]),
        ))
    return hits


def _check_rerank(kind: str | None, mode: str, half_life_days: float,
                  mmr_lambda: float) -> tuple[float, float]:
    """Return ``half_life_days`` and ``mmr_lambda`` as floats, or raise ValidationError with
    what to change when the re-ranking options cannot be used."""
    if kind is not None and kind not in reranker.KINDS:
        raise ValidationError(f"rerank must be one of {', '.join(reranker.KINDS)} (or omitted)")
    if kind is not None and mode != "hybrid":
        raise ValidationError("rerank works with mode hybrid only")
    try:
        half_life_days, mmr_lambda = float(half_life_days), float(mmr_lambda)
    except (TypeError, ValueError):
        raise ValidationError("half_life_days and mmr_lambda must be numbers") from None
    if not (half_life_days > 0 and np.isfinite(half_life_days)):
        raise ValidationError("half_life_days must be a positive number of days")
    if not 0.0 <= mmr_lambda <= 1.0:
        raise ValidationError("mmr_lambda must be between 0 and 1")
    return half_life_days, mmr_lambda


def _rerank(palace, kind: str, relevance: np.ndarray, mask: np.ndarray, limit: int,
            half_life_days: float, mmr_lambda: float, now: float | None,
            positive: bool = True) -> tuple[np.ndarray, dict[int, float]]:
    """Return the rows re-ranker ``kind`` places first (at most ``limit``) among the best
    ``max(RERANK_PER_RESULT·limit, RERANK_MIN)`` rows of ``relevance``, and each placed row's
    re-ranker score (``positive``: only rows of positive relevance are candidates, as with
    rank fusion's scores). Cost: as :func:`palazzo.retrieval.rerank.rerank` over those
    rows."""
    store = palace.drawers
    n = store.size
    cand = fusion.rank(relevance, mask, max(RERANK_PER_RESULT * limit, RERANK_MIN),
                       positive=positive)
    times = store.columns["created_at"][:n]
    if now is None:
        alive = times[store.alive[:n]]
        alive = alive[~np.isnan(alive)]
        now = float(alive.max()) if len(alive) else 0.0
    elif not np.isfinite(now):
        raise ValidationError("now must be a finite time in epoch seconds")
    rows, scores = reranker.rerank(
        kind, cand, relevance[cand], limit=limit, times=times[cand], now=float(now),
        half_life_days=half_life_days, mmr_lambda=mmr_lambda,
        vectors=np.where(store.has_vector[cand, None], store.vectors[cand], 0.0),
        outcome=store.columns["exploitation"][cand])
    return rows, {int(r): float(s) for r, s in zip(rows, scores, strict=True)}
