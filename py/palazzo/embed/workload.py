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
(its special tokens, its batch slot). An estimate from lengths alone (a drawer's event
sentences are not found for it): cheap enough for every step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from palazzo.core.columns import text_lengths

# The fixed model work of one piece (a window or a short drawer), in characters.
PIECE = 40.0
# The queue's next drawers are told to a host in blocks of this many drawers.
BLOCK = 50
# ... up to this many blocks (a 2-minute horizon at 40 drawers a second).
BLOCKS = 100


def costs(palace: Any, rows: np.ndarray, opening_first: bool = False
          ) -> tuple[np.ndarray, np.ndarray]:
    """Return (now, later) for the drawers at ``rows`` of ``palace`` (a
    :class:`~palazzo.palace.Palace`), each a float array as long as ``rows``: the model work
    (characters plus :data:`PIECE` a piece) the drawer's next embedding asks
    (:meth:`Palace.embedding_texts`: all its windows; an assistant's answer, its opening
    window; with ``opening_first``, a person's long turn without a vector, its opening window;
    a turn holding its opening window only, the rest), and the work of the second step such a
    long turn takes after it (0 for the others). Why: the time left and the rate the count
    moves at are counted in it (module docstring). Cost: O(len(rows)) text lengths, a set
    lookup for each long drawer."""
    rows = np.asarray(rows, dtype=np.intp)
    s = palace.drawers
    size = palace.chunk_size
    n = text_lengths(s.content, rows).astype(np.float64)
    later = np.zeros(len(rows))
    if size is None:
        return n + PIECE, later
    windows = np.maximum(1.0, np.ceil(n / size))
    now = n + PIECE * windows
    long_rows = np.flatnonzero(n > size)
    if not len(long_rows):
        return now, later
    answers, users = palace.answers(), palace.own_turns()
    waiting = set(s.chunks.opening_rows().tolist())
    first = size + PIECE  # one window
    for i in long_rows.tolist():
        r = int(rows[i])
        did = s.ids[r]
        if did in answers:
            now[i] = first
        elif r in waiting and s.has_vector[r]:
            now[i] -= first
        elif opening_first and not s.has_vector[r] and did in users:
            later[i] = now[i] - first
            now[i] = first
    return now, later


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
