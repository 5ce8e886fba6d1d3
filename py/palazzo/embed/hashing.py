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
from collections import Counter
from collections.abc import Sequence

import numpy as np

from palazzo.retrieval.bm25 import ENGLISH_STOPWORDS, tokenize

TRIGRAM_WEIGHT = 0.5
# Bounds the per-instance memo of feature -> (bucket, sign); it is cleared when full.
_MEMO_LIMIT = 1 << 17


def feature_hash(feature: str) -> int:
    """Return the unsigned 64-bit BLAKE2b hash of ``feature`` (UTF-8). Cost: O(len)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little")


def features(text: str) -> Counter[str]:
    """Return the feature counts of ``text``: ``w:`` + term and ``c:`` + trigram keys.

    The prefixes keep a word and an equal trigram (``cat``) apart. Cost: O(len(text)).
    """
    terms = tokenize(text, ENGLISH_STOPWORDS)
    feats = Counter("w:" + t for t in terms)
    for t in terms:
        padded = f"<{t}>"
        feats.update("c:" + padded[i : i + 3] for i in range(len(padded) - 2))
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
        self._memo: dict[str, tuple[int, float]] = {}

    @property
    def fingerprint(self) -> str:
        """``hash-{dim}-v1``: changes only if the dimension or the feature recipe does."""
        return f"hash-{self.dim}-v1"

    def _bucket(self, feature: str) -> tuple[int, float]:
        hit = self._memo.get(feature)
        if hit is None:
            if len(self._memo) >= _MEMO_LIMIT:
                self._memo.clear()
            h = feature_hash(feature)
            # The bucket takes the low bits (mod dim), the sign the top bit: independent.
            hit = self._memo[feature] = (h % self.dim, -1.0 if h >> 63 else 1.0)
        return hit

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return a (len(texts), dim) float32 array of unit rows (zero rows for no terms)."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            feats = features(text)
            if not feats:
                continue
            keys = list(feats)
            slots = [self._bucket(f) for f in keys]
            idx = np.fromiter((b for b, _ in slots), dtype=np.intp, count=len(keys))
            sign = np.fromiter((s for _, s in slots), dtype=np.float64, count=len(keys))
            count = np.fromiter(feats.values(), dtype=np.float64, count=len(keys))
            is_word = np.fromiter((f[0] == "w" for f in keys), dtype=bool, count=len(keys))
            val = sign * (1.0 + np.log(count)) * np.where(is_word, 1.0, TRIGRAM_WEIGHT)
            vec = np.bincount(idx, weights=val, minlength=self.dim)
            norm = float(np.sqrt(vec @ vec))
            if norm > 0.0:
                out[i] = vec / norm
        return out
