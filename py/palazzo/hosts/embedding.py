"""Embedding a palace's missing vectors a step at a time, for hosts that show progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

Call = Callable[[str, dict[str, Any]], dict[str, Any]]


class EmbeddingSteps:
    """The steps of one embedding run: iterate for (embedded so far, missing at the start,
    embedder name) after each step; afterwards :attr:`no_vector` says which drawers got none.

    ``no_vector`` is the last step's report (``count``, the first ``drawer_ids``, the
    ``reason``): a run ends with a step that tried every drawer still missing, so it lists all
    the drawers that cannot get a vector from this embedder (a text with no token it can
    read). Empty (count 0) before the run and when every drawer got one.
    """

    def __init__(self, call: Call, limit: int) -> None:
        self.call = call
        self.limit = limit
        self.embedded = 0
        self.no_vector: dict[str, Any] = {"count": 0, "drawer_ids": [], "reason": None}

    def __iter__(self) -> Iterator[tuple[int, int, str]]:
        status = self.call("palace_status", {})
        missing = status["drawers"] - status["embedded"]
        if status["embedder"] is None or missing <= 0:
            return
        left = None
        while True:
            out = self.call("reindex", {"limit": self.limit})
            self.embedded += out["embedded"]
            self.no_vector = out.get("no_vector", self.no_vector)
            yield min(self.embedded, missing), missing, out["embedder"]
            # A step that wrote nothing, or left as many drawers untried as the one before,
            # would be repeated for ever: stop (drawers that can never get a vector are then
            # in ``no_vector``, not tried again and again).
            if not out["remaining"] or not out["embedded"] or \
                    (left is not None and out["remaining"] >= left):
                return
            left = out["remaining"]


def embedding_steps(call: Call, limit: int) -> EmbeddingSteps:
    """Return the steps that embed drawers lacking a vector, ``limit`` vectors at a time,
    through ``call`` (a store's or a bridge's); iterating yields (vectors written so far,
    missing at the start, embedder name) after each step.

    Yields nothing when there is no embedder or nothing is missing. Exists so the command
    line's progress bar and the interface's progress widget run one loop; errors of the
    operations propagate. The count is of vectors actually written, so it stays below
    "missing" when some drawers cannot get a vector; the returned object's ``no_vector``
    names them after the run. Cost: one ``reindex`` call a step.
    """
    return EmbeddingSteps(call, limit)
