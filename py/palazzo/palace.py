"""The palace: the root of the Palace > Wing > Room > Closet > Drawer hierarchy.

This first version holds only what the pipeline needs (a name, its creation time and empty
wing/room/drawer collections); the engine issue fills in the model and the NumPy store.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

Clock = Callable[[], float]


@dataclass(slots=True)
class Palace:
    """An in-memory palace.

    The clock is injected so that runs are reproducible in tests and journals can replay an
    operation with the time it first ran at.
    """

    name: str = "palace"
    clock: Clock = time.time
    created_at: float = field(default=-1.0)
    wings: dict[str, object] = field(default_factory=dict)
    rooms: dict[str, object] = field(default_factory=dict)
    drawers: dict[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.created_at < 0:
            self.created_at = float(self.clock())

    def counts(self) -> dict[str, int]:
        """Return how many wings, rooms and drawers the palace holds (O(1))."""
        return {
            "wings": len(self.wings),
            "rooms": len(self.rooms),
            "drawers": len(self.drawers),
        }
