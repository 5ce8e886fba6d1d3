"""Communities: groups of drawers about one thing, found by Louvain over a drawer graph.

The graph
---------
Nodes are the live drawers, in drawer-id order (so the same palace gives the same graph
whatever order its rows were written in), plus one node an entity that links drawers. Edges:

- **Similarity.** Each drawer is linked to its :data:`K` nearest drawers by cosine over the
  palace's stored vectors (the drawer matrix of :class:`~palazzo.core.columns.DrawerStore`;
  a long drawer's row is the mean of its chunks), when that cosine is at least
  :data:`MIN_COSINE`; the weight is the cosine. The k-NN is exact: blocked matrix products
  of at most :data:`BLOCK_CELLS` cells each (about 32 MB of float32), never the n × n matrix.
  A palace where fewer than :data:`VECTOR_SHARE` of the drawers have a vector (no embedder,
  or vectors still being computed elsewhere) uses its words instead: each drawer's BM25
  terms weighted by TF-IDF (``(1 + ln tf) · ln(N / df)``), hashed with a sign into
  :data:`TERM_DIM` buckets (as the hashing embedder does) and normalised, then the same k-NN.
  Drawers without a vector in a palace that has vectors get entity links only.
- **Entities.** A drawer is linked to each entity it mentions (its REFERENCES edges, written
  by :mod:`palazzo.memory.extraction`) and to the subject and object of every fact it is the
  ``source_drawer`` of, with weight :data:`ENTITY_WEIGHT` — a star through the entity's node
  rather than a clique between its drawers, so the edges grow with the mentions, not with
  their square. An entity of only one drawer links nothing and is left out; so is an entity
  of more than :data:`HUB_SHARE` of the drawers (at least :data:`HUB_FLOOR`): the user, a
  language everyone writes in — such an entity says as little about a topic as a stopword.

Louvain (NetworkX's ``louvain_communities``, ``resolution`` :data:`RESOLUTION`, a fixed
``seed``) partitions the graph; entity nodes are dropped from the result. Communities are
ordered by size (largest first), then by their smallest drawer id; a community's id is its
place in that order. The same palace and arguments give the same communities and ids.

Each community is named by its most distinctive terms: over the BM25 index's terms, a term
scores ``(d_c / n_c) · ln(N / d)``, ``d_c`` the community's drawers holding it, ``n_c`` its
size, ``d`` and ``N`` the same over the palace (a term must be in two of its drawers when it
has two; a lone kana or letter never names one); stems are shown in their commonest written
form among a few of its drawers.

How the constants were chosen (``palazzo bench communities``, a generated 20,000-message
palace, hash embedder; docs/benchmarks.md, "Communities") is written beside each.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from palazzo.core.graphlib import networkx
from palazzo.core.model import EdgeKind
from palazzo.embed.hashing import feature_hash
from palazzo.embed.minilm import gemm
from palazzo.memory.kg import ENTITY_PREFIX
from palazzo.retrieval.bm25 import stem, tokenize

# k, measured two ways (docs/benchmarks.md, "Communities"). On the generated 20k palace (hash
# vectors) k 5 / 10 / 15 / 20 give NMI against the conversations 0.58 / 0.55 / 0.53 / 0.50 and
# Louvain 4 / 5 / 7 / 23 s; on 30 small palaces of four planted topics (5–40 noisy drawers
# each) NMI against the topics is 0.89 / 0.92 / 0.92 / 0.91: with few neighbours a small
# topic falls apart. Palaces start small, so 10.
K = 10  # nearest drawers each drawer is linked to
# 0.2 adds 7 links of 189,381 on the generated 20k palace and the same communities; 0.4
# leaves 22 drawers of 20,000 alone, 0.5 leaves 840, with no gain.
MIN_COSINE = 0.3  # a pair less similar than this is not linked
# Weight 0 / 0.3 / 1: NMI 0.557 / 0.552 / 0.547 there, whose names are shared by every topic;
# the links are for palaces whose drawers name their topics' people and things (the tests
# plant such ones), and weigh less than a typical cosine so they never outvote meaning.
ENTITY_WEIGHT = 0.3  # weight of a drawer–entity link (a cosine link weighs its cosine)
# 1 (plain modularity) gives 20-odd communities at 20k drawers, a legend a map can colour;
# 2 and 4 agree more with the 20k palace's conversations (NMI 0.62, 0.68; 45 and 83
# communities) but cut the small planted palaces' topics apart (NMI 0.81, 0.63 against 0.92).
RESOLUTION = 1.0  # Louvain's: above 1 more, smaller communities; below 1 fewer, larger
SEED = 0
HUB_SHARE = 0.05  # an entity of more than this share of the drawers links nothing...
HUB_FLOOR = 20  # ...unless it is in at most this many (small palaces keep their entities)
VECTOR_SHARE = 0.5  # below this share of drawers with a vector, words stand in for vectors
TERM_DIM = 512  # buckets of the hashed TF-IDF vectors of the no-vector fallback
BLOCK_CELLS = 8_000_000  # cells of one block of the k-NN's similarity matrix
SAMPLE_STRIDE = 16  # the k-NN bounds each row's k-th best by every 16th column's
NAME_TERMS = 3  # terms in a community's name
TOP_TERMS = 8
TOP_ENTITIES = 5
TOP_ROOMS = 5
SURFACE_SAMPLE = 5  # drawers of a community read to show its stems as written
LIMITS = {"k": (1, 100), "min_cosine": (0.0, 1.0), "entity_weight": (0.0, 10.0),
          "resolution": (0.01, 100.0)}


@dataclass(slots=True, frozen=True)
class Settings:
    """What a partition depends on besides the palace: see the module docstring."""

    k: int = K
    min_cosine: float = MIN_COSINE
    entity_weight: float = ENTITY_WEIGHT
    resolution: float = RESOLUTION
    seed: int = SEED

    def check(self) -> Settings:
        """Return self, or raise ValueError naming the setting out of its range."""
        for name, (lo, hi) in LIMITS.items():
            value = getattr(self, name)
            if not lo <= value <= hi:
                raise ValueError(f"{name} must be between {lo} and {hi}, got {value}")
        return self


@dataclass(slots=True)
class Community:
    """One community: its id, name, size and what it is made of."""

    id: int
    name: str
    size: int
    first: str  # its smallest drawer id (the tie-break of the order)
    terms: list[str]
    wings: dict[str, int]  # drawers a wing, most first
    rooms: list[tuple[str, str, int]]  # (wing, room, drawers) of its biggest rooms
    entities: list[tuple[str, int]]  # (entity name, drawers naming it), most first

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "size": self.size, "terms": self.terms,
                "wings": self.wings,
                "rooms": [{"wing": w, "room": r, "drawers": n} for w, r, n in self.rooms],
                "entities": [{"name": e, "drawers": n} for e, n in self.entities]}


@dataclass(slots=True)
class Communities:
    """A palace's drawers partitioned into communities.

    ``labels[row]`` is the community id of the drawer at store row ``row`` (rows [0, size)
    of the store when computed; -1 for rows without a live drawer). ``similarity`` says what
    the similarity links were computed from (``vectors``, ``terms``, or ``none`` for an
    empty palace); ``links`` counts the graph's edges by kind; ``modularity`` is the
    partition's (resolution 1); ``seconds`` times the steps."""

    labels: np.ndarray
    communities: list[Community]
    settings: Settings
    similarity: str
    modularity: float
    links: dict[str, int] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)

    def mask(self, community: int) -> np.ndarray:
        """Return a boolean mask over the store rows of the drawers of ``community`` (all
        False for an id it does not have). Cost: O(rows)."""
        return self.labels == community


def detect(palace: Any, settings: Settings | None = None) -> Communities:
    """Return the communities of ``palace``'s drawers (see the module docstring).

    Cost: the k-NN, O(n² · dim) multiply-adds in blocks (about 5 s for 20,000 drawers of 384
    dimensions on one core); the graph, O(n · k + mentions); Louvain, near-linear in the edges
    in practice (NetworkX, pure Python: 4–6 s there); naming, O(postings) plus a few drawers
    a community tokenised. Memory: about 250 MB at 20,000 drawers, mostly NetworkX's graph.
    docs/benchmarks.md, "Communities", has the figures."""
    nx = networkx("finding communities")
    settings = (settings or Settings()).check()
    store = palace.drawers
    size = store.size
    live = store.live_rows()
    order = np.array(sorted(live.tolist(), key=store.ids.__getitem__), dtype=np.intp)
    n = len(order)
    seconds: dict[str, float] = {}
    labels = np.full(size, -1, dtype=np.int32)
    if n == 0:
        return Communities(labels, [], settings, "none", 0.0,
                           {"similar": 0, "entity": 0}, seconds)

    t = time.perf_counter()
    vectors, similarity = _similarity_space(palace, order)
    src, dst, weight = nearest(vectors, settings.k, settings.min_cosine)
    seconds["knn"] = time.perf_counter() - t

    t = time.perf_counter()
    node_of_row = np.full(size, -1, dtype=np.intp)
    node_of_row[order] = np.arange(n)
    mentions = drawer_entities(palace, node_of_row)
    ent_src, ent_dst, names = _entity_links(mentions, n)
    if settings.entity_weight <= 0:  # weightless links join nothing
        ent_src = ent_dst = np.empty(0, dtype=np.intp)
        names = []
    graph = nx.Graph()
    graph.add_nodes_from(range(n + len(names)))
    graph.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), weight.tolist(),
                                      strict=True))
    graph.add_weighted_edges_from((a, b, settings.entity_weight) for a, b in
                                  zip(ent_src.tolist(), ent_dst.tolist(), strict=True))
    seconds["graph"] = time.perf_counter() - t

    t = time.perf_counter()
    if graph.size(weight="weight") > 0:
        found = nx.community.louvain_communities(graph, weight="weight",
                                                 resolution=settings.resolution,
                                                 seed=settings.seed)
    else:  # no links: every drawer is a community of its own
        found = [{v} for v in range(n)]
    seconds["louvain"] = time.perf_counter() - t

    t = time.perf_counter()
    groups = [sorted(v for v in members if v < n) for members in found]
    groups = [g for g in groups if g]  # an entity node alone is no community of drawers
    # Nodes are in id order, so a group's smallest node is its smallest drawer id.
    groups.sort(key=lambda g: (-len(g), g[0]))
    node_label = np.empty(n, dtype=np.int32)
    for c, g in enumerate(groups):
        node_label[g] = c
    labels[order] = node_label
    all_src = np.concatenate([src, ent_src])
    all_dst = np.concatenate([dst, ent_dst])
    all_w = np.concatenate([weight, np.full(len(ent_src), settings.entity_weight)])
    ent_label = _entity_labels(node_label, ent_src, ent_dst, n, len(names))
    q = modularity(np.concatenate([node_label, ent_label]), all_src, all_dst, all_w)
    records = _describe(palace, groups, order, node_label, mentions)
    seconds["naming"] = time.perf_counter() - t
    return Communities(labels, records, settings, similarity, q,
                       {"similar": len(src), "entity": len(ent_src)},
                       {k: round(v, 4) for k, v in seconds.items()})


def nearest(vectors: np.ndarray, k: int, min_cosine: float
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the undirected k-NN graph of the rows of ``vectors`` (L2-normalised float32) as
    (i, j, cosine) arrays with i < j, each pair once, in (i, j) order: every row linked to
    its ``k`` most similar other rows whose cosine is at least ``min_cosine`` (ties to the
    lower row; a zero row links nothing). Exact.

    Why not ``argpartition`` over each row: selecting from all n columns costs twice the
    matrix product. A row's k-th best among every :data:`SAMPLE_STRIDE`-th column is a lower
    bound of its k-th best overall, so only the columns at or above it (about k ·
    :data:`SAMPLE_STRIDE` a row) are sorted. Cost: O(n² · dim) multiply-adds in blocks of
    at most :data:`BLOCK_CELLS` cells, plus O(n²) comparisons."""
    n = len(vectors)
    k = min(k, n - 1)
    if k <= 0:
        empty = np.empty(0, dtype=np.intp)
        return empty, empty, np.empty(0, dtype=np.float32)
    has = np.any(vectors != 0, axis=1)
    product = gemm()  # SciPy's BLAS in the browser, where NumPy's matmul is 5x slower
    block = max(1, BLOCK_CELLS // n)
    parts_i, parts_j, parts_w = [], [], []
    for lo in range(0, n, block):
        hi = min(n, lo + block)
        sims = product(vectors[lo:hi], vectors.T)
        sims[np.arange(hi - lo), np.arange(lo, hi)] = -np.inf  # not its own neighbour
        sample = sims[:, ::SAMPLE_STRIDE]
        m = sample.shape[1]
        bound = np.partition(sample, m - k, axis=1)[:, m - k] if m > k else \
            np.full(hi - lo, -np.inf, dtype=sims.dtype)
        rows, cols = np.nonzero(sims >= np.maximum(bound, min_cosine)[:, None])
        best = sims[rows, cols]
        order = np.lexsort((cols, -best, rows))  # by row, best first, ties to the lower
        rows, cols, best = rows[order], cols[order], best[order]
        rank = np.arange(len(rows)) - np.searchsorted(rows, rows)
        keep = (rank < k) & has[cols]
        parts_i.append(rows[keep] + lo)
        parts_j.append(cols[keep])
        parts_w.append(best[keep])
    i = np.concatenate(parts_i).astype(np.int64)
    j = np.concatenate(parts_j).astype(np.int64)
    w = np.concatenate(parts_w).astype(np.float32)
    keep = has[i]
    i, j, w = i[keep], j[keep], w[keep]
    a, b = np.minimum(i, j), np.maximum(i, j)
    key, first = np.unique(a * n + b, return_index=True)
    return (key // n).astype(np.intp), (key % n).astype(np.intp), w[first]


def modularity(labels: np.ndarray, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
               resolution: float = 1.0) -> float:
    """Return the modularity ``Σ_c [L_c / m − γ (D_c / 2m)²]`` of the node ``labels`` over
    the undirected weighted edges (``L_c``: weight inside community c, ``D_c``: its nodes'
    weighted degrees, ``m``: the total weight); 0 for a graph without edges. Cost: O(edges)."""
    m = float(weight.sum())
    if m <= 0:
        return 0.0
    labels = np.asarray(labels, dtype=np.intp)  # wasm32 NumPy's bincount wants intp
    c = int(labels.max()) + 1 if len(labels) else 0
    inside = labels[src] == labels[dst]
    within = np.bincount(labels[src][inside], weights=weight[inside], minlength=c)
    degree = np.bincount(labels[src], weights=weight, minlength=c) + np.bincount(
        labels[dst], weights=weight, minlength=c)
    return float((within / m - resolution * (degree / (2 * m)) ** 2).sum())


def _similarity_space(palace: Any, order: np.ndarray) -> tuple[np.ndarray, str]:
    """Return (one normalised float32 vector a drawer of ``order``, its source): the stored
    vectors when at least :data:`VECTOR_SHARE` of the drawers have one, else hashed TF-IDF
    vectors of their BM25 terms."""
    store = palace.drawers
    if store.has_vector[order].mean() >= VECTOR_SHARE:
        vectors = store.vectors[order].astype(np.float32, copy=True)
        vectors[~store.has_vector[order]] = 0.0
        return vectors, "vectors"
    return term_vectors(palace.text_index, order, store.size), "terms"


def term_vectors(index: Any, order: np.ndarray, size: int, dim: int = TERM_DIM) -> np.ndarray:
    """Return hashed TF-IDF vectors (``dim`` signed buckets, L2-normalised) of the rows
    ``order`` of the BM25 ``index``, one a row in that order (zero for a row without terms).
    Cost: O(postings) plus one hash a distinct term."""
    rows, terms, tf = index.postings()
    node = np.full(max(size, int(rows.max()) + 1 if len(rows) else 0), -1, dtype=np.intp)
    node[order] = np.arange(len(order))
    mine = node[rows] >= 0
    rows, terms, tf = node[rows][mine], terms[mine], tf[mine]
    vocab = index.vocabulary()
    df = np.bincount(terms, minlength=len(vocab))
    used = np.flatnonzero(df)
    hashes = np.array([feature_hash("t:" + vocab[t]) for t in used.tolist()], dtype=np.uint64)
    bucket = np.zeros(len(vocab), dtype=np.intp)
    sign = np.zeros(len(vocab), dtype=np.float32)
    bucket[used] = (hashes % np.uint64(dim)).astype(np.intp)
    sign[used] = np.where((hashes >> np.uint64(63)) & np.uint64(1), -1.0, 1.0)
    idf = np.log(len(order) / np.maximum(df, 1)).astype(np.float32)
    value = (1.0 + np.log(tf.astype(np.float32))) * idf[terms] * sign[terms]
    out = np.zeros((len(order), dim), dtype=np.float32)
    np.add.at(out, (rows, bucket[terms]), value)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


def drawer_entities(palace: Any, node_of_row: np.ndarray) -> list[tuple[int, str]]:
    """Return the distinct (drawer node, entity id) pairs of the palace: what each drawer
    mentions (REFERENCES edges) and the subject and object of each fact it is the source
    of, for drawers with a node and entities the palace has. Cost: O(drawer out-edges +
    facts)."""
    store, edges, entities = palace.drawers, palace.edges, palace.entities
    pairs: set[tuple[int, str]] = set()
    out = edges.out
    for row in np.flatnonzero(node_of_row >= 0).tolist():
        node = int(node_of_row[row])
        for i in out.get(store.ids[row], ()):
            if edges.kind[i] is EdgeKind.REFERENCES and edges.dst[i] in entities:
                pairs.add((node, edges.dst[i]))
    for t in palace.kg.triples.values():
        if t.source_drawer is None:
            continue
        row = store.lookup(t.source_drawer)
        if row is None or row >= len(node_of_row) or node_of_row[row] < 0:
            continue
        for key in (t.subject, t.object):
            if ENTITY_PREFIX + key in entities:
                pairs.add((int(node_of_row[row]), ENTITY_PREFIX + key))
    return sorted(pairs)


def _entity_links(mentions: list[tuple[int, str]], n: int
                  ) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Return (drawer node, entity node, entity ids in node order) of the entity links:
    entities of at least two and at most the hub limit of drawers, numbered from ``n`` in
    entity-id order."""
    count = Counter(e for _, e in mentions)
    hub = max(HUB_FLOOR, HUB_SHARE * n)
    names = sorted(e for e, c in count.items() if 2 <= c <= hub)
    node_of = {e: n + i for i, e in enumerate(names)}
    pairs = [(d, node_of[e]) for d, e in mentions if e in node_of]
    a = np.array([p[0] for p in pairs], dtype=np.intp)
    b = np.array([p[1] for p in pairs], dtype=np.intp)
    return a, b, names


def _entity_labels(node_label: np.ndarray, ent_src: np.ndarray, ent_dst: np.ndarray,
                   n: int, count: int) -> np.ndarray:
    """Return a label for each entity node: the community most of its drawers are in (what
    the modularity counts it as), ties to the smaller id."""
    out = np.zeros(count, dtype=np.int32)
    if count == 0:
        return out
    c = int(node_label.max()) + 1
    votes = np.zeros((count, c), dtype=np.int32)
    np.add.at(votes, (ent_dst - n, node_label[ent_src]), 1)
    return votes.argmax(axis=1).astype(np.int32)


def _describe(palace: Any, groups: list[list[int]], order: np.ndarray,
              node_label: np.ndarray, mentions: list[tuple[int, str]]) -> list[Community]:
    """Return the community records of ``groups`` (lists of drawer nodes, in id order)."""
    store = palace.drawers
    terms = top_terms(palace.text_index, order, node_label, len(groups))
    surface = palace.text_index.tokenizer.stemmer is not None
    by_entity: list[Counter[str]] = [Counter() for _ in groups]
    for node, eid in mentions:
        by_entity[node_label[node]][eid] += 1
    out = []
    for c, members in enumerate(groups):
        rows = order[members]
        wings = Counter(store.wing[r] for r in rows.tolist())
        rooms = Counter((store.wing[r], store.room[r]) for r in rows.tolist())
        words = terms[c]
        if surface and words:
            words = _written(palace, rows, words)
        ents = sorted(by_entity[c].items(), key=lambda x: (-x[1], x[0]))[:TOP_ENTITIES]
        out.append(Community(
            id=c, name=" · ".join(words[:NAME_TERMS]) or f"community {c}",
            size=len(members), first=store.ids[int(rows[0])], terms=words,
            wings=dict(sorted(wings.items(), key=lambda x: (-x[1], x[0]))),
            rooms=[(w, r, k) for (w, r), k in sorted(rooms.items(),
                                                     key=lambda x: (-x[1], x[0]))[:TOP_ROOMS]],
            entities=[(palace.entities[e].name, k) for e, k in ents]))
    return out


def top_terms(index: Any, order: np.ndarray, node_label: np.ndarray, count: int,
              top: int = TOP_TERMS) -> list[list[str]]:
    """Return each community's ``top`` most distinctive BM25 terms (see the module
    docstring), best first, ties in alphabetical order. Cost: O(postings log postings)."""
    rows, terms, _ = index.postings()
    node = np.full(max(int(rows.max()) + 1 if len(rows) else 0, int(order.max()) + 1),
                   -1, dtype=np.intp)
    node[order] = np.arange(len(order))
    mine = node[rows] >= 0
    comm = node_label[node[rows][mine]].astype(np.int64)
    terms = terms[mine].astype(np.int64)
    vocab = index.vocabulary()
    out: list[list[str]] = [[] for _ in range(count)]
    if not len(terms):
        return out
    # np.intp: wasm32 NumPy refuses int64 in bincount (the keys below need int64).
    df = np.bincount(terms.astype(np.intp), minlength=len(vocab))
    size = np.bincount(node_label.astype(np.intp), minlength=count)
    key, dc = np.unique(comm * len(vocab) + terms, return_counts=True)
    c, t = key // len(vocab), key % len(vocab)
    enough = dc >= np.minimum(2, size[c])
    c, t, dc = c[enough], t[enough], dc[enough]
    named = np.zeros(len(vocab), dtype=bool)
    used = np.unique(t)
    named[used] = [_nameable(vocab[i]) for i in used.tolist()]
    c, t, dc = c[named[t]], t[named[t]], dc[named[t]]
    score = dc / size[c] * np.log(len(order) / df[t])
    # Ties go to the term first in alphabetical order (term ids follow the order drawers
    # were written in, which must not change a name).
    used = np.unique(t)
    alpha = np.zeros(len(vocab), dtype=np.intp)
    alpha[used] = np.argsort(np.argsort(np.array([vocab[i] for i in used.tolist()])))
    pick = np.lexsort((alpha[t], -score, c))  # by community, best score first, then term
    c, t = c[pick], t[pick]
    starts = np.searchsorted(c, np.arange(count))
    ends = np.searchsorted(c, np.arange(count), side="right")
    for k in range(count):
        ids = t[starts[k]: min(ends[k], starts[k] + top)]
        out[k] = [vocab[i] for i in ids.tolist()]
    return out


def _nameable(term: str) -> bool:
    """Return whether ``term`` may name a community: not a lone kana or letter (a particle,
    a contraction's fragment), though a lone Han character is a word."""
    return len(term) > 1 or "\u3400" <= term <= "\u9fff" or term >= "\U00020000"


def _written(palace: Any, rows: np.ndarray, stems: list[str]) -> list[str]:
    """Return ``stems`` each in its commonest written form among the first
    :data:`SURFACE_SAMPLE` drawers of ``rows`` that hold it (the stem itself when none
    does)."""
    store = palace.drawers
    wanted = set(stems)
    seen: dict[str, Counter[str]] = {s: Counter() for s in stems}
    for r in rows[:SURFACE_SAMPLE * 4].tolist():
        for word in tokenize(store.content[r]):
            s = stem(word)
            if s in wanted:
                seen[s][word] += 1
        if all(sum(v.values()) >= 2 for v in seen.values()):
            break
    return [min(seen[s].items(), key=lambda x: (-x[1], x[0]))[0] if seen[s] else s
            for s in stems]


class CommunityCache:
    """The communities of one palace, kept until its drawers, vectors or links change.

    The key is the settings plus what the partition reads: the drawer ids of every row (an
    edited drawer gets a new id), how many have a vector and the embedder's fingerprint,
    the edge and fact counts. Cost of a hit: one pass over the drawer ids (about a
    millisecond for 20,000 drawers)."""

    def __init__(self, palace: Any) -> None:
        self.palace = palace
        self._key: tuple[Any, ...] | None = None
        self._value: Communities | None = None

    def key(self, settings: Settings) -> tuple[Any, ...]:
        """Return what the palace's communities under ``settings`` depend on, cheaply:
        equal keys, equal communities. Cost: O(rows + edges) of counting."""
        p = self.palace
        store = p.drawers
        size = store.size
        edges = p.edges
        return (settings, size, hash(tuple(store.ids[:size])), store.fingerprint,
                int(np.count_nonzero(store.has_vector[:size])), len(edges.kind),
                int(np.count_nonzero(edges.alive[: len(edges.kind)])), len(p.kg.triples),
                len(p.entities))

    def state(self) -> tuple[tuple[Any, ...], Communities] | None:
        """Return what the cache holds (its key and communities; None when empty): what a
        forked child that computed them sends back to its parent
        (:meth:`palazzo.persist.directory.PalaceDirectory.call`)."""
        return None if self._value is None or self._key is None else (self._key, self._value)

    def adopt(self, state: tuple[tuple[Any, ...], Communities] | None) -> bool:
        """Keep communities computed elsewhere (another process's :meth:`state` of this
        palace) when they are this palace's as it stands: their key equal to the key this
        palace gives for their settings. Returns whether they were kept. Cost: a key."""
        if state is None:
            return False
        key, value = state
        if self.key(key[0]) != key:
            return False
        self._key, self._value = key, value
        return True

    def get(self, settings: Settings | None = None) -> Communities:
        """Return the palace's communities under ``settings``, computed again only when the
        palace changed since the last call (or the settings differ)."""
        settings = settings or Settings()
        key = self.key(settings)
        if self._value is None or key != self._key:
            self._value = detect(self.palace, settings)
            self._key = key
        return self._value

