"""The LRU embedding cache: one inner call per batch, keyed by fingerprint and text."""

import numpy as np
import pytest

from palazzo.embed import Embedder
from palazzo.embed.cache import CachedEmbedder, CacheInfo
from palazzo.embed.hashing import HashEmbedder


class Recording:
    """An embedder that records every batch it is asked for."""

    name = "recording"
    dim = 4

    def __init__(self) -> None:
        self.calls: list[list[str]] = []
        self.version = 1

    @property
    def fingerprint(self) -> str:
        return f"recording-v{self.version}"

    def embed(self, texts):
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = self.version
        return out


def test_same_protocol_as_the_inner_embedder():
    cached = CachedEmbedder(HashEmbedder(dim=32))
    assert isinstance(cached, Embedder)
    assert (cached.name, cached.dim, cached.fingerprint) == ("hash", 32, "hash-32-v1")


def test_batches_embed_only_distinct_misses_in_one_call():
    inner = Recording()
    cached = CachedEmbedder(inner)
    first = cached.embed(["a", "bb", "a"])
    assert inner.calls == [["a", "bb"]]
    assert cached.cache_info() == CacheInfo(hits=1, misses=2, size=2, maxsize=4096)
    second = cached.embed(["bb", "ccc", "a", "ccc"])
    assert inner.calls == [["a", "bb"], ["ccc"]]
    assert cached.cache_info() == CacheInfo(hits=4, misses=3, size=3, maxsize=4096)
    np.testing.assert_array_equal(second[[0, 2]], first[[1, 0]])
    np.testing.assert_array_equal(second, inner.embed(["bb", "ccc", "a", "ccc"]))
    cached.embed(["a", "bb"])
    assert len(inner.calls) == 3  # the direct inner.embed above, and no new cached call


def test_results_equal_the_inner_embedder():
    texts = ["the cat sat", "", "a dog", "the cat sat"]
    np.testing.assert_array_equal(
        CachedEmbedder(HashEmbedder()).embed(texts), HashEmbedder().embed(texts)
    )
    assert CachedEmbedder(HashEmbedder()).embed([]).shape == (0, 384)


def test_least_recently_used_is_evicted():
    inner = Recording()
    cached = CachedEmbedder(inner, maxsize=2)
    cached.embed(["a"])
    cached.embed(["b"])
    cached.embed(["a"])  # a is now the most recent
    cached.embed(["c"])  # evicts b
    inner.calls.clear()
    cached.embed(["a", "c"])
    assert inner.calls == []
    cached.embed(["b"])
    assert inner.calls == [["b"]]
    assert cached.cache_info().size == 2


def test_a_new_fingerprint_never_gets_old_vectors():
    inner = Recording()
    cached = CachedEmbedder(inner)
    old = cached.embed(["a"])
    inner.version = 2  # e.g. a refitted TF-IDF
    new = cached.embed(["a"])
    assert inner.calls == [["a"], ["a"]]
    assert not np.array_equal(old, new)


def test_callers_cannot_corrupt_the_cache():
    cached = CachedEmbedder(Recording())
    out = cached.embed(["a"])
    out[:] = 99.0
    assert cached.embed(["a"]).max() == 1.0


def test_maxsize_zero_caches_nothing_and_clear_resets():
    inner = Recording()
    cached = CachedEmbedder(inner, maxsize=0)
    cached.embed(["a"])
    cached.embed(["a"])
    assert len(inner.calls) == 2 and cached.cache_info().size == 0
    cached.clear()
    assert cached.cache_info() == CacheInfo(0, 0, 0, 0)
    with pytest.raises(ValueError):
        CachedEmbedder(inner, maxsize=-1)
    with pytest.raises(TypeError):
        cached.embed("one string")


@pytest.mark.cpython_only  # (Pyodide starts no threads)
def test_two_threads_share_one_cache_safely(race):
    """The palace server's two copies of a palace share their embedder: a look-up in one
    thread and an eviction in another must not meet halfway (a KeyError before the lock)."""
    cache = CachedEmbedder(HashEmbedder(dim=16), maxsize=8)
    texts = [f"query {i}" for i in range(12)]
    expected = HashEmbedder(dim=16).embed(texts)

    def work(k):
        for _ in range(300):
            for i in range(k, k + 8):
                got = cache.embed([texts[i % 12]])
                assert np.array_equal(got[0], expected[i % 12])

    assert race(work) == []
