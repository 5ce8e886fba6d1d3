"""An LRU cache in front of any embedder, so the same text is never embedded twice.

Entries are keyed by the inner embedder's fingerprint and the text, so a refitted or swapped
model never serves an old vector: stale entries just age out.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from palazzo.embed import Embedder


@dataclass(slots=True, frozen=True)
class CacheInfo:
    """Counters of a :class:`CachedEmbedder`: texts served from the cache (``hits``, in-batch
    repeats included), texts sent to the inner embedder (``misses``), entries held."""

    hits: int
    misses: int
    size: int
    maxsize: int


class CachedEmbedder:
    """Wraps ``inner`` (same ``name``, ``dim``, ``fingerprint``) with an LRU of ``maxsize``
    vectors. ``embed`` makes at most one inner call per batch, for the distinct misses."""

    def __init__(self, inner: Embedder, maxsize: int = 4096) -> None:
        if maxsize < 0:
            raise ValueError(f"maxsize must be >= 0, got {maxsize}")
        self.inner = inner
        self.maxsize = maxsize
        self._entries: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        # Held for each look-up and each store, not for the inner call: two threads may use
        # one cache (the palace server's two copies of a palace share their embedder).
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def cache_info(self) -> CacheInfo:
        """Return the hit/miss counters and the current size. O(1)."""
        return CacheInfo(self._hits, self._misses, len(self._entries), self.maxsize)

    def clear(self) -> None:
        """Drop every cached vector and reset the counters."""
        self._entries.clear()
        self._hits = self._misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return the inner embedder's (len(texts), dim) float32 vectors for ``texts``.

        Cost: O(len(texts)) lookups, plus one inner ``embed`` call on the distinct texts not
        cached. The returned array is a fresh copy the caller may modify.
        """
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts, not one string")
        fp = self.inner.fingerprint
        found: dict[str, np.ndarray] = {}
        missing: dict[str, None] = {}  # insertion-ordered set
        with self._lock:
            for text in texts:
                if text in found or text in missing:
                    continue
                vec = self._entries.get((fp, text))
                if vec is None:
                    missing[text] = None
                else:
                    self._entries.move_to_end((fp, text))
                    found[text] = vec
        if missing:
            fresh = np.asarray(self.inner.embed(list(missing)), dtype=np.float32)
            with self._lock:
                for text, vec in zip(missing, fresh, strict=True):
                    vec = vec.copy()
                    vec.flags.writeable = False
                    found[text] = vec
                    self._remember((fp, text), vec)
        self._misses += len(missing)
        self._hits += len(texts) - len(missing)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = found[text]
        return out

    def _remember(self, key: tuple[str, str], vec: np.ndarray) -> None:
        if self.maxsize == 0:
            return
        self._entries[key] = vec
        self._entries.move_to_end(key)
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)
