"""Query trails: a reward remembered with the query that earned it (issue 32, point 3).

``bench learning`` showed what a reward tied only to a drawer does: a search that reads the
drawer's exploitation pheromone finds the rewarded drawer again for the question that earned
it (R@1 .48 → .76 on dev50) and pushes it on every other question too (held-apart R@1 .40 →
.24 at weight 1). A trail keeps the reward with the query's region instead, and a search
reads only the trails whose region holds its own query.

The region is the query's words: its distinct BM25 terms (stemmed, stopwords out: the text
index's tokenizer), and a later query is near a trail as far as their terms overlap
(Jaccard |A ∩ B| / |A ∪ B|). A trail counts from an overlap of :data:`NEAR` on, fully at 1:
its pull on a drawer is strength · (overlap − NEAR) / (1 − NEAR). Words, not vectors: the
same region in every language and with no embedder, nothing to embed when a journal record
is replayed, and the same answer at every boot. The same question asked again (overlap 1)
gets the whole trail; one that shares a name and a verb with it ("Where did I graduate?"
after "What degree did I graduate with?": overlap 1/2) gets none.

Trails decay with the exploitation pheromone (:func:`palazzo.stigmergy.pheromone.decay`) and
go below :data:`FLOOR`; at most :data:`MAX_TRAILS` are kept (the weakest go first). Drawer
ids are stored as given: an id a drawer had before an edit still finds it (the store's
aliases), a deleted drawer's trail finds nothing and fades.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from palazzo.core.jsontext import records
from palazzo.errors import ImportRejected

NEAR = 0.5  # term overlap from which a trail starts to count
FLOOR = 1e-3  # a trail weaker than this is forgotten
MAX_TRAILS = 20_000  # (query region, drawer) pairs kept; the weakest go first
MAX_TERMS = 64  # terms of a query kept as its region (a query of 10,000 characters: its first)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Return the Jaccard overlap of two term sets (0 when either is empty). O(|a| + |b|)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


def pull(near: float) -> float:
    """Return the share of a trail that a query at term overlap ``near`` gets: 0 up to
    :data:`NEAR`, rising linearly to 1 at the same terms."""
    return max(0.0, (near - NEAR) / (1.0 - NEAR))


class QueryTrails:
    """Every trail of a palace: {query terms: {drawer id: strength}}, and which remembered
    queries hold each term (``by_term``: a query shares no trail with one it has no term in
    common with, so :meth:`strengths` visits only those that share one).

    Cost: see :meth:`strengths`; at 20,000 drawers and 20,000 trails a search with the term
    on took 28 ms against 10 ms off when it visited every trail (docs/benchmarks.md,
    "Learning from use").
    """

    __slots__ = ("by_term", "by_terms")

    def __init__(self) -> None:
        self.by_terms: dict[frozenset[str], dict[str, float]] = {}
        self.by_term: dict[str, set[frozenset[str]]] = {}

    def _trail(self, terms: frozenset[str]) -> dict[str, float]:
        """Return the trail of ``terms``, made (and indexed by its terms) when new."""
        trail = self.by_terms.get(terms)
        if trail is None:
            trail = self.by_terms[terms] = {}
            for t in terms:
                self.by_term.setdefault(t, set()).add(terms)
        return trail

    def _drop(self, terms: frozenset[str]) -> None:
        """Forget the (empty) trail of ``terms`` and its place in the index."""
        del self.by_terms[terms]
        for t in terms:
            keys = self.by_term[t]
            keys.discard(terms)
            if not keys:
                del self.by_term[t]

    def __len__(self) -> int:
        return sum(len(d) for d in self.by_terms.values())

    @staticmethod
    def region(tokenizer: Callable[[str], list[str]], query: str) -> frozenset[str]:
        """Return the region of ``query``: its first :data:`MAX_TERMS` distinct terms under
        ``tokenizer`` (empty for a query of stopwords only, which leaves no trail)."""
        return frozenset(list(dict.fromkeys(tokenizer(query)))[:MAX_TERMS])

    def deposit(self, terms: frozenset[str], drawer_ids: Sequence[str],
                rewards: Iterable[float]) -> int:
        """Add ``rewards`` (one a drawer) to the trails from region ``terms`` to
        ``drawer_ids``; return how many trails the palace now holds. An empty region leaves
        nothing. Cost: O(drawers), plus O(trails) when the cap is reached."""
        if terms:
            trail = self._trail(terms)
            for did, r in zip(drawer_ids, rewards, strict=True):
                if r > 0:
                    trail[did] = trail.get(did, 0.0) + float(r)
            if not trail:
                self._drop(terms)
        if len(self) > MAX_TRAILS:
            self._forget_weakest(len(self) - MAX_TRAILS)
        return len(self)

    def _forget_weakest(self, n: int) -> None:
        flat = sorted((s, sorted(t), d) for t, trail in self.by_terms.items()
                      for d, s in trail.items())
        for _, terms, did in flat[:n]:
            key = frozenset(terms)
            del self.by_terms[key][did]
            if not self.by_terms[key]:
                self._drop(key)

    def decay(self, factor: float) -> int:
        """Multiply every trail by ``factor`` and forget those under :data:`FLOOR`; return how
        many were forgotten. O(trails)."""
        gone = 0
        for terms in list(self.by_terms):
            trail = self.by_terms[terms]
            for did in list(trail):
                trail[did] *= factor
                if trail[did] < FLOOR:
                    del trail[did]
                    gone += 1
            if not trail:
                self._drop(terms)
        return gone

    def strengths(self, terms: frozenset[str]) -> dict[str, float]:
        """Return {drawer id: Σ strength · pull(overlap)} over the trails near region
        ``terms`` (empty when none is). Cost: O(remembered queries sharing a term with it),
        counted through ``by_term``, plus the drawers of those near enough."""
        out: dict[str, float] = {}
        shared: dict[frozenset[str], int] = {}
        for t in terms:
            for key in self.by_term.get(t, ()):
                shared[key] = shared.get(key, 0) + 1
        for key, n in shared.items():
            share = pull(n / (len(terms) + len(key) - n))
            if share > 0:
                for did, s in self.by_terms[key].items():
                    out[did] = out.get(did, 0.0) + share * s
        return out

    def to_json(self) -> list[dict[str, Any]]:
        """Return the trails as records {"terms": sorted terms, "drawers": {id: strength}},
        ordered by their terms (the palace file's and the snapshot's form)."""
        return [{"terms": sorted(t), "drawers": dict(trail)}  # (JSON floats are exact)
                for t, trail in sorted(self.by_terms.items(), key=lambda kv: sorted(kv[0]))]

    @classmethod
    def from_json(cls, value: Any, where: str) -> QueryTrails:
        """Return the trails of a ``trails`` list (:meth:`to_json`'s form). Raises
        ImportRejected naming the bad place: terms that are not a non-empty list of distinct
        strings, a drawer id that is not a string, a strength that is not a positive number.
        Cost: O(trails)."""
        out = cls()
        for at, rec in records(value, where):
            terms, drawers = rec.get("terms"), rec.get("drawers")
            if not isinstance(terms, list) or not terms or len(terms) > MAX_TERMS or \
                    not all(isinstance(t, str) and t for t in terms) or \
                    len(set(terms)) != len(terms):
                raise ImportRejected(f"{at}.terms must be a list of distinct words")
            if not isinstance(drawers, dict) or not drawers:
                raise ImportRejected(f"{at}.drawers must map drawer ids to strengths")
            key = frozenset(terms)
            if key in out.by_terms:
                raise ImportRejected(f"{at}.terms appear twice")
            trail = out._trail(key)
            for did, s in drawers.items():
                if isinstance(s, bool) or not isinstance(s, int | float) or not 0 < s < 1e9:
                    raise ImportRejected(f"{at}.drawers[{did!r}] must be a positive number")
                trail[str(did)] = float(s)
        if len(out) > MAX_TRAILS:
            raise ImportRejected(f"{where} holds {len(out)} trails, more than {MAX_TRAILS}")
        return out
