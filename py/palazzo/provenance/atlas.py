"""The atlas: analytics over many context slices at once (seed 002 §3.4).

:func:`build_atlas` slices many anchors in one pass (:meth:`Provenance.slice_many`, the seed's
BatchSlicer: one shared neighbour/score cache, each slice the same as alone), then measures
how the slices relate and which turns hold them together:

- **overlap** (:func:`overlap_matrix`, the OverlapAnalyzer): the Jaccard index
  ``|A ∩ B| / |A ∪ B|`` of every pair of slices' turn-id sets, an ``n × n`` NumPy array
  (1 on the diagonal), computed as one sparse product of the slice × turn incidence matrix;
- **turn influence** (TurnInfluence), for every turn in at least one slice:

  - *frequency* (:func:`turn_frequency`): in how many of the slices the turn is;
  - *betweenness* (:func:`betweenness`): the turn's normalised betweenness centrality in the
    **atlas graph**, the undirected graph of the turns in any slice and the reply, branch and
    merge links among them (NetworkX); exact up to :data:`EXACT_LIMIT` turns, above that
    estimated from :data:`SAMPLES` source turns drawn with a fixed seed, so the figure stays
    deterministic and its cost bounded;
  - *bridge* (:func:`bridge_scores`): how many otherwise separate groups of slices the turn
    alone holds together, minus one. Take the slices that contain the turn and link two of
    them when they share some *other* turn; the bridge score is the number of connected
    groups this leaves, minus one. 0 means every slice through the turn also overlaps the
    others elsewhere (or the turn is in one slice only); 1 means that without this turn the
    slices through it would fall into two unrelated groups: it is the one turn connecting
    two conversation branches as the slices see them (seed 002: "bridge turns that connect
    otherwise-separate conversation branches").

- **the atlas bundle** (:class:`Atlas`, the AtlasBundler): a JSON-able manifest of the
  anchors, the policy (name and fingerprint), the budget, every slice's id and snapshot hash,
  the overlap matrix and the influence table, with a ``content_hash``: sha256 of its canonical
  bytes (:mod:`palazzo.provenance.canonical`, floats quantised to 10⁻⁶). The same palace and
  arguments give byte-identical canonical JSON: turns are sorted by id, slices follow the
  anchors' order, nothing depends on the clock, a signing key or set order.

Tokens and keys are left out of the manifest (it is analytics, not evidence): slice an anchor
with ``slice_context`` for its signed bundle, whose slice id the atlas names.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from palazzo.core.graphlib import networkx
from palazzo.errors import ValidationError
from palazzo.memory.conversation import QUANTUM, quantise
from palazzo.provenance.canonical import canonical_bytes, sha256_hex
from palazzo.provenance.policy import DEFAULT_POLICY, SlicePolicyV1

SCHEMA_VERSION = "palazzo.atlas.v1"
EXACT_LIMIT = 1000  # atlas-graph turns up to which betweenness is exact
SAMPLES = 200  # source turns of the estimate above it
SEED = 0  # the sample's seed: a fixed seed keeps the estimate deterministic
MAX_ANCHORS = 1000


def _incidence(slices: Sequence[Collection[str]]) -> tuple[list[str], Any]:
    """Return (the sorted union of turn ids, the slice × turn 0/1 matrix as SciPy CSR)."""
    import scipy.sparse as sparse

    ids = sorted(set().union(*slices)) if slices else []
    index = {t: i for i, t in enumerate(ids)}
    cols = [np.fromiter(sorted(index[t] for t in s), dtype=np.int64, count=len(s))
            for s in slices]
    indptr = np.zeros(len(slices) + 1, dtype=np.int64)
    np.cumsum([len(c) for c in cols], out=indptr[1:])
    indices = np.concatenate(cols) if cols else np.zeros(0, dtype=np.int64)
    data = np.ones(len(indices), dtype=np.int64)
    return ids, sparse.csr_matrix((data, indices, indptr), shape=(len(slices), len(ids)))


def _intersections(matrix: Any) -> np.ndarray:
    """Return the n × n integer matrix of shared turns: ``M·Mᵀ``. Cost: O(Σ f(t)²) for f(t)
    the slices turn t is in."""
    return np.asarray((matrix @ matrix.T).toarray(), dtype=np.int64)


def overlap_matrix(slices: Sequence[Collection[str]]) -> np.ndarray:
    """Return the Jaccard index of every pair of turn-id sets as an ``n × n`` float64 array:
    ``|A ∩ B| / |A ∪ B|`` (1 on the diagonal; 0 for two empty sets). Symmetric. Cost: one
    sparse product, O(Σ f(t)²) for f(t) the sets turn t is in, plus O(n²)."""
    _, matrix = _incidence([set(s) for s in slices])
    return _jaccard(_intersections(matrix))


def _jaccard(shared: np.ndarray) -> np.ndarray:
    inter = shared.astype(np.float64)
    size = np.diag(inter)
    union = size[:, None] + size[None, :] - inter
    out = np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)
    np.fill_diagonal(out, 1.0)
    return out


def turn_frequency(slices: Sequence[Collection[str]]) -> dict[str, int]:
    """Return, for every turn in a slice, how many of ``slices`` contain it (keys sorted).
    O(Σ |slice|)."""
    return _frequency(*_incidence([set(s) for s in slices]))


def _frequency(ids: list[str], matrix: Any) -> dict[str, int]:
    counts = np.asarray(matrix.sum(axis=0)).ravel()
    return {t: int(c) for t, c in zip(ids, counts, strict=True)}


def bridge_scores(slices: Sequence[Collection[str]]) -> dict[str, int]:
    """Return every turn's bridge score (keys sorted): among the slices containing it, link
    two when they share another turn too; the score is the number of groups this leaves,
    minus one (0 for a turn in fewer than two slices). See the module docstring.
    Cost: the intersection product plus O(f²) for each turn in f ≥ 2 slices."""
    ids, matrix = _incidence([set(s) for s in slices])
    return _bridges(ids, matrix, _intersections(matrix))


def _bridges(ids: list[str], matrix: Any, inter: np.ndarray) -> dict[str, int]:
    import scipy.sparse as sparse
    from scipy.sparse.csgraph import connected_components

    by_turn = matrix.tocsc()
    out: dict[str, int] = {}
    for j, t in enumerate(ids):
        members = by_turn.indices[by_turn.indptr[j]:by_turn.indptr[j + 1]]
        if len(members) < 2:
            out[t] = 0
            continue
        linked = inter[np.ix_(members, members)] >= 2  # share a turn besides t
        if linked.all():
            out[t] = 0
            continue
        groups, _ = connected_components(sparse.csr_matrix(linked), directed=False)
        out[t] = int(groups) - 1
    return out


def betweenness(conversations: Any, turn_ids: Collection[str], samples: int = SAMPLES,
                seed: int = SEED) -> tuple[dict[str, float], dict[str, Any]]:
    """Return (normalised betweenness centrality of each of ``turn_ids`` in the undirected
    graph of those turns and the links among them, how it was computed).

    Exact (Brandes, O(V·E)) up to :data:`EXACT_LIMIT` turns; above, NetworkX's estimate from
    ``samples`` source turns drawn with ``seed`` (O(samples·E)): nodes are added in sorted
    order, so the same turns give the same sample and the same figures. Keys sorted.
    """
    nx = networkx("the atlas's turn influence")
    ids = sorted(turn_ids)
    graph = nx.Graph()
    graph.add_nodes_from(ids)
    graph.add_edges_from((p, c) for p, c, _ in conversations.edges_among(ids))
    exact = len(ids) <= EXACT_LIMIT
    k = None if exact else min(samples, len(ids))
    scores = nx.betweenness_centrality(graph, k=k, normalized=True,
                                       seed=None if exact else seed)
    how = {"measure": "betweenness", "graph": "atlas", "normalized": True, "exact": exact,
           "samples": k, "seed": None if exact else seed, "turns": len(ids),
           "links": graph.number_of_edges()}
    return {t: float(scores[t]) for t in ids}, how


def _q(x: float) -> float:
    """Return ``x`` rounded to the hashing quantum (10⁻⁶), as the bundle shows it."""
    return quantise(x) / QUANTUM


@dataclass(slots=True, frozen=True)
class AtlasSlice:
    """One slice of an atlas: its anchor, slice id, snapshot hash and turn ids (sorted)."""

    anchor: str
    slice_id: str
    graph_snapshot_hash: str
    turns: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form (the turn count, not the ids)."""
        return {"anchor": self.anchor, "slice_id": self.slice_id,
                "graph_snapshot_hash": self.graph_snapshot_hash, "turns": len(self.turns)}


@dataclass(slots=True, frozen=True)
class Influence:
    """One turn's influence in an atlas."""

    turn: str
    conversation: str
    frequency: int
    betweenness: float
    bridge: int

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-able form (betweenness to 10⁻⁶)."""
        return {"turn": self.turn, "conversation": self.conversation,
                "frequency": self.frequency, "betweenness": _q(self.betweenness),
                "bridge": self.bridge}


@dataclass(slots=True, frozen=True)
class Atlas:
    """Slices of many anchors under one policy, their overlap and the turns' influence."""

    policy: SlicePolicyV1
    budget: int | None
    slices: tuple[AtlasSlice, ...]
    overlap: np.ndarray
    influence: tuple[Influence, ...]
    centrality: dict[str, Any]

    def manifest(self) -> dict[str, Any]:
        """Return the bundle without its content hash (floats to 10⁻⁶)."""
        return {"schema_version": SCHEMA_VERSION,
                "policy": {"name": self.policy.name, "params_hash": self.policy.params_hash},
                "budget": self.budget, "anchors": [s.anchor for s in self.slices],
                "slices": [s.to_dict() for s in self.slices],
                "turns": len(self.influence),
                "overlap": [[_q(float(x)) for x in row] for row in self.overlap],
                "influence": [r.to_dict() for r in self.influence],
                "centrality": dict(self.centrality)}

    def canonical(self) -> bytes:
        """Return the canonical bytes the content hash is over: the manifest with every float
        quantised to an integer of millionths. O(n² + turns)."""
        return canonical_bytes(_quantised(self.manifest()))

    @property
    def content_hash(self) -> str:
        """Return sha256 hex of :meth:`canonical`."""
        return sha256_hex(self.canonical())

    def to_dict(self) -> dict[str, Any]:
        """Return the atlas bundle: the manifest and its ``content_hash``."""
        return {**self.manifest(), "content_hash": self.content_hash}

    def ranked(self, by: str, top: int) -> list[dict[str, Any]]:
        """Return the ``top`` turns by ``by`` ("betweenness", "frequency" or "bridge"), ties
        broken by the other two and then the turn id; rows with 0 left out."""
        others = [m for m in ("betweenness", "frequency", "bridge") if m != by]
        rows = [r for r in self.influence if getattr(r, by) > 0]
        rows.sort(key=lambda r: (-getattr(r, by), -getattr(r, others[0]),
                                 -getattr(r, others[1]), r.turn))
        return [r.to_dict() for r in rows[:top]]

    def summary(self, top: int = 10) -> dict[str, Any]:
        """Return the figures without the matrix and the full table: sizes, the overlap's
        mean and maximum off the diagonal and how many pairs overlap at all, and the
        ``top`` turns by betweenness, by frequency and by bridge score."""
        n = len(self.slices)
        off = self.overlap[~np.eye(n, dtype=bool)] if n > 1 else np.zeros(0)
        return {"schema_version": SCHEMA_VERSION,
                "policy": {"name": self.policy.name, "params_hash": self.policy.params_hash},
                "budget": self.budget, "anchors": n, "turns": len(self.influence),
                "slice_turns": int(sum(len(s.turns) for s in self.slices)),
                "overlap": {"mean": _q(float(off.mean())) if len(off) else 0.0,
                            "max": _q(float(off.max())) if len(off) else 0.0,
                            "overlapping_pairs": int((off > 0).sum() // 2)},
                "bridges": int(sum(1 for r in self.influence if r.bridge > 0)),
                "central": self.ranked("betweenness", top),
                "frequent": self.ranked("frequency", top),
                "bridging": self.ranked("bridge", top),
                "centrality": dict(self.centrality), "content_hash": self.content_hash}


def _quantised(value: Any) -> Any:
    """Return ``value`` with every float replaced by its 10⁻⁶-quantised integer."""
    if isinstance(value, float):
        return quantise(value)
    if isinstance(value, dict):
        return {k: _quantised(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_quantised(v) for v in value]
    return value


def build_atlas(provenance: Any, anchors: Sequence[str], policy: str = DEFAULT_POLICY,
                budget: int | None = None, samples: int = SAMPLES) -> Atlas:
    """Return the atlas of ``anchors`` (in that order, repeats kept) under ``policy``, each
    slice cut to ``budget`` tokens when given.

    ``provenance`` is a palace's :class:`~palazzo.provenance.kernel.Provenance`. Raises
    NotFound for an unknown anchor or policy, ValidationError for no anchors, more than
    :data:`MAX_ANCHORS`, or a budget an anchor alone exceeds. Cost: the batch slicing, one
    sparse product for overlap and bridges, O(Σ f²) for the bridge groups, and betweenness
    (:func:`betweenness`) on the atlas graph; ``palazzo bench atlas`` measures it.
    """
    anchors = list(anchors)
    if not 1 <= len(anchors) <= MAX_ANCHORS:
        raise ValidationError(f"an atlas takes 1 to {MAX_ANCHORS} anchors, got {len(anchors)}")
    rules = provenance.policies.get(policy)
    bundles = provenance.slice_many(anchors, rules.name, with_content=False, budget=budget)
    slices = tuple(AtlasSlice(b.fields.anchor_turn_id, b.fields.slice_id,
                              b.fields.graph_snapshot_hash, tuple(sorted(t.id for t in b.turns)))
                   for b in bundles)
    ids, matrix = _incidence([s.turns for s in slices])  # one incidence, one product
    shared = _intersections(matrix)
    frequency = _frequency(ids, matrix)
    bridge = _bridges(ids, matrix, shared)
    conv = provenance.palace.conversations
    between, how = betweenness(conv, ids, samples=samples)
    influence = tuple(Influence(t, conv.turns[t].conversation, frequency[t], between[t],
                                bridge[t]) for t in ids)
    return Atlas(rules, budget, slices, _jaccard(shared), influence, how)
