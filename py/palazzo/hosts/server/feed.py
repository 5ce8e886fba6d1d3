"""The change feed: every committed write, as server-sent events, to whoever listens.

A write is committed when its journal record is synced, by this server or by any other
process on the palace (a CLI command, a hook, an MCP stdio server). The server learns of its
own writes as it answers them and of the others' when it follows the files
(:meth:`palazzo.persist.palacestore.PalaceStore.follow`, which :class:`Feed`'s poller runs
every :data:`POLL_S` seconds): both land in the store's ``changes``, which the feed drains
in order. Each event is ``{"seq", "op", "ids"}`` (the journal's sequence number, the
operation, the ids its result named); ``op`` "reloaded" says the server read the palace
again (another's import) and a listener should too. A listener that falls more than
:data:`QUEUE` events behind is sent a "lagged" event and dropped: it reconnects and reads
afresh, rather than slowing the server.

Cost: one follow a poll (reading the 28-byte tip when nothing changed); per event, one JSON
encoding and a queue put per listener.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

POLL_S = 0.5  # how often the others' writes are looked for
QUEUE = 1000  # events a listener may fall behind before it is dropped
KEEPALIVE_S = 15.0  # a comment line this often, so proxies keep an idle stream open


class Feed:
    """Listeners of the change feed; :meth:`publish` may be called from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: set[tuple[asyncio.AbstractEventLoop, asyncio.Queue]] = set()
        self.last_seq = 0
        self.published = 0

    def publish(self, events: list[dict[str, Any]]) -> None:
        """Send ``events`` (in order) to every listener. Thread-safe; never blocks."""
        if not events:
            return
        with self._lock:
            self.last_seq = max(self.last_seq, *(e["seq"] for e in events))
            self.published += len(events)
            listeners = list(self._listeners)
        for loop, queue in listeners:
            loop.call_soon_threadsafe(_offer, queue, events)

    def listen(self) -> asyncio.Queue:
        """Return a new listener's queue (call from the event loop that will read it)."""
        queue: asyncio.Queue = asyncio.Queue(QUEUE + 1)
        with self._lock:
            self._listeners.add((asyncio.get_running_loop(), queue))
        return queue

    def leave(self, queue: asyncio.Queue) -> None:
        """Forget a listener."""
        with self._lock:
            self._listeners = {(lp, q) for lp, q in self._listeners if q is not queue}

    @property
    def listeners(self) -> int:
        """How many listen now."""
        with self._lock:
            return len(self._listeners)


def _offer(queue: asyncio.Queue, events: list[dict[str, Any]]) -> None:
    for event in events:
        if queue.qsize() >= QUEUE:
            queue.put_nowait({"op": "lagged"})
            return
        queue.put_nowait(event)


def frame(event: dict[str, Any]) -> str:
    """Return ``event`` as one server-sent event (its ``seq`` as the event id)."""
    head = f"id: {event['seq']}\n" if "seq" in event else ""
    return f"{head}data: {json.dumps(event, ensure_ascii=False)}\n\n"
