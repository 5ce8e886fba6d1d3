"""Embedders by name: the one way every host makes one.

``minilm`` (needs its weights file), ``tfidf``, ``hash``, and ``auto``: MiniLM when its weights
are found, else the hash embedder (no model files, no fitting). MiniLM runs on ONNX Runtime
(:class:`~palazzo.embed.runtime.OnnxMiniLM`) when ``onnxruntime`` and ``onnx`` are installed
(the ``fast`` extra), else on NumPy (:class:`~palazzo.embed.minilm.MiniLMEmbedder`): the same
vectors and fingerprint either way. The command line, the MCP server and the benchmarks all
come through :func:`choose`, so ``auto`` picks the same everywhere, and the :class:`Choice`
says what it picked, on which runtime, and why; hosts show :meth:`Choice.describe`. (The
command line first fetches missing weights: :mod:`palazzo.hosts.model`.) The browser worker
gets its MiniLM weights from the page instead (fetched, not found on disk) and wraps them the
same way.

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
NO_WEIGHTS = ("MiniLM weights not found (neither $PALAZZO_MINILM nor the per-user cache "
              "file minilm-fp16.npz): the palazzo command fetches them on first use, or set "
              "PALAZZO_MINILM to a minilm.npz, or pick --embedder tfidf")
RUNTIMES = ("auto", "onnx", "numpy")
# What ``auto`` adds when it falls back to hash vectors, so no host does it silently.
HASH_FALLBACK = ("searching with hash vectors, which match words, not meanings (MiniLM finds "
                 "paraphrases)")


@dataclass(slots=True, frozen=True)
class Choice:
    """An embedder made by name: what was asked, what was picked and why."""

    embedder: Embedder
    asked: str
    picked: str
    reason: str
    runtime: str = ""  # what computes the vectors, for minilm: "ONNX Runtime 1.32.0 (CPU)"

    def describe(self) -> str:
        """Return one line for a host to show, e.g. ``auto picked minilm: weights
        ~/.cache/palazzo/minilm-fp16.npz; on ONNX Runtime 1.32.0 (CPU): onnxruntime is
        installed`` or ``auto picked hash: MiniLM weights not found ...``."""
        head = self.picked if self.asked == self.picked else f"{self.asked} picked {self.picked}"
        return f"{head}: {self.reason}"


def choose(name: str, weights: str | Path | None = None, cache_size: int = 4096, *,
           runtime: str = "auto", graph: str | Path | None = None) -> Choice:
    """Return the :class:`Choice` of the embedder called ``name`` (one of :data:`NAMES`).

    ``weights``: the MiniLM weights file (default: :func:`~palazzo.embed.minilm.find_weights`
    looks for it). ``runtime`` (one of :data:`RUNTIMES`): ``auto`` runs MiniLM on ONNX Runtime
    when it is installed and loads, else on NumPy (the reason says which and why); ``onnx``
    requires ONNX Runtime; ``numpy`` never tries it. ``graph``: where ONNX Runtime's graph of
    the weights is kept between runs (None: built in memory on every load, about a second).

    ``minilm`` without weights is a clear :class:`PalazzoError`; ``auto`` then picks ``hash``
    and says so in the reason. Cost: a few ``stat`` calls, plus loading MiniLM (~45 MB read;
    1-2 s).
    """
    if runtime not in RUNTIMES:
        raise PalazzoError(f"no runtime named {runtime!r}; choose one of {', '.join(RUNTIMES)}")
    ran = ""
    if name == "auto":
        try:
            inner, ran, why = _minilm(weights, runtime, graph)
            picked, reason = "minilm", why
        except (PalazzoError, ImportError, OSError) as err:
            inner, picked = _hash(), "hash"
            reason = f"{err}; {HASH_FALLBACK}"
    elif name == "minilm":
        inner, ran, why = _minilm(weights, runtime, graph)
        picked, reason = "minilm", f"asked for by name; {why}"
    elif name == "hash":
        inner, picked, reason = _hash(), "hash", "asked for by name"
    elif name == "tfidf":
        inner, picked, reason = TfidfEmbedder(), "tfidf", "asked for by name"
    else:
        raise PalazzoError(f"no embedder named {name!r}; choose one of {', '.join(NAMES)}")
    return Choice(CachedEmbedder(inner, maxsize=cache_size), name, picked, reason, ran)


def make(name: str, weights: str | Path | None = None, cache_size: int = 4096) -> Embedder:
    """Return the cached embedder called ``name``: :func:`choose`'s embedder."""
    return choose(name, weights, cache_size).embedder


def _hash() -> Embedder:
    return HashEmbedder()


def _minilm(weights: str | Path | None, runtime: str,
            graph: str | Path | None) -> tuple[Embedder, str, str]:
    """Return (MiniLM embedder, its runtime, why: the weights file and the runtime's reason)."""
    # Imported here: MiniLM's modules are the largest of the embedders and hosts that ask for
    # hash or tfidf never need them.
    from palazzo.embed import runtime as ort
    from palazzo.embed.minilm import MiniLMEmbedder, find_weights

    path = find_weights(weights)
    if path is None:
        raise PalazzoError(NO_WEIGHTS if weights is None else f"{NO_WEIGHTS}: no file {weights}")
    if runtime == "numpy":
        why = "NumPy asked for"
    elif not ort.available():
        if runtime == "onnx":
            raise PalazzoError("ONNX Runtime asked for, but onnxruntime and onnx are not "
                               "installed: pip install 'palazzo[fast]'")
        why = ("onnxruntime is not installed (pip install 'palazzo[fast]' runs MiniLM about "
               "2x faster)")
    else:
        try:
            model = ort.OnnxMiniLM(path, graph=graph)
        except Exception as err:  # noqa: BLE001 - any runtime failure leaves NumPy, said aloud
            if runtime == "onnx":
                raise PalazzoError(f"ONNX Runtime could not load {path}: {err}") from err
            why = f"ONNX Runtime failed to load the weights ({type(err).__name__}: {err})"
        else:
            return model, model.runtime, (f"weights {path}; on {model.runtime}: onnxruntime "
                                          "is installed")
    numpy_model = MiniLMEmbedder(path)
    return numpy_model, numpy_model.runtime, f"weights {path}; on {numpy_model.runtime}: {why}"
