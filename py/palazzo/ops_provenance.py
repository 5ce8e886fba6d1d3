"""Operations of provenance (issue 5). Scaffold."""

from __future__ import annotations

from palazzo.ops import Registry


def register(reg: Registry) -> None:
    """Add the operations to ``reg``. Returns None; a second call raises."""
