"""The hashing embedder: words and character trigrams hashed into signed buckets.

Needs no fitting and no weights, so it works from the first moment in any host. Quality is
lexical (it matches shared words and word pieces, not meanings), well below MiniLM.

Features of a text: its retrieval terms (:func:`palazzo.retrieval.bm25.tokenize`, English
stopwords dropped), each with weight ``1 + ln(count)``, and the character trigrams of each
term padded with ``<`` and ``>`` (``cat`` -> ``<ca``, ``cat``, ``at>``), each with weight
``TRIGRAM_WEIGHT · (1 + ln(count))``. A feature goes to bucket ``h mod dim`` with sign
``±1`` from its 64-bit BLAKE2b hash ``h`` (never Python's salted ``hash()``), so vectors are
the same in every process and on every platform. The sum is L2-normalised; a text without
terms gets the zero vector.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Sequence

import numpy as np

from palazzo.retrieval.bm25 import ENGLISH_STOPWORDS, tokenize

TRIGRAM_WEIGHT = 0.5
# Bounds the per-instance memos (feature -> bucket and sign, term -> trigrams); each is
# cleared when full.
_MEMO_LIMIT = 1 << 17


def feature_hash(feature: str) -> int:
    """Return the unsigned 64-bit BLAKE2b hash of ``feature`` (UTF-8). Cost: O(len)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def features(text: str, grams: dict[str, list[str]] | None = None) -> Counter[str]:
    """Return the feature counts of ``text``: ``w:`` + term and ``c:`` + trigram keys, words
    first, each key where it first occurs.

    The prefixes keep a word and an equal trigram (``cat``) apart. ``grams`` (an embedder's
    memo, term -> its trigram keys) is read and filled when given, so a term seen before
    costs one lookup. Cost: O(len(text)).
    """
    terms = tokenize(text, ENGLISH_STOPWORDS)
    feats = Counter(["w:" + t for t in terms])
    memo = {} if grams is None else grams
    flat: list[str] = []
    for t in terms:
        keys = memo.get(t)
        if keys is None:
            padded = f"<{t}>"
            keys = memo[t] = ["c:" + padded[j : j + 3] for j in range(len(padded) - 2)]
        flat += keys
    feats.update(flat)
    return feats


class HashEmbedder:
    """Deterministic feature-hashing embedder (name ``hash``), ``dim`` buckets.

    ``embed`` costs O(total text length) plus one BLAKE2b call per distinct feature not seen
    recently by this instance.
    """

    name = "hash"

    def __init__(self, dim: int = 384) -> None:
        if not isinstance(dim, int) or dim < 1:
            raise ValueError(f"dim must be a positive integer, got {dim!r}")
        self.dim = dim
        # feature -> its code, an index into _slot (bucket) and _weight (signed weight)
        self._memo: dict[str, int] = {}
        self._slot: list[int] = []
        self._weight: list[float] = []
        self._grams: dict[str, list[str]] = {}  # term -> its trigram feature keys
        # The memos grow and are cleared as texts are embedded; two threads may embed with
        # one embedder (the palace server's two copies of a palace share it).
        self._lock = threading.Lock()

    @property
    def fingerprint(self) -> str:
        """``hash-{dim}-v1``: changes only if the dimension or the feature recipe does."""
        return f"hash-{self.dim}-v1"

    def _code(self, feature: str) -> int:
        """Return the memo code of ``feature``: its index in ``_slot`` (bucket) and
        ``_weight`` (``±1`` from the hash's top bit times 1 for a word, TRIGRAM_WEIGHT for a
        trigram: a power of two, so folding it in here changes no bit of the result). The
        bucket takes the hash's low bits (mod dim), the sign its top bit: independent."""
        h = feature_hash(feature)
        weight = 1.0 if feature[0] == "w" else TRIGRAM_WEIGHT
        code = self._memo[feature] = len(self._slot)
        self._slot.append(h % self.dim)
        self._weight.append(-weight if h >> 63 else weight)
        return code

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 array of unit rows (zero rows for no terms).

        The features of all texts are gathered first, then summed into their buckets by one
        ``np.bincount`` (a text's features in the same order as one text at a time, so every
        bucket adds up bit for bit as before). Cost: O(total length) for the features, a dict
        lookup a feature seen before, one BLAKE2b a new one, and O(len(texts) · dim)."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        n, dim = len(texts), self.dim
        codes: list[int] = []
        counts: list[int] = []
        sizes = np.zeros(n, dtype=np.intp)
        with self._lock:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
                self._slot.clear()
                self._weight.clear()
            memo, code = self._memo, self._code
            for i, text in enumerate(texts):
                feats = self._features(text)
                codes += [memo[f] if f in memo else code(f) for f in feats]
                counts += feats.values()
                sizes[i] = len(feats)
            at = np.asarray(codes, dtype=np.intp)
            slot = np.asarray(self._slot, dtype=np.intp)[at]
            weight = np.asarray(self._weight, dtype=np.float64)[at]
        val = weight * (1.0 + np.log(np.asarray(counts, dtype=np.float64)))
        rows = np.repeat(np.arange(n, dtype=np.intp), sizes)
        sums = np.bincount(rows * dim + slot, weights=val, minlength=n * dim).reshape(n, dim)
        out = np.zeros((n, dim), dtype=np.float32)
        for i in np.flatnonzero(sizes).tolist():
            vec = sums[i]
            norm = float(np.sqrt(vec @ vec))
            if norm > 0.0:
                out[i] = vec / norm
        return out

    def _features(self, text: str) -> Counter[str]:
        """Return :func:`features` of ``text`` with this instance's memo of each term's
        trigram keys (cleared when full). Cost: O(terms) lookups for terms seen before."""
        if len(self._grams) >= _MEMO_LIMIT:
            self._grams.clear()
        return features(text, self._grams)
