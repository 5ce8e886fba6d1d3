"""Where a person's palace lives when no ``--palace`` names one.

Apart from :mod:`palazzo.persist.directory` so that a command which may never open the
palace's files (``palazzo hook`` talking to a running server) can name its default without
importing the engine.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_palace() -> Path:
    """Return the palace directory used without ``--palace``: $PALAZZO_PALACE, else
    $XDG_DATA_HOME/palazzo/palace, else ~/.local/share/palazzo/palace."""
    env = os.environ.get("PALAZZO_PALACE")
    if env:
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(data).expanduser() / "palazzo" / "palace"
