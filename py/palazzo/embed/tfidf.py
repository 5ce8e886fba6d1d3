"""The TF-IDF embedder: fitted term weights, projected to a fixed dimension at random.

A text's vector is ``Σ_t (1 + ln tf_t) · idf_t · R_t``, L2-normalised, over its retrieval
terms (:func:`palazzo.retrieval.bm25.tokenize`), where ``idf_t = ln((1 + N)/(1 + df_t)) + 1``
(smooth idf; before any fit ``N = 0`` and every ``df`` is 0, so every idf is 1) and ``R_t`` is
the term's row of a sparse Achlioptas random projection: each of its ``dim`` entries is
``+√3`` or ``−√3`` with probability 1/6 each and 0 otherwise. ``R_t`` is derived from
SHAKE-256 of the seed and the term, so no vocabulary-sized matrix is stored, any new term gets
a row, and vectors agree across processes and platforms. Inner products of projected vectors
approximate those of the TF-IDF vectors (Johnson–Lindenstrauss).

Fitting counts document frequencies; the fingerprint hashes the seed, dimension, stopwords and
the sorted ``df`` table with ``N``, so refitting on other texts changes it and a palace never
mixes vectors of two fits. :meth:`TfidfEmbedder.state` is JSON-able and round-trips exactly.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from palazzo.retrieval.bm25 import ENGLISH_STOPWORDS, tokenize

STATE_VERSION = 1
_SQRT3 = float(np.sqrt(3.0))
# Bounds the per-instance memo of term -> projection row; it is cleared when full.
_MEMO_LIMIT = 1 << 15


def projection_row(term: str, dim: int, seed: int) -> np.ndarray:
    """Return the term's projection row: int8 entries in {-1, 0, +1} (to scale by √3).

    Each entry comes from 16 bits of SHAKE-256(seed, term): value mod 6 is 0 -> +1, 1 -> -1,
    else 0 (the bias of 65536 mod 6 = 4 is below 1e-4). Cost: O(dim).
    """
    digest = hashlib.shake_256(f"{seed}\x1f{term}".encode()).digest(2 * dim)
    draw = np.frombuffer(digest, dtype="<u2") % 6
    row = np.zeros(dim, dtype=np.int8)
    row[draw == 0] = 1
    row[draw == 1] = -1
    return row


class TfidfEmbedder:
    """TF-IDF with sublinear tf and smooth idf, randomly projected to ``dim`` (name ``tfidf``).

    ``embed`` costs O(total text length + distinct terms · dim); ``fit`` O(total length).
    """

    name = "tfidf"

    def __init__(
        self,
        dim: int = 384,
        seed: int = 0,
        *,
        stopwords: Iterable[str] | None = ENGLISH_STOPWORDS,
    ) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        if not isinstance(seed, int):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.dim = dim
        self.seed = seed
        self.stopwords: frozenset[str] = frozenset(stopwords or ())
        self.n_docs = 0
        self.df: dict[str, int] = {}
        self._fingerprint: str | None = None
        self._memo: dict[str, np.ndarray] = {}

    # --- fitting --------------------------------------------------------------------------

    def fit(self, texts: Iterable[str]) -> TfidfEmbedder:
        """Set the document frequencies from ``texts`` (replacing any earlier fit); return self.

        Cost: O(total text length).
        """
        df: Counter[str] = Counter()
        n = 0
        for text in texts:
            df.update(set(self._terms(text)))
            n += 1
        self.n_docs = n
        self.df = dict(df)
        self._fingerprint = None
        return self

    def idf(self, terms: Sequence[str]) -> np.ndarray:
        """Return the float64 smooth idf of each term (1 for every term before a fit)."""
        df = np.fromiter((self.df.get(t, 0) for t in terms), dtype=np.float64, count=len(terms))
        return np.log((1.0 + self.n_docs) / (1.0 + df)) + 1.0

    @property
    def fingerprint(self) -> str:
        """``tfidf-{dim}-{16 hex}``: a hash of seed, stopwords, N and the sorted df table."""
        if self._fingerprint is None:
            blob = json.dumps(
                [self.dim, self.seed, sorted(self.stopwords), self.n_docs, sorted(self.df.items())],
                ensure_ascii=False,
                separators=(",", ":"),
            ).encode("utf-8")
            digest = hashlib.blake2b(blob, digest_size=8).hexdigest()
            self._fingerprint = f"tfidf-{self.dim}-{digest}"
        return self._fingerprint

    # --- state ----------------------------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """Return a JSON-able dict from which :meth:`from_state` rebuilds this embedder."""
        return {
            "name": self.name,
            "version": STATE_VERSION,
            "dim": self.dim,
            "seed": self.seed,
            "stopwords": sorted(self.stopwords),
            "n_docs": self.n_docs,
            "df": dict(sorted(self.df.items())),
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Take the fit (N and the df table) of ``state``, which must describe an embedder
        like this one (same dim, seed and stopwords); ValueError otherwise, and then nothing
        changes. Lets a host's fresh embedder resume the fit its palace's vectors were made
        with. Cost: O(size of the df table)."""
        other = type(self).from_state(state)
        if (other.dim, other.seed, other.stopwords) != (self.dim, self.seed, self.stopwords):
            raise ValueError("the stored fit is for a differently configured tfidf embedder")
        self.n_docs, self.df = other.n_docs, other.df
        self._fingerprint = None

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> TfidfEmbedder:
        """Return the embedder that :meth:`state` described; ValueError if it is not one."""
        if state.get("name") != cls.name or state.get("version") != STATE_VERSION:
            raise ValueError(
                f"not a tfidf embedder state of version {STATE_VERSION}: "
                f"name={state.get('name')!r}, version={state.get('version')!r}"
            )
        df = state["df"]
        n_docs = state["n_docs"]
        if not isinstance(n_docs, int) or n_docs < 0 or not isinstance(df, dict):
            raise ValueError("tfidf state needs a non-negative n_docs and a df table")
        if any(not isinstance(c, int) or not 0 < c <= n_docs for c in df.values()):
            raise ValueError("tfidf state has document frequencies outside 1..n_docs")
        emb = cls(dim=state["dim"], seed=state["seed"], stopwords=state["stopwords"])
        emb.n_docs = n_docs
        emb.df = {str(t): int(c) for t, c in df.items()}
        return emb

    # --- embedding ------------------------------------------------------------------------

    def _terms(self, text: str) -> list[str]:
        return tokenize(text, self.stopwords)

    def _rows(self, terms: Sequence[str]) -> np.ndarray:
        """Return the (len(terms), dim) int8 projection rows of ``terms``."""
        if len(self._memo) + len(terms) > _MEMO_LIMIT:
            self._memo.clear()
        rows = []
        for t in terms:
            row = self._memo.get(t)
            if row is None:
                row = self._memo[t] = projection_row(t, self.dim, self.seed)
            rows.append(row)
        return np.stack(rows)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 array of unit rows (zero rows for no terms)."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            counts = Counter(self._terms(text))
            if not counts:
                continue
            terms = list(counts)
            tf = np.fromiter(counts.values(), dtype=np.float64, count=len(terms))
            weights = (1.0 + np.log(tf)) * self.idf(terms)
            vec = _SQRT3 * (weights @ self._rows(terms))
            norm = float(np.sqrt(vec @ vec))
            if norm > 0.0:
                out[i] = vec / norm
        return out
