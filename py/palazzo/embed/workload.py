"""How much model work the drawers waiting for vectors ask, in the order they will get it.

A background embedding's rate in drawers a second is the model's speed divided by how long
the drawers are, and the drawers change in length as the queue moves on (a 20k export's own
turns, then short answers three times as fast, then the rests of long turns half as fast):
a rate measured over the last steps, shown as drawers a second, was out by up to three times
at each change. Measured as model work a second instead, it holds across them, and the
queue's next drawers, whose lengths are known, turn it into the drawers a second the count
will move at (:class:`palazzo.hosts.embedding.IndexingRate`).

The work of a text is its length in characters plus :data:`PIECE` for each piece the model
reads: the model's time grows with the tokens it reads, and each piece carries fixed work
(its special tokens, its batch slot). Counted from the texts for the drawers next in the
queue, estimated from lengths for the rest (:func:`costs`).
"""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

import numpy as np

from palazzo.core.columns import text_lengths

# The fixed model work of one piece (a window or a short drawer), in characters.
PIECE = 40.0
# The queue's next drawers are told to a host in blocks of this many drawers.
BLOCK = 50
# ... up to this many blocks (a 2-minute horizon at 40 drawers a second).
BLOCKS = 100
# The queue's drawers counted from their texts (:func:`costs`): those the blocks tell.
HORIZON = BLOCK * BLOCKS


def costs(palace: Any, rows: np.ndarray, opening_first: bool = False, exact: int = 0
          ) -> tuple[np.ndarray, np.ndarray]:
    """Return (now, later) for the drawers at ``rows`` of ``palace`` (a
    :class:`~palazzo.palace.Palace`), each a float array as long as ``rows``: the model work
    (characters plus :data:`PIECE` a piece) the drawer's next embedding asks
    (:meth:`Palace.embedding_texts`: all its windows and event sentences; an assistant's
    answer, its opening window; with ``opening_first``, a person's long turn without a
    vector, its opening window; a turn holding its opening window only, the rest), and the
    work of the second step such a long turn takes after it (0 for the others).

    The first ``exact`` drawers are counted from the texts themselves (remembered for the
    drawer while its length stays); the others are estimated from their lengths (a window a
    ``chunk_size``, no event sentences), which on a 20k export put the rests of long turns at
    0.67 of their work and the opening windows at 1.2: the drawers next in the queue, which
    the rate is taken from, are counted. Why: the time left and the rate the count moves at
    are counted in it (module docstring). Cost: O(len(rows)) text lengths and two set
    lookups a drawer (10 ms for a 20k export's 17,596 waiting drawers under CPython), plus
    :meth:`Palace.parts` for each of the first ``exact`` drawers not counted before (an
    extraction each: 0.14 s for the first 5,016 of that queue, once)."""
    rows = np.asarray(rows, dtype=np.intp)
    s = palace.drawers
    size = palace.chunk_size
    lengths = text_lengths(s.content, rows)
    n = lengths.astype(np.float64)
    later = np.zeros(len(rows))
    if size is None:
        return n + PIECE, later
    # estimated from the lengths: a window a chunk_size, no event sentences
    whole = n + PIECE * np.maximum(1.0, np.ceil(n / size))
    opening = np.minimum(n, size) + PIECE
    head = rows[: max(0, exact)]
    if len(head):
        counted = _memo(palace, s.size)
        stale = np.flatnonzero(counted.length[head] != lengths[: len(head)])
        answers = palace.answers()
        for i in stale.tolist():
            r = int(head[i])
            texts = palace.parts(s.content[r], s.ids[r] in answers)[0]
            counted.length[r] = lengths[i]
            counted.whole[r] = sum(len(t) for t in texts) + PIECE * len(texts)
            counted.opening[r] = len(texts[0]) + PIECE if texts else 0.0
        whole[: len(head)] = counted.whole[head]
        opening[: len(head)] = counted.opening[head]
    answer, own = _roles(palace, rows)
    now = whole.copy()
    now[answer] = opening[answer]  # an answer: its opening window alone
    vector = s.has_vector[rows]
    rest = vector & np.isin(rows, s.chunks.opening_rows()) & ~answer
    now[rest] = whole[rest] - opening[rest]
    if opening_first:  # a person's long turn: its opening window first, the rest after
        first = (n > size) & ~vector & own
        now[first], later[first] = opening[first], whole[first] - opening[first]
    return now, later


def _roles(palace: Any, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return two boolean arrays over ``rows``: an assistant's answer, a person's own turn
    (:meth:`Palace.roles_of`)."""
    return palace.roles_of(rows)


class _Counted:
    """Per row of a palace: its text's length when counted (-1: not counted), the work of
    all the texts embedding it in one pass asks (an answer: its opening window) and of its
    opening window (:meth:`Palace.parts`)."""

    __slots__ = ("length", "whole", "opening")

    def __init__(self, size: int) -> None:
        self.length = np.full(size, -1, dtype=np.int64)
        self.whole = np.zeros(size)
        self.opening = np.zeros(size)

    def grow(self, size: int) -> None:
        extra = size - len(self.length)
        self.length = np.concatenate([self.length, np.full(extra, -1, dtype=np.int64)])
        self.whole = np.concatenate([self.whole, np.zeros(extra)])
        self.opening = np.concatenate([self.opening, np.zeros(extra)])


_COUNTED: WeakKeyDictionary[Any, _Counted] = WeakKeyDictionary()


def _memo(palace: Any, size: int) -> _Counted:
    """Return the palace's counted works, as long as its ``size`` rows at least."""
    memo = _COUNTED.get(palace)
    if memo is None:
        memo = _COUNTED[palace] = _Counted(max(size, 1))
    elif len(memo.length) < size:
        memo.grow(max(size, 2 * len(memo.length)))
    return memo


def ahead(now: np.ndarray, later: np.ndarray, done: int) -> dict[str, Any]:
    """Return what a host needs to tell the rate the count will move at after a step that
    took the first ``done`` drawers of a queue whose work is (``now``, ``later``)
    (:func:`costs`): ``done`` (the work of that step), ``left`` (all the work still to do,
    the second steps of long turns included) and ``next``, the work of the queue's next
    drawers summed every :data:`BLOCK` drawers (cumulative, up to :data:`BLOCKS` blocks), the
    second steps last, as the queue puts them. Cost: O(len(now))."""
    queue = np.concatenate([now[done:], later[later > 0]])
    cum = np.cumsum(queue[: BLOCK * BLOCKS])
    return {"done": round(float(now[:done].sum()), 1),
            "left": round(float(queue.sum()), 1),
            "block": BLOCK,
            "next": [round(float(x), 1) for x in cum[BLOCK - 1 :: BLOCK]]
            + ([round(float(cum[-1]), 1)] if len(cum) % BLOCK else []),
            "drawers": int(len(queue))}
