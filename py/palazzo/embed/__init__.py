"""Embedders: text to L2-normalised float32 vectors, behind one small protocol.

An embedder has a ``name`` (recorded in the palace JSON), a ``dim`` and a ``fingerprint`` that
changes whenever the vectors it would produce change (other weights, a refitted vocabulary):
vectors with different fingerprints are never mixed in one index.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``embed`` returns a (len(texts), dim) float32 array whose
    rows have unit L2 norm (an all-zero row is allowed only for text with no features)."""

    name: str
    dim: int

    @property
    def fingerprint(self) -> str: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...
