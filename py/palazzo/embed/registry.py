"""Embedders by name: the one way every host makes one.

``minilm`` (needs its weights file), ``tfidf``, ``hash``, and ``auto``: MiniLM when its weights
are found, else the hash embedder (no model files, no fitting). The command line, the MCP
server and the benchmarks all come through :func:`choose`, so ``auto`` picks the same
everywhere, and the :class:`Choice` says what it picked and why. The browser worker gets its
MiniLM weights from the page instead (fetched, not found on disk) and wraps them the same way.

Every embedder comes wrapped in the LRU cache, so the same text is never embedded twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from palazzo.embed import Embedder
from palazzo.embed.cache import CachedEmbedder
from palazzo.embed.hashing import HashEmbedder
from palazzo.embed.tfidf import TfidfEmbedder
from palazzo.errors import PalazzoError

NAMES = ("auto", "minilm", "tfidf", "hash")
NO_WEIGHTS = ("MiniLM weights not found: build the site (npm run build) and set "
              "PALAZZO_MINILM=dist/vendor/models/minilm/minilm.npz, or pick --embedder tfidf")


@dataclass(slots=True, frozen=True)
class Choice:
    """An embedder made by name: what was asked, what was picked and why."""

    embedder: Embedder
    asked: str
    picked: str
    reason: str

    def describe(self) -> str:
        """Return one line for a host to show, e.g. ``auto picked hash: MiniLM weights ...``."""
        head = self.picked if self.asked == self.picked else f"{self.asked} picked {self.picked}"
        return f"{head}: {self.reason}"


def choose(name: str, weights: str | Path | None = None, cache_size: int = 4096) -> Choice:
    """Return the :class:`Choice` of the embedder called ``name`` (one of :data:`NAMES`).

    ``minilm`` without weights is a clear :class:`PalazzoError`; ``auto`` then picks ``hash``
    and says so. Cost: a few ``stat`` calls, plus reading the weights (~45 MB) for MiniLM.
    """
    if name == "auto":
        try:
            inner, reason = _minilm(weights), "its weights were found"
            picked = "minilm"
        except (PalazzoError, ImportError, OSError) as err:
            inner, reason, picked = _hash(), f"{err}", "hash"
    elif name == "minilm":
        inner, picked, reason = _minilm(weights), "minilm", "asked for by name"
    elif name == "hash":
        inner, picked, reason = _hash(), "hash", "asked for by name"
    elif name == "tfidf":
        inner, picked, reason = TfidfEmbedder(), "tfidf", "asked for by name"
    else:
        raise PalazzoError(f"no embedder named {name!r}; choose one of {', '.join(NAMES)}")
    return Choice(CachedEmbedder(inner, maxsize=cache_size), name, picked, reason)


def make(name: str, weights: str | Path | None = None, cache_size: int = 4096) -> Embedder:
    """Return the cached embedder called ``name``: :func:`choose`'s embedder."""
    return choose(name, weights, cache_size).embedder


def _hash() -> Embedder:
    return HashEmbedder()


def _minilm(weights: str | Path | None) -> Embedder:
    # Imported here: MiniLM's module is the largest of the embedders and hosts that ask for
    # hash or tfidf never need it.
    from palazzo.embed.minilm import MiniLMEmbedder, find_weights

    path = find_weights(weights)
    if path is None:
        raise PalazzoError(NO_WEIGHTS)
    return MiniLMEmbedder(path)
