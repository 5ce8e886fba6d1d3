"""The palace as the server holds it: two copies in memory, one for writes and one for reads,
so that a slow write never holds up a read.

A :class:`~palazzo.persist.directory.PalaceDirectory` runs one call at a time (its store is
not thread-safe), so with one copy every read waits for whatever write runs: an import batch
of several seconds, or a write waiting up to 30 s for another process's lock. The server
opens the palace directory twice instead. Writes go to the writer; reads go to the reader
(opened before the server listens; ``/metrics`` says ``palazzo_copies 2``), which follows
the files before each read exactly as another process would (the journal's new tail; the
next generation after a compaction), so a read still never returns data older
than a write acknowledged before it began: the writer syncs a write before the server
answers it. A read that must store something (a slice's first signing key) goes to the
writer, which stores it under the lock as any process would; the reader reads the new
``keys.json`` at its next follow. The reader never takes the lock, so no read waits for it.

A slow read holds up no other read either. The reads known to take seconds on a big palace
(``Operation.heavy``: communities, atlas, summarize, export) run in a forked child of the
reader (:meth:`PalaceDirectory.call` with ``reads_aside``), which frees the reader as soon
as the child exists. Any other read goes to the reader when it is free, and when the reader
has been busy with one read for :data:`SLOW_READ_S` seconds, to the writer if no write runs
there (the server has a read thread for each copy). So one such slow read at a time leaves
the other reads answering; two at once (one on each copy) hold up the reads after them,
and one that went to the writer holds up the writes behind it (as a slow write does).

Cost: the palace's memory twice (the server's resident size at the scale generator's 20,942
drawers, hash embedder: about 360 MB with one copy), and every write replayed once more, by
the reader at its next read (an ``add_drawer`` about 4 ms at 20k drawers). ``palazzo serve
--one-copy`` keeps one copy where memory is short: reads then wait for writes.
"""

from __future__ import annotations

import time
from typing import Any

from palazzo.errors import ReadOnly

SLOW_READ_S = 0.25  # a read on the reader this long is slow: the reads after it try the writer
WAIT_S = 0.05  # how often a read waiting for the reader looks whether it became slow


class Pair:
    """A writer and a reader :class:`PalaceDirectory` on the same files, offering what the
    server asks of one (``call``, ``status``, ``registry``, ``path``, ``store``,
    ``take_changes``, ``refresh``, ``compact_aside``): calls go to the copy their kind
    belongs to; everything else is the writer's."""

    def __init__(self, writer: Any, reader: Any) -> None:
        self.writer = writer
        self.reader = reader
        self.path = writer.path
        self._reading_since: float | None = None  # (monotonic) the reader's read began
        self.spilled = 0  # reads the writer answered because a slow one held the reader

    @property
    def registry(self) -> Any:
        return self.writer.registry

    @property
    def status(self) -> Any:
        return self.writer.status

    @property
    def store(self) -> Any:
        """The writer's store (what compacts, and what the change feed is read from)."""
        return self.writer.store

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation on the writer when it mutates, else on the reader, or on the
        writer while a slow read holds the reader (the module's docstring); return its
        result. Cost: the operation's, plus the copy's follow of writes it has not seen."""
        op = self.registry.get(name)
        if op.mutates:
            return self.writer.call(name, args)
        if op.heavy and self.reader.reads_aside:  # (a child of the reader runs it)
            return self.reader.call(name, args)
        while True:
            with self.reader.turn(WAIT_S) as mine:
                if mine:
                    self._reading_since = time.monotonic()
                    try:
                        return self.reader.call(name, args)
                    except ReadOnly:  # a read with something to store (a signing key)
                        if self.reader.store.blocked:
                            raise
                        break  # (to the writer, the reader's turn given back first)
                    finally:
                        self._reading_since = None
            since = self._reading_since
            if since is None or time.monotonic() - since < SLOW_READ_S:
                continue
            with self.writer.turn(0) as mine:
                if mine:
                    self.spilled += 1
                    return self.writer.call(name, args)
        return self.writer.call(name, args)

    def take_changes(self, wait: bool = True
                     ) -> tuple[list[dict[str, Any]], dict[str, int]] | None:
        """The writer's :meth:`PalaceDirectory.take_changes` (it makes or follows every
        write, so the feed misses none)."""
        return self.writer.take_changes(wait)

    def refresh(self) -> None:
        """Bring both copies up to every acknowledged write, so neither falls a compaction
        behind while no call reaches it (which would cost it a boot). Cost: two tip reads,
        and the new tail's replay in each."""
        self.writer.refresh()
        self.reader.refresh()

    def compact_aside(self) -> bool:
        """The writer's :meth:`PalaceDirectory.compact_aside`."""
        return self.writer.compact_aside()

    def close(self) -> None:
        """Close the reader (the writer is its opener's to close). Idempotent."""
        self.reader.close()
