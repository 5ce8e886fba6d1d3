"""Operations of the memory layer that reads the whole palace: the wake-up context.

The engine work is in :mod:`palazzo.memory.wakeup`.
"""

from __future__ import annotations

from typing import Any

from palazzo.memory import wakeup
from palazzo.ops.registry import Operations, Result, obj
from palazzo.palace import Palace

operation = Operations()


@operation("wake_up",
           "A compact start-of-session context within a token budget: identity, current "
           "facts, open decisions, the most important drawers and the active rooms; every "
           "line names the drawer, fact or room it came from. Deterministic.",
           obj({"budget": {"type": "integer", "minimum": wakeup.MIN_BUDGET,
                           "maximum": wakeup.MAX_BUDGET,
                           "description": "tokens to spend (estimated as characters / 4); "
                                          f"default {wakeup.DEFAULT_BUDGET}"}}))
def _wake_up(palace: Palace, args: dict[str, Any]) -> Result:
    return wakeup.wake_up(palace, args.get("budget", wakeup.DEFAULT_BUDGET))
