"""A palace directory opened by one process (CLI, MCP server), and how hosts pick it.

``default_palace`` says where the palace lives when no ``--palace`` is given,
``embedder_named`` turns ``--embedder`` into an embedder, and :class:`PalaceDirectory` opens the
directory as its writer or read-only beside another process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palazzo.errors import PalazzoError
from palazzo.palace import Palace
from palazzo.persistence import PalaceStore
from palazzo.storage import PALACE_NAME, DirectoryRoot, DirectorySpace


def default_palace() -> Path:
    """Return the palace directory used without ``--palace``: $PALAZZO_PALACE, else
    $XDG_DATA_HOME/palazzo/palace, else ~/.local/share/palazzo/palace."""
    env = os.environ.get("PALAZZO_PALACE")
    if env:
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(data).expanduser() / "palazzo" / "palace"


DEFAULT_PALACE = default_palace()
EMBEDDERS = ("auto", "minilm", "tfidf", "hash")


class PalaceDirectory:
    """A palace directory opened by this process: as its writer when it gets the writer lock,
    else read-only, following the writer.

    The lock is the one :class:`palazzo.storage.DirectoryRoot` takes (``flock`` on ``.lock``
    in the directory), so a library over the parent directory and MCP servers on the palace
    exclude each other. A read-only copy, before each call, takes the lock if the writer has
    gone (and reopens as the writer), else reloads when the files changed. Offers the
    :class:`PalaceStore` calls :func:`serve` needs (``call``, ``status``, ``registry``).
    """

    def __init__(self, path: Path, make_palace: Callable[..., Palace]) -> None:
        self.path = Path(path).expanduser().resolve()
        self.path.mkdir(parents=True, exist_ok=True)
        name = self.path.name if PALACE_NAME.fullmatch(self.path.name) else "palace"

        def make(**kw: Any) -> Palace:
            return make_palace(**kw) if "name" in kw else make_palace(name=name, **kw)

        self._make = make
        self._root = DirectoryRoot(self.path.parent)
        self.space = DirectorySpace(self.path)
        writable = self._root.lock(self.path.name)
        self.store = PalaceStore(self.space, make, read_only=not writable)
        self._seen = self._files()

    @property
    def status(self) -> Any:
        """The store's status (``read_only`` says whether this process may write)."""
        return self.store.status

    @property
    def registry(self) -> Any:
        """The operations registry the store runs."""
        return self.store.registry

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation like :meth:`PalaceStore.call`, after :meth:`refresh`."""
        self.refresh()
        return self.store.call(name, args)

    def refresh(self) -> None:
        """Bring a read-only copy up to date: become the writer if the lock is free, else
        reload when the files changed. Does nothing for the writer. Cost: one stat a file;
        a reload costs a boot."""
        if not self.store.status.read_only:
            return
        if self._root.lock(self.path.name):
            self.store = PalaceStore(self.space, self._make, read_only=False)
            self._seen = self._files()
            return
        files = self._files()
        if files != self._seen:
            self._seen = files
            self.store.boot()

    def close(self) -> None:
        """Release the writer lock if this process holds it."""
        self._root.unlock(self.path.name)

    def _files(self) -> tuple[tuple[str, int, int], ...]:
        out = []
        for p in sorted(self.path.iterdir()):
            if p.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = p.stat()
                out.append((p.name, st.st_size, st.st_mtime_ns))
        return tuple(out)



def embedder_named(name: str) -> Any:
    """Return the embedder for ``--embedder``: minilm, tfidf, hash, or auto (minilm when its
    weights are found, else hash)."""
    from palazzo.embed import registry

    if name == "auto":
        try:
            return registry.make("minilm")
        except (PalazzoError, ImportError, OSError):
            return registry.make("hash")
    return registry.make(name)
