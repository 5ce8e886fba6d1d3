"""The ``minilm`` embedder whose forward pass runs elsewhere: the browser's embedding worker.

In the browser, ONNX Runtime runs all-MiniLM-L6-v2 in a worker of its own, four to five
times faster than the NumPy model in Pyodide, and asynchronously, while the engine is
synchronous. So the work is split: this class tokenises (the same WordPiece as the NumPy
model, so the same ids), hands the host padded batches of token ids (:meth:`requests`), takes
the vectors back (:meth:`supply`), and answers :meth:`embed` from what it was given. A text
whose vector has not arrived raises :class:`VectorsPending`, which the engine turns into "no
vector yet" (a new drawer) or "words only" (a search); the host's background embedding then
fills the drawers in.

The vectors are the NumPy model's to ~1e-7 (the graph is built from the same float16
weights, :mod:`palazzo.embed.graph`), so the fingerprint is the NumPy model's too and a palace
moves between the two without re-embedding.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from palazzo.embed.minilm import BATCH_TOKENS, batches
from palazzo.embed.wordpiece import WordPiece
from palazzo.errors import VectorsPending

# Vectors given but not used yet: a host supplies them right before the call that uses
# them, so a few batches' worth is plenty; older ones are dropped first.
KEEP = 4096


@dataclass(slots=True)
class Batch:
    """Token ids of texts to embed together: ``ids`` (count × longest, int32, 0-padded),
    ``lengths`` (tokens of each text, [CLS] and [SEP] included) and the ``texts``."""

    texts: list[str]
    ids: np.ndarray
    lengths: np.ndarray


class RemoteEmbedder:
    """all-MiniLM-L6-v2 vectors (name ``minilm``, 384 dimensions) computed by a host.

    ``vocab`` is the text of ``vocab.txt``, ``fingerprint`` the weights' (the site's
    ``minilm.json`` gives both), ``runtime`` a few words a status line shows ("ONNX Runtime,
    wasm, 1 thread"). Cost of :meth:`requests`: tokenising (pure Python, ~0.1 ms a word in
    Pyodide); of :meth:`embed`: a dictionary lookup a text.
    """

    name = "minilm"
    dim = 384

    def __init__(self, vocab: str, fingerprint: str, max_seq_length: int = 256,
                 runtime: str = "", batch_tokens: int = BATCH_TOKENS) -> None:
        self.tokenizer = WordPiece.from_vocab_text(vocab, max_seq_length)
        self._fingerprint = fingerprint
        self.runtime = runtime
        self.batch_tokens = batch_tokens
        self._given: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def fingerprint(self) -> str:
        """The weights' fingerprint, the same as the NumPy model's for the same npz."""
        return self._fingerprint

    def requests(self, texts: Sequence[str]) -> list[Batch]:
        """Return the batches the host must embed so that :meth:`embed` can answer ``texts``.

        Texts already given are left out; a text with no token gets its all-zero row at once
        (as with every embedder) and needs no batch. Batches are sorted by length and padded
        to about ``batch_tokens`` positions, as the NumPy model batches.
        """
        todo: dict[str, list[int]] = {}
        for text in texts:
            if text in self._given or text in todo:
                continue
            enc = self.tokenizer.encode(text)
            if enc.content_length == 0:
                self._keep(text, np.zeros(self.dim, np.float32))
            else:
                todo[text] = enc.ids
        names = list(todo)
        out = []
        for group in batches([len(todo[t]) for t in names], self.batch_tokens):
            rows = [todo[names[i]] for i in group]
            ids = np.zeros((len(rows), max(len(r) for r in rows)), np.int32)
            for k, row in enumerate(rows):
                ids[k, : len(row)] = row
            out.append(Batch([names[i] for i in group], ids,
                             np.array([len(r) for r in rows], np.int32)))
        return out

    def supply(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Take the host's vectors of ``texts`` (one row each, in order). Returns None."""
        vectors = np.asarray(vectors, np.float32).reshape(len(texts), self.dim)
        for text, row in zip(texts, vectors, strict=True):
            self._keep(text, row.copy())

    def _keep(self, text: str, row: np.ndarray) -> None:
        self._given[text] = row
        self._given.move_to_end(text)
        while len(self._given) > KEEP:
            self._given.popitem(last=False)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return the (len(texts), 384) vectors the host supplied; raise
        :class:`VectorsPending` (nothing returned) when any has not arrived."""
        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of texts; wrap a single text in a list")
        missing = sum(1 for t in dict.fromkeys(texts) if t not in self._given)
        if missing:
            raise VectorsPending(missing)
        out = np.zeros((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            out[i] = self._given[text]
        return out
