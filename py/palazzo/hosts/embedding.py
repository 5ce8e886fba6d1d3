"""Embedding a palace's missing vectors a step at a time, for hosts that show progress."""

from __future__ import annotations

from collections import deque
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
        # with the long turns a browser tab gave only their opening window's vector so far
        missing = (status.get("to_embed", status["drawers"] - status["embedded"])
                   + status.get("to_complete", 0))
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


class IndexingRate:
    """How fast background embedding is going: drawers a second, and the time left. A host
    records each step; a status line asks for :meth:`words`.

    Over the last ``window`` steps, or on the clock the steps of the last :attr:`SECONDS` when
    they are more (not since the start): the rate changes with drawer length and with what else
    the machine is doing (over a 20k page's embedding the model work done in 15 s varied by a
    fifth, standard deviation over mean). In two such runs' 15-s samples, the speed over the
    last minute was within 30 % of the next two minutes' in 79 and 100 % of them, over the last
    15 s (about the last 20 steps) in 75 and 98 %. Steps recorded with the clock time they ended
    (``at``) are measured on the wall clock, from the start of the window's first step to the
    end of its last: the time between steps (other calls the worker answered, the page busy, the
    machine loaded) counts, so the rate is the one the count on screen moves at, not the model's
    speed alone (which overstated it many times over on a loaded machine). A pause of more than
    :attr:`PAUSE` seconds between steps (an import ran, the tab slept) starts the window again:
    embedding was not running then. On the clock, a window's first step counts only as the
    moment it ended (the rate is what the later steps wrote over the time since): a first step
    carries the start-up (the model loading, its first batch), and a page that said "0.0
    drawers/s, about 10,989 min left" after one drawer, then "about 20 min" a few steps later,
    was out by orders of magnitude. A step that finds more drawers waiting than the one before
    left starts the window again too: drawers came meanwhile (an import's batches, between which
    a 20k export's steps made "0.3 drawers/s, about 1,162 min left"). Nothing is said until the
    window holds :attr:`MIN_STEPS` steps over :attr:`MIN_SECONDS`.

    Steps recorded with their model ``work`` (``reindex``'s, :mod:`palazzo.embed.workload`)
    are measured in work a second instead, and the drawers a second shown are those the
    queue's next drawers give at that speed over the next :attr:`HORIZON` seconds; the time
    left is the work left at that speed. Why: in drawers a second, a 20k export's page said
    32 drawers/s as its short answers ended and the count then moved at 11 (the long turns'
    rests came next), and 12–14 against 6–8 at the rests. Cost: O(window) a call, plus
    O(blocks) with work.
    """

    PAUSE = 30.0
    MIN_STEPS = 3
    MIN_SECONDS = 10.0
    HORIZON = 120.0
    SECONDS = 60.0
    KEPT = 1000  # steps kept at most (a minute of steps of a few milliseconds)

    def __init__(self, window: int = 20) -> None:
        self.window = window
        # (vectors written, the step's own seconds, the clock when it ended or None, the
        # model work it did or None)
        self.steps: deque[tuple[int, float, float | None, float | None]] = deque(
            maxlen=max(window, self.KEPT))
        self.remaining = 0
        self.ahead: dict[str, Any] | None = None

    def record(self, embedded: int, seconds: float, remaining: int,
               at: float | None = None, work: dict[str, Any] | None = None) -> None:
        """Note a step that wrote ``embedded`` vectors in ``seconds`` and left ``remaining``
        drawers without one; ``at`` is the clock (any monotonic seconds) when it ended;
        ``work`` is the step's model work and what is next (``reindex``'s ``work``,
        :func:`palazzo.embed.workload.ahead`). Returns None."""
        if seconds > 0:
            last = self.steps[-1][2] if self.steps else None
            if at is not None and last is not None and at - seconds - last > self.PAUSE:
                self.steps.clear()
            if remaining > self.remaining:
                # Drawers came meanwhile (an import's batches between these steps): the
                # steps before went at the pace of a page busy importing.
                self.steps.clear()
            done = float(work["done"]) if work else None
            self.steps.append((int(embedded), float(seconds), at, done))
        self.remaining = int(remaining)
        self.ahead = work
        if not remaining:
            self.steps.clear()

    def _measured(self, column: int = 0) -> tuple[float, float]:
        """Return (amount, seconds) the rate is taken over, the amount being the steps'
        vectors written (``column`` 0) or model work (3): with two or more steps that have
        their clock times, what the steps after the first did and the wall time from the
        first's end to the last's; else what they all did in their own seconds."""
        steps = self._window()
        if len(steps) >= 2 and all(s[2] is not None for s in steps):
            return sum(s[column] or 0 for s in steps[1:]), steps[-1][2] - steps[0][2]
        return sum(s[column] or 0 for s in steps), sum(s[1] for s in steps)

    def _window(self) -> list[tuple[int, float, float | None, float | None]]:
        """Return the steps the rate is taken over: the last ``window``, or those that ended
        within the last :attr:`SECONDS` of the clock when they are more."""
        steps = list(self.steps)
        last = steps[-1][2] if steps else None
        if last is None or any(s[2] is None for s in steps):
            return steps[-self.window:]
        recent = [s for s in steps if s[2] is not None and last - s[2] <= self.SECONDS]
        return recent if len(recent) > self.window else steps[-self.window:]

    def per_second(self) -> float | None:
        """Return drawers embedded a second over the recorded steps (:meth:`_measured`), or
        None without any."""
        if not self.steps:
            return None
        written, seconds = self._measured()
        return written / seconds if seconds > 0 else None

    def work_per_second(self) -> float | None:
        """Return model work done a second over the recorded steps, or None unless every
        step in the window was recorded with its work."""
        if not self.steps or any(s[3] is None for s in self._window()):
            return None
        work, seconds = self._measured(3)
        return work / seconds if seconds > 0 and work > 0 else None

    def drawers_ahead(self, speed: float) -> float | None:
        """Return the drawers a second the count will move at over the next
        :attr:`HORIZON` seconds at ``speed`` (model work a second), from the work of the
        queue's next drawers (the last step's ``work``); None without it."""
        ahead = self.ahead
        if not ahead or not ahead.get("drawers") or speed <= 0:
            return None
        budget = speed * self.HORIZON
        if budget >= ahead["left"]:  # the queue ends within the horizon
            return ahead["drawers"] / (ahead["left"] / speed) if ahead["left"] > 0 else None
        block, total = ahead["block"], ahead["drawers"]
        before_work, before = 0.0, 0
        for i, work in enumerate(ahead["next"]):
            at = min(block * (i + 1), total)
            if work >= budget:
                share = (budget - before_work) / (work - before_work) if work > before_work else 1
                return (before + share * (at - before)) / self.HORIZON
            before_work, before = work, at
        # past the drawers listed: at their mean work a drawer
        return (budget / (before_work / before)) / self.HORIZON if before_work > 0 else None

    def words(self) -> str | None:
        """Return e.g. "12.5 drawers/s, about 4 min left" while drawers remain and the
        window holds enough to go by (:attr:`MIN_STEPS`, or all it can hold, over
        :attr:`MIN_SECONDS`), else None."""
        rate = self.per_second()
        enough = len(self.steps) >= min(self.MIN_STEPS, self.window) \
            and self._measured()[1] >= self.MIN_SECONDS
        if not self.remaining or not rate or not enough:
            return None
        left = self.remaining / rate
        speed = self.work_per_second()
        ahead = self.drawers_ahead(speed) if speed else None
        if ahead:
            rate, left = ahead, self.ahead["left"] / speed
        when = (f"about {round(left / 60):,} min left" if left >= 90
                else f"about {max(1, round(left))} s left")
        return f"{rate:.1f} drawers/s, {when}"
