"""Embedders by name: ``minilm`` (the default when its weights are found), ``tfidf``, ``hash``.

Every embedder comes wrapped in the LRU cache, so the same text is never embedded twice.
"""

from __future__ import annotations

from pathlib import Path

from palazzo.embed import Embedder
from palazzo.errors import PalazzoError

NAMES = ("minilm", "tfidf", "hash")


def make(name: str, weights: str | Path | None = None, cache_size: int = 4096) -> Embedder:
    """Return a cached embedder called ``name``; minilm without weights is a clear error."""
    from palazzo.embed.cache import CachedEmbedder

    if name == "hash":
        from palazzo.embed.hashing import HashEmbedder

        inner: Embedder = HashEmbedder()
    elif name == "tfidf":
        from palazzo.embed.tfidf import TfidfEmbedder

        inner = TfidfEmbedder()
    elif name == "minilm":
        from palazzo.embed.minilm import MiniLMEmbedder, find_weights

        path = Path(weights) if weights is not None else find_weights()
        if path is None or not Path(path).is_file():
            raise PalazzoError(
                "MiniLM weights not found: build the site (npm run build) and set "
                "PALAZZO_MINILM=dist/vendor/models/minilm/minilm.npz, or pick --embedder tfidf"
            )
        inner = MiniLMEmbedder(path)
    else:
        raise PalazzoError(f"no embedder named {name!r}; choose one of {', '.join(NAMES)}")
    return CachedEmbedder(inner, maxsize=cache_size)


def default(weights: str | Path | None = None) -> Embedder:
    """Return minilm when its weights are found, else tfidf (works with no model files)."""
    try:
        return make("minilm", weights)
    except (PalazzoError, ImportError):
        return make("tfidf")
