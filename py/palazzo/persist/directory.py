"""A palace directory opened by one process (CLI, MCP server), and how hosts pick it.

``default_palace`` says where the palace lives when no ``--palace`` is given, and
:class:`PalaceDirectory` opens the directory as its writer or read-only beside another process
(embedders by name come from :mod:`palazzo.embed.registry`). A :class:`PalaceDirectory` is a
context manager, as an httpx transport is: ``with PalaceDirectory(path, make) as d:`` gives
its lock back when the block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from palazzo.errors import ReadOnly, StorageError
from palazzo.palace import Palace
from palazzo.persist.palacestore import KEYS, TIP, PalaceStore
from palazzo.persist.storage import PALACE_NAME, DirectoryRoot, DirectorySpace


def default_palace() -> Path:
    """Return the palace directory used without ``--palace``: $PALAZZO_PALACE, else
    $XDG_DATA_HOME/palazzo/palace, else ~/.local/share/palazzo/palace."""
    env = os.environ.get("PALAZZO_PALACE")
    if env:
        return Path(env).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(data).expanduser() / "palazzo" / "palace"


DEFAULT_PALACE = default_palace()


class PalaceDirectory:
    """A palace directory opened by this process: as its writer when it gets the writer lock,
    else read-only, following the writer and writing only while it holds the lock.

    The lock is the one :class:`palazzo.persist.storage.DirectoryRoot` takes (``flock`` on ``.lock``
    in the directory), so a library over the parent directory and MCP servers on the palace
    exclude each other. Offers the :class:`PalaceStore` calls :func:`serve` needs (``call``,
    ``status``, ``registry``).

    A process that opened read-only (a second CLI, an MCP server started while another
    process writes) never becomes a lifelong writer: before a read it only reloads when the
    files changed; for a write (an operation that ``mutates``) it takes the lock if it is
    free, boots as the writer (or, when the files are unchanged since its last boot, goes on
    from the memory it has), runs the call and gives the lock back, read-only again, at the
    end of every call (a ``reindex`` step is journaled with its vectors like any write, so
    nothing stays in memory alone and the lock is never held between calls).

    A process that opened as the writer keeps the lock until :meth:`close`: it is the one the
    user started in order to write (a CLI command, or the first MCP server), its commands
    and runs of steps are not interleaved with another process's writes, and it never pays a
    check of the files before a call. Cost of a reader's write: a ``flock``, a ``stat`` of
    each file, and a boot when another process wrote since this one last read.

    Use it as a context manager (``with PalaceDirectory(path, make) as d:``), or call
    :meth:`close` when done: either gives the lock back, and a closed directory refuses
    calls, so nothing is written without the lock.
    """

    def __init__(self, path: Path, make_palace: Callable[..., Palace]) -> None:
        self.path = Path(path).expanduser().resolve()
        self.path.mkdir(DirectorySpace.DIR_MODE, parents=True, exist_ok=True)
        name = self.path.name if PALACE_NAME.fullmatch(self.path.name) else "palace"

        def make(**kw: Any) -> Palace:
            return make_palace(**kw) if "name" in kw else make_palace(name=name, **kw)

        self._make = make
        self._root = DirectoryRoot(self.path.parent)
        self.space = DirectorySpace(self.path)
        self._serial = threading.RLock()  # one call at a time: the store is not thread-safe
        self._owner = self._root.lock(self.path.name)
        self._holding = False  # a reader holding the lock for the write it runs
        self._closed = False
        try:
            # Taken before the boot: files that change after it make the next call reload.
            self._seen: tuple[tuple[str, int, int, int], ...] | None = self._files()
            self.store = PalaceStore(self.space, make, read_only=not self._owner)
            if self._owner:
                self._make_private()
        except BaseException:  # no object to close comes back: give the lock back here
            self._root.unlock(self.path.name)
            raise

    def __enter__(self) -> PalaceDirectory:
        """Return this directory, open: the ``as`` target of a ``with`` block."""
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        """Close the directory (:meth:`close`) as the block ends, also when it raised; the
        block's exception, if any, goes on."""
        self.close()

    def _make_private(self) -> None:
        """Narrow the modes an older version left on the palace's files (0644) to the 0600
        that :class:`DirectorySpace` creates them with: they hold memory verbatim and
        ``keys.json`` the signing secrets. Only the writer does it, only to the palace's own
        files (not to other files in the directory, nor to the directory, which a user may
        have chosen), and a mode that cannot be changed is left as it is. Cost: one stat a
        file."""
        uid = getattr(os, "getuid", lambda: None)()
        if uid is None:  # no POSIX modes here
            return
        for p in self.path.iterdir():
            if p.name not in (KEYS, ".lock", TIP) and not p.name.startswith(
                    ("snapshot-", "journal-", "rejected-", "damaged-")):
                continue
            with contextlib.suppress(OSError):
                st = os.lstat(p)  # a link is not followed
                if stat.S_ISREG(st.st_mode) and st.st_mode & 0o077 and st.st_uid == uid:
                    os.chmod(p, stat.S_IMODE(st.st_mode) & DirectorySpace.FILE_MODE)

    @property
    def status(self) -> Any:
        """The store's status (``read_only`` says whether this process may write now)."""
        return self.store.status

    @property
    def registry(self) -> Any:
        """The operations registry the store runs."""
        return self.store.registry

    @property
    def writer(self) -> bool:
        """Whether this process holds the writer lock now (for good, or for a write)."""
        return self._owner or self._holding

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation like :meth:`PalaceStore.call` and return its result.

        A read-only copy first reloads when the files changed; for a mutating operation it
        takes the writer lock when it is free (else the store raises ReadOnly) and gives it
        back afterwards, as the class says. A read that has something to store (a slice that
        needs the palace's first signing key, which a read-only copy refuses to make) is run
        again the same way, so the key is stored before any token it signs is returned.
        After :meth:`close` it raises StorageError."""
        with self._serial:
            if self._closed:  # an owner's lock is gone: a write now would go unguarded
                raise StorageError(f"{self.path} was closed: open the palace directory again "
                                   "to use it")
            if self._owner:
                return self.store.call(name, args)
            mutates = self.store.registry.get(name).mutates
            if not mutates and not self._holding:
                self.refresh()
                try:
                    return self.store.call(name, args)
                except ReadOnly:  # nothing was kept: take the lock and run it again below
                    pass
            if not self._holding and not self._take_lock():
                self.refresh()
                return self.store.call(name, args)  # raises ReadOnly, changes nothing
            try:
                return self.store.call(name, args)
            finally:
                self._give_back()

    def compact(self) -> None:
        """Write the palace as a new snapshot now, so the next open reads it instead of
        replaying a long journal (the command line does this after an import). Takes the
        writer lock for it as a write does (ReadOnly when another process holds it); returns
        None. Cost: writing the whole palace once."""
        with self._serial:
            if self._closed:
                raise StorageError(f"{self.path} was closed: open the palace directory again "
                                   "to use it")
            if self._owner:
                self.store.compact()
                return
            if not self._holding and not self._take_lock():
                raise ReadOnly("another process holds this palace; it compacts its own")
            try:
                self.store.compact()
            finally:
                self._give_back()

    def _take_lock(self) -> bool:
        """Take the writer lock for one write and become the writer (reloading what changed);
        return False, changing nothing, when another process holds it."""
        if not self._root.lock(self.path.name):
            return False
        self._holding = True
        try:
            self._become_writer()
        except BaseException:
            self._seen = None
            self._give_back()
            raise
        return True

    def refresh(self) -> None:
        """Bring a read-only copy up to date: reload when the files changed since it last
        read them. Does nothing while this process holds the lock. Cost: one stat a file; a
        reload costs a boot."""
        with self._serial:
            if self.writer:
                return
            files = self._files()
            if files != self._seen:
                self._seen = files
                self.store.boot()

    def close(self) -> None:
        """Release the writer lock if this process holds it; returns None. It exists so that
        the lock goes back as soon as a host is done, not when the process ends. Idempotent:
        a second close does nothing. Afterwards :meth:`call` raises StorageError."""
        with self._serial:
            if self._closed:
                return
            self._closed = True
            try:
                if self._holding:
                    self._give_back()
            finally:
                self._root.unlock(self.path.name)

    def _become_writer(self) -> None:
        """Make the store the writer's, the lock being held: go on from memory when nothing
        changed on disk since the last boot and it found no damage, else boot again (a
        writer's boot cuts a torn tail, so appends never follow garbage)."""
        status = self.store.status
        unchanged = self._seen is not None and self._files() == self._seen
        if unchanged and self.space.names() and not status.problem and \
                not status.dropped_bytes:
            self._set_writer(True)
        else:
            self.store = PalaceStore(self.space, self._make, read_only=False)
        if self.store.status.read_only:  # boot found damage: nothing is written
            raise self.store.read_only_error()

    def _give_back(self) -> None:
        """Release the lock and go back to read-only, noting the files as they are now (so
        the next call does not boot again for this process's own write)."""
        try:
            self._seen = self._files() if self._seen is not None else None
        finally:
            self._set_writer(False)
            self._holding = False
            self._root.unlock(self.path.name)

    def _set_writer(self, writer: bool) -> None:
        """Switch the store between writer and reader. A store has two switches and both
        must move: ``writer`` (this process holds the lock, so a boot may cut a torn tail and
        boots as the writer) and ``status.read_only`` (calls may write)."""
        self.store.writer = writer
        self.store.status.read_only = not writer

    def _files(self) -> tuple[tuple[str, int, int, int], ...]:
        """Return (name, size, mtime, inode) of each palace file: a replaced file (a new
        inode) counts as changed even when its size and time match."""
        out = []
        for p in sorted(self.path.iterdir()):
            if p.name.startswith("."):
                continue
            with contextlib.suppress(OSError):
                st = p.stat()
                out.append((p.name, st.st_size, st.st_mtime_ns, st.st_ino))
        return tuple(out)
