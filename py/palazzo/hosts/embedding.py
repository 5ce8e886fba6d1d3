"""Embedding a palace's missing vectors a step at a time, for hosts that show progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Call = Callable[[str, dict[str, Any]], dict[str, Any]]


def embedding_steps(call: Call, limit: int) -> Iterator[tuple[int, int, str]]:
    """Embed drawers that lack a vector, ``limit`` at a time, through ``call`` (a store's or a
    bridge's); yield (embedded so far, missing at the start, embedder name) after each step.

    Yields nothing when there is no embedder or nothing is missing. Exists so the command
    line's progress bar and the interface's progress widget run one loop; errors of the
    operations propagate.
    """
    status = call("palace_status", {})
    missing = status["drawers"] - status["embedded"]
    if status["embedder"] is None or missing <= 0:
        return
    done = 0
    while True:
        out = call("reindex", {"limit": limit})
        done += out["embedded"]
        yield min(done, missing), missing, out["embedder"]
        if not out["remaining"] or not out["embedded"]:
            return
