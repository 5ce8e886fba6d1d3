"""Embedders that make a journal replay exact: one records every vector an operation makes,
the other answers a replay with exactly those vectors.

A journaled operation that embeds (a new drawer, an edited one, a navigation goal) runs with a
:class:`RecordingEmbedder` in front of the palace's embedder; the journal record keeps the
embedder's name, fingerprint and dimension and each vector (float32, base64) under the
sha256 of its text. Replay runs the same operation with a :class:`RecordedEmbedder` built from
the record, so the palace after a boot holds the vectors, SIMILAR_TO links, paths and
deposits the live palace had, whichever embedder the host attaches afterwards (or none), and
a drawer that took minutes to embed is not embedded again on every boot.

Cost: about 2 KB of journal per 384-dimensional vector; replay decodes instead of embedding.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from palazzo.embed import Embedder


def text_key(text: str) -> str:
    """Return the key a text's vector is recorded under: 32 hex digits of its sha256
    (lone surrogates, which JSON admits, are hashed as they are)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def encode_vector(vector: np.ndarray) -> str:
    """Return ``vector`` as base64 of little-endian float32."""
    return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")


def decode_vector(text: str, dim: int) -> np.ndarray | None:
    """Return the float32 vector ``encode_vector`` wrote, or None when it is not one of
    ``dim`` finite components."""
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if len(raw) != 4 * dim:
        return None
    vec = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    return vec if np.all(np.isfinite(vec)) else None


class RecordingEmbedder:
    """``inner`` with the same name, dimension and fingerprint, keeping every vector it hands
    out in :attr:`vectors` (text key -> base64)."""

    def __init__(self, inner: Embedder) -> None:
        self.wrapped = inner
        self.vectors: dict[str, str] = {}

    @property
    def name(self) -> str:
        return self.wrapped.name

    @property
    def dim(self) -> int:
        return self.wrapped.dim

    @property
    def fingerprint(self) -> str:
        return self.wrapped.fingerprint

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return ``inner.embed(texts)`` and record each row. Cost: the inner call plus one
        sha256 and one base64 encoding per text."""
        out = self.wrapped.embed(texts)
        for text, row in zip(texts, out, strict=True):
            self.vectors[text_key(text)] = encode_vector(row)
        return out

    def effects(self) -> dict[str, Any]:
        """Return the record's ``embedder`` effect: name, fingerprint, dim and the vectors."""
        return {"name": self.name, "fingerprint": self.fingerprint, "dim": int(self.dim),
                "vectors": dict(self.vectors)}


class RecordedEmbedder:
    """Answers ``embed`` from recorded vectors only: the embedder a replayed record ran with.

    A text that was not recorded gets an all-zero row (no vector: ``reindex`` fills it later)
    and is counted in :attr:`missing`; nothing is ever computed.
    """

    def __init__(self, name: str, fingerprint: str, dim: int) -> None:
        self.name = name
        self.dim = dim
        self._fingerprint = fingerprint
        self.vectors: dict[str, str] = {}
        self.missing = 0

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @classmethod
    def from_effects(cls, effect: dict[str, Any]) -> RecordedEmbedder:
        """Return the embedder a record's ``embedder`` effect describes (ValueError when the
        effect is not one)."""
        name, fp, dim = effect.get("name"), effect.get("fingerprint"), effect.get("dim")
        vectors = effect.get("vectors", {})
        if not isinstance(name, str) or not isinstance(fp, str) or isinstance(dim, bool) or \
                not isinstance(dim, int) or not 0 < dim <= 65536 or \
                not isinstance(vectors, dict):
            raise ValueError("the record's embedder effect is malformed")
        out = cls(name, fp, dim)
        out.vectors = vectors
        return out

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return the recorded (len(texts), dim) float32 vectors. Cost: a decode per text."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            coded = self.vectors.get(text_key(text))
            vec = None if not isinstance(coded, str) else decode_vector(coded, self.dim)
            if vec is None:
                self.missing += 1
            else:
                out[i] = vec
        return out
