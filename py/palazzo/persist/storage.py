"""Byte storage for persistence: where snapshots and journals live.

The persistence engine (:mod:`palazzo.persist.palacestore`) only moves bytes through the small
:class:`Space` protocol (one palace's files) and :class:`Root` (several palaces side by side).
Two implementations live here: in memory (tests, and Pyodide without storage) and a directory
(CPython: the CLI and the MCP server). The browser's OPFS and IndexedDB spaces implement the
same calls at the host edge (the worker), so the engine never sees ``js``.

Durability: a directory space fsyncs every write and append before returning, so a call that
returned survives a crash of the process (and, as far as the OS keeps its promise, of the
machine).
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
import time
from pathlib import Path
from typing import Any, Protocol

from palazzo.errors import NotFound, NotLoaded, StorageError, ValidationError
from palazzo.formats.snapshot import joined

PALACE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.-]{0,63}")




def check_palace_name(name: str) -> str:
    """Return ``name`` if it can name a palace on every backend: 1–64 characters, letters,
    digits, space, ``_ . -``, not starting with a dot or space; else raise ValidationError."""
    if not isinstance(name, str) or not PALACE_NAME.fullmatch(name) or name.endswith((" ", ".")):
        raise ValidationError(
            f"palace name {name!r} must be 1 to 64 letters, digits, spaces, '_', '.' or '-', "
            "starting with a letter or digit")
    return name


class Space(Protocol):
    """One palace's files."""

    def names(self) -> list[str]: ...
    def read(self, name: str) -> bytes | None: ...
    def read_from(self, name: str, offset: int) -> bytes | None: ...
    def size(self, name: str) -> int | None: ...
    def load(self, name: str) -> bytearray | mmap.mmap | None: ...
    def write(self, name: str, data: bytes | list[memoryview]) -> None: ...
    def append(self, name: str, data: bytes) -> None: ...
    def truncate(self, name: str, size: int) -> None: ...
    def delete(self, name: str) -> None: ...
    def rename(self, name: str, new: str) -> None: ...
    def mark(self, name: str, data: bytes) -> None: ...
    def release(self, name: str) -> None: ...


class Root(Protocol):
    """Several palaces side by side."""

    kind: str

    def palaces(self) -> list[str]: ...
    def space(self, name: str, create: bool = False) -> Space: ...
    def remove(self, name: str) -> None: ...
    def lock(self, name: str, wait: float = 0.0) -> bool: ...
    def unlock(self, name: str) -> None: ...


class MemorySpace:
    """Files as byte strings in a dict (tests; nothing survives the process)."""

    def __init__(self) -> None:
        self.files: dict[str, bytearray] = {}

    def names(self) -> list[str]:
        """Return the file names, sorted."""
        return sorted(self.files)

    def read(self, name: str) -> bytes | None:
        """Return the file's bytes, or None when it does not exist."""
        data = self.files.get(name)
        return None if data is None else bytes(data)

    def read_from(self, name: str, offset: int) -> bytes | None:
        """Return the file's bytes from ``offset`` on (what was appended since a reader
        last looked), or None when it does not exist."""
        data = self.read(name)
        return None if data is None else data[offset:]

    def size(self, name: str) -> int | None:
        """Return the file's length in bytes, or None when it does not exist."""
        data = self.files.get(name)
        return None if data is None else len(data)

    def load(self, name: str) -> bytearray | None:
        """Return a copy of the file's bytes the caller may change (a snapshot's arrays are
        then the palace's own, without a copy an array), or None when it does not exist."""
        data = self.files.get(name)
        return None if data is None else bytearray(data)

    def write(self, name: str, data: bytes | list[memoryview]) -> None:
        """Replace the file with ``data`` (bytes, or byte pieces one after the other, copied
        once into the file's buffer: :func:`palazzo.formats.snapshot.joined`)."""
        self.files[name] = joined(data) if isinstance(data, list) else bytearray(data)

    def append(self, name: str, data: bytes) -> None:
        """Append ``data`` to the file (creating it)."""
        self.files.setdefault(name, bytearray()).extend(data)

    def truncate(self, name: str, size: int) -> None:
        """Cut the file to ``size`` bytes."""
        if name in self.files:
            del self.files[name][size:]

    def delete(self, name: str) -> None:
        """Remove the file if it exists."""
        self.files.pop(name, None)

    def rename(self, name: str, new: str) -> None:
        """Give the file ``name`` the name ``new`` (replacing a file of that name)."""
        if name in self.files:
            self.files[new] = self.files.pop(name)

    def mark(self, name: str, data: bytes) -> None:
        """Replace a small file's bytes (the journal's tip): :meth:`write`, here."""
        self.write(name, data)

    def release(self, name: str) -> None:
        """Say the store will not read ``name`` again soon (a snapshot already in use, or the
        previous generation's): nothing to do where the files are the storage itself."""


class MemoryRoot:
    """Palaces in memory."""

    kind = "memory"

    def __init__(self) -> None:
        self.spaces: dict[str, MemorySpace] = {}
        self.locked: set[str] = set()

    def palaces(self) -> list[str]:
        """Return the palace names, sorted."""
        return sorted(self.spaces)

    def space(self, name: str, create: bool = False) -> MemorySpace:
        """Return the palace's space (made when ``create``), else raise NotFound."""
        check_palace_name(name)
        if name not in self.spaces:
            if not create:
                raise NotFound(f"no palace named {name!r}")
            self.spaces[name] = MemorySpace()
        return self.spaces[name]

    def remove(self, name: str) -> None:
        """Delete the palace's files."""
        if self.spaces.pop(name, None) is None:
            raise NotFound(f"no palace named {name!r}")
        self.locked.discard(name)

    def lock(self, name: str, wait: float = 0.0) -> bool:
        """Take the palace's writer lock; return False when someone holds it (one process:
        nobody gives it back while this one waits, so ``wait`` is not waited)."""
        if name in self.locked:
            return False
        self.locked.add(name)
        return True

    def unlock(self, name: str) -> None:
        """Release the writer lock."""
        self.locked.discard(name)


class DirectorySpace:
    """A palace's files in one directory, every write fsynced before it returns.

    Every file it creates is private to its owner (mode 0600) from its first byte: snapshots
    and journals hold a person's memory verbatim and ``keys.json`` holds the HMAC secrets that
    sign provenance, so none is for other users of the machine to read. A file is created
    with ``os.open(..., 0o600)`` (the umask can only take bits away), never widened and then
    narrowed by a ``chmod``: there is no moment in which another user could open it. Files an
    older version left with wider modes keep them until they are next rewritten (a snapshot
    or ``keys.json`` by its atomic replace, a journal at the next compaction). A palace
    directory that :class:`DirectoryRoot` creates is 0700 and its lock file 0600 for the same
    reason.
    """

    FILE_MODE = 0o600
    # A large file (a snapshot) is synced every this many bytes as it is written, not only
    # at its end, so that it never holds much unwritten data: an fsync of any other file
    # (the next journal append) waits for data written before it on ext4 (data=ordered).
    SYNC_EVERY = 4 << 20
    DIR_MODE = 0o700
    _BINARY = getattr(os, "O_BINARY", 0)  # Windows: no newline translation

    def __init__(self, path: Path) -> None:
        self.path = path

    def _file(self, name: str) -> Path:
        if "/" in name or "\\" in name or name.startswith("."):
            raise ValidationError(f"bad storage file name {name!r}")
        return self.path / name

    def names(self) -> list[str]:
        """Return the file names, sorted (temporary files left by a crash are skipped)."""
        return sorted(p.name for p in self.path.iterdir()
                      if p.is_file() and not p.name.startswith("."))

    def read(self, name: str) -> bytes | None:
        """Return the file's bytes, or None when it does not exist."""
        try:
            return self._file(name).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StorageError(f"cannot read {self._file(name)}: {err.strerror}") from None

    def size(self, name: str) -> int | None:
        """Return the file's length in bytes, or None when it does not exist."""
        try:
            return self._file(name).stat().st_size
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StorageError(f"cannot read {self._file(name)}: {err.strerror}") from None

    def read_from(self, name: str, offset: int) -> bytes | None:
        """Return the file's bytes from ``offset`` on, or None when it does not exist.

        Why: a process that follows another's writes reads only the journal's new tail.
        Cost: one seek and a read of the tail."""
        try:
            with open(self._file(name), "rb") as f:
                f.seek(offset)
                return f.read()
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StorageError(f"cannot read {self._file(name)}: {err.strerror}") from None

    def load(self, name: str) -> bytearray | mmap.mmap | None:
        """Return the file's bytes in a buffer the caller may change without changing the
        file, or None when it does not exist.

        Why: a snapshot's arrays (vectors, pheromones, postings) become the palace's own
        arrays as views of this buffer, so a big palace opens without copying them. On POSIX
        the buffer is a private copy-on-write mapping (``mmap.ACCESS_COPY``): pages are read
        when touched and copied only when changed, and the file may be replaced or deleted
        meanwhile (a compaction does both). Elsewhere, or where the file cannot be mapped,
        it is read into a new ``bytearray``. Cost: a mapping; pages as they are used."""
        path = self._file(name)
        try:
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                if os.name == "posix" and size > 0:
                    try:
                        return mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
                    except (OSError, ValueError):
                        pass  # a file system that cannot map: read it instead
                data = bytearray(size)
                got = f.readinto(data)
                return data if got == size else bytearray(data[:got])
        except FileNotFoundError:
            return None
        except OSError as err:
            raise StorageError(f"cannot read {path}: {err.strerror}") from None

    def write(self, name: str, data: bytes | list[memoryview]) -> None:
        """Replace the file atomically: write a new temporary file (mode 0600), fsync, rename,
        fsync the directory. ``data`` may be a list of byte pieces, written one after the
        other (a snapshot is then never held whole). Cost: one fsync of the data and one of
        the directory."""
        target = self._file(name)
        tmp = self.path / f".{name}.tmp"
        try:
            # Only the writer (who holds the lock) writes, so a temporary file already there
            # was left by a crash; O_EXCL then makes sure the bytes go to a new 0600 file
            # and never to one that someone else made or linked.
            tmp.unlink(missing_ok=True)
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | self._BINARY,
                         self.FILE_MODE)
            with os.fdopen(fd, "wb") as f:
                unsynced = 0
                for piece in (data if isinstance(data, list) else [data]):
                    f.write(piece)
                    unsynced += len(piece)
                    if unsynced >= self.SYNC_EVERY:  # (see SYNC_EVERY)
                        f.flush()
                        os.fdatasync(f.fileno())
                        unsynced = 0
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
            self._sync_dir()
        except OSError as err:
            raise StorageError(f"cannot write {target}: {err.strerror}") from None

    def append(self, name: str, data: bytes) -> None:
        """Append ``data`` and fsync before returning (a new file is created mode 0600)."""
        target = self._file(name)
        try:
            existed = target.exists()
            fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | self._BINARY,
                         self.FILE_MODE)
            with os.fdopen(fd, "ab") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            if not existed:
                self._sync_dir()
        except OSError as err:
            raise StorageError(f"cannot append to {target}: {err.strerror}") from None

    def truncate(self, name: str, size: int) -> None:
        """Cut the file to ``size`` bytes and fsync."""
        target = self._file(name)
        try:
            with open(target, "r+b") as f:
                f.truncate(size)
                f.flush()
                os.fsync(f.fileno())
        except FileNotFoundError:
            return
        except OSError as err:
            raise StorageError(f"cannot truncate {target}: {err.strerror}") from None

    def delete(self, name: str) -> None:
        """Remove the file if it exists."""
        try:
            self._file(name).unlink()
        except FileNotFoundError:
            return
        except OSError as err:
            raise StorageError(f"cannot delete {self._file(name)}: {err.strerror}") from None

    def rename(self, name: str, new: str) -> None:
        """Give the file ``name`` the name ``new`` (replacing a file of that name), then
        fsync the directory. Cost: a rename; no byte is copied."""
        source, target = self._file(name), self._file(new)
        try:
            os.replace(source, target)
        except FileNotFoundError:
            return
        except OSError as err:
            raise StorageError(f"cannot rename {source}: {err.strerror}") from None
        self._sync_dir()

    def mark(self, name: str, data: bytes) -> None:
        """Overwrite a small file in place with ``data`` of the same size each time, without
        a sync: the journal's tip, rewritten after every acknowledged append. Why no sync: it
        only ever lags what it describes (the append before it was synced), so a crash
        leaves it older, never ahead, and a write costs no second fsync. Cost: one
        ``write``."""
        target = self._file(name)
        try:
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | self._BINARY, self.FILE_MODE)
            try:
                os.write(fd, data)  # at offset 0: opened without O_APPEND
                os.ftruncate(fd, len(data))
            finally:
                os.close(fd)
        except OSError as err:
            raise StorageError(f"cannot write {target}: {err.strerror}") from None

    def release(self, name: str) -> None:
        """Nothing to do: a directory keeps no copy of its files (see Space.release)."""

    def _sync_dir(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            return  # platforms without directory handles: nothing more to do
        try:
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


class DirectoryRoot:
    """Palaces as subdirectories of ``path``; the writer lock is an ``flock`` on a file."""

    kind = "directory"

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._locks: dict[str, int] = {}

    def palaces(self) -> list[str]:
        """Return the palace names, sorted."""
        if not self.path.is_dir():
            return []
        return sorted(p.name for p in self.path.iterdir()
                      if p.is_dir() and PALACE_NAME.fullmatch(p.name))

    def space(self, name: str, create: bool = False) -> DirectorySpace:
        """Return the palace's space (made when ``create``), else raise NotFound."""
        check_palace_name(name)
        path = self.path / name
        if not path.is_dir():
            if not create:
                raise NotFound(f"no palace named {name!r} in {self.path}")
            try:
                path.mkdir(DirectorySpace.DIR_MODE, parents=True)
            except OSError as err:
                raise StorageError(f"cannot create {path}: {err.strerror}") from None
        return DirectorySpace(path)

    def remove(self, name: str) -> None:
        """Delete the palace's directory and files."""
        check_palace_name(name)
        path = self.path / name
        if not path.is_dir():
            raise NotFound(f"no palace named {name!r} in {self.path}")
        self.unlock(name)
        for p in path.iterdir():
            p.unlink()
        path.rmdir()

    def lock(self, name: str, wait: float = 0.0) -> bool:
        """Take the palace's writer lock (``flock`` on ``.lock``, released when the process
        ends, even by a crash), waiting up to ``wait`` seconds for another process to give
        it back; return False when it did not come. Cost: one ``flock`` when it is free;
        else polls that start at a millisecond and double up to 20 ms (a waiting writer
        gets the lock within about that of its release)."""
        if name in self._locks:
            return True
        try:
            import fcntl
        except ImportError:  # no flock here (Pyodide): one process only, so nobody else
            return True
        fd = os.open(self.path / name / ".lock", os.O_RDWR | os.O_CREAT,
                     DirectorySpace.FILE_MODE)
        deadline = time.monotonic() + max(wait, 0.0)
        pause = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                time.sleep(min(pause, max(deadline - time.monotonic(), 0.0)))
                pause = min(pause * 2, 0.02)
        self._locks[name] = fd
        return True

    def unlock(self, name: str) -> None:
        """Release the writer lock if this process holds it: unlocked before the descriptor
        is closed, so a child forked meanwhile (a heavy read's, which holds a copy of the
        descriptor until it closes it) does not keep it held."""
        fd = self._locks.pop(name, None)
        if fd is not None:
            with contextlib.suppress(ImportError, OSError):
                import fcntl

                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)


class QueuedSpace(MemorySpace):
    """A memory mirror of a palace's files that queues every change for a host to write.

    ``reads_back`` is False: reading a file just written would only read the mirror; the host
    reads each file it writes whole back from storage and compares it before the changes after
    it (workers/storage.js), which is where the check belongs.

    For hosts whose storage is asynchronous (the browser's OPFS and IndexedDB): the host loads
    the files into the mirror before boot, and after every call it takes :meth:`drain` and
    writes those changes, in order, before it answers the caller. Reads come from the mirror.
    A file the host listed but did not read (given as None: an older generation's snapshot,
    needed only for a fallback) raises :class:`~palazzo.errors.NotLoaded` when read, and its
    name is kept in ``wanted`` for the host to read and supply (:meth:`supply`).
    """

    def __init__(self, files: dict[str, bytes | None] | None = None) -> None:
        super().__init__()
        self.deferred: set[str] = set()
        self.wanted: list[str] = []
        for name, data in (files or {}).items():
            if data is None:
                self.deferred.add(name)
            else:  # a bytearray is taken as it is: the host made it for the mirror
                self.files[name] = data if isinstance(data, bytearray) else bytearray(data)
        self.pending: list[tuple[str, str, bytes | bytearray | int | None]] = []

    reads_back = False

    def names(self) -> list[str]:
        """Return the file names, sorted, those not read yet included."""
        return sorted({*self.files, *self.deferred})

    def _loaded(self, name: str) -> None:
        if name in self.deferred:
            if name not in self.wanted:
                self.wanted.append(name)
            raise NotLoaded(name)

    def read(self, name: str) -> bytes | None:
        """Return the file's bytes (None: no such file); raise NotLoaded for one not read."""
        self._loaded(name)
        return super().read(name)

    def load(self, name: str) -> bytearray | None:
        """Return the mirror's own buffer of ``name`` (None: no such file) and let the mirror
        forget it, without a copy: a snapshot's arrays become the palace's, and a big palace
        is held once in the tab, not twice. The file stays in storage; reading it again
        raises NotLoaded and the host supplies it (as for a file never read). Raises
        NotLoaded for a file not read yet."""
        self._loaded(name)
        data = self.files.pop(name, None)
        if data is not None:
            self.deferred.add(name)
        return data

    def release(self, name: str) -> None:
        """Forget the mirror's copy of ``name`` (it stays in storage, read again on demand):
        a snapshot written and handed to the host, or the previous generation's."""
        if name in self.files:
            del self.files[name]
            self.deferred.add(name)

    def supply(self, files: dict[str, bytes], asked: Any = ()) -> None:
        """Give the mirror files the host read because they were wanted. A name in
        ``asked`` that ``files`` lacks is gone from storage (another tab's compaction removed
        it meanwhile): it is forgotten, so boot sees it missing instead of asking again."""
        for name, data in files.items():
            if name in self.deferred:
                self.deferred.discard(name)
                self.files[name] = data if isinstance(data, bytearray) else bytearray(data)
        self.deferred -= {str(n) for n in asked} - set(files)
        self.wanted = [n for n in self.wanted if n in self.deferred]

    def write(self, name: str, data: bytes | list[memoryview]) -> None:
        """Replace the file in the mirror and queue ("write", name, its bytes)."""
        self.deferred.discard(name)
        super().write(name, data)
        # The queued bytes are the mirror's buffer itself, not a copy: a file written whole
        # is replaced, never changed in place (appends go to files that are only appended).
        self.pending.append(("write", name, self.files[name]))

    def _unshare(self, name: str) -> None:
        """Give ``name`` a buffer of its own when a queued write still holds the mirror's (a
        change in place would change what that write writes)."""
        if name in self.files and any(op == "write" and n == name for op, n, _ in self.pending):
            self.files[name] = bytearray(self.files[name])

    def append(self, name: str, data: bytes) -> None:
        """Append in the mirror and queue ("append", name, data)."""
        self._unshare(name)
        super().append(name, data)
        self.pending.append(("append", name, bytes(data)))

    def truncate(self, name: str, size: int) -> None:
        """Cut the mirror's file and queue ("truncate", name, size)."""
        self._unshare(name)
        super().truncate(name, size)
        self.pending.append(("truncate", name, int(size)))

    def delete(self, name: str) -> None:
        """Remove the mirror's file and queue ("delete", name, None)."""
        super().delete(name)
        self.deferred.discard(name)
        self.pending.append(("delete", name, None))

    def rename(self, name: str, new: str) -> None:
        """Rename the mirror's file and queue ("rename", name, new)."""
        if name in self.deferred:
            self.deferred.discard(name)
            self.deferred.add(new)
        elif name in self.files:
            super().rename(name, new)
        else:
            return
        self.pending.append(("rename", name, new))

    def mark(self, name: str, data: bytes) -> None:
        """Replace the mirror's small file and queue ("mark", name, its bytes): the host
        writes it in place."""
        MemorySpace.write(self, name, data)
        self.pending.append(("mark", name, bytes(data)))

    def drain(self) -> list[tuple[str, str, bytes | int | None]]:
        """Return the queued changes, oldest first, and forget them."""
        out, self.pending = self.pending, []
        return out


class QueuedRoot:
    """Palaces whose files a host keeps (browser storage); this side holds one mirror each.

    ``kind`` names the host's backend ("opfs" or "indexeddb") for the status line. The host
    passes the names of the palaces it has and loads the files of a palace before it is
    opened. Locks are the host's too (the Web Locks API in the browser, which is
    asynchronous): before a call that may open a palace the host asks for its lock and
    reports the answer with :meth:`grant`; ``lock`` then answers from what was granted, and
    ``unlock`` queues the lock in ``released`` for the host to give back once the changes
    queued before it are written.
    """

    def __init__(self, kind: str, names: list[str],
                 held: tuple[str, ...] | list[str] | set[str] = ()) -> None:
        self.kind = kind
        self.names = set(names)
        self.spaces: dict[str, QueuedSpace] = {}
        self.held: set[str] = set(held)
        self.removed: list[str] = []
        self.released: list[str] = []

    def load(self, name: str, files: dict[str, bytes | None]) -> None:
        """Give the mirror of ``name`` the files the host read (replacing the old mirror); a
        file given as None is kept in storage, unread, until boot wants it.

        Raises StorageError when the old mirror still has changes the host has not taken:
        replacing it would lose them."""
        check_palace_name(name)
        old = self.spaces.get(name)
        if old is not None and old.pending:
            raise StorageError(f"palace {name!r} has changes not yet written; not reloaded")
        self.names.add(name)
        self.spaces[name] = QueuedSpace(files)

    def grant(self, name: str, held: bool) -> None:
        """Record whether the host holds the writer lock of ``name`` for this tab."""
        if held:
            self.held.add(name)
            if name in self.released:
                self.released.remove(name)
        else:
            self.held.discard(name)

    def palaces(self) -> list[str]:
        """Return the palace names, sorted."""
        return sorted(self.names)

    def space(self, name: str, create: bool = False) -> QueuedSpace:
        """Return the mirror of ``name`` (a new empty one when ``create``)."""
        check_palace_name(name)
        if name not in self.names:
            if not create:
                raise NotFound(f"no palace named {name!r}")
            self.names.add(name)
        return self.spaces.setdefault(name, QueuedSpace())

    def remove(self, name: str) -> None:
        """Forget the palace; the host deletes its files when it sees it in ``removed``."""
        if name not in self.names:
            raise NotFound(f"no palace named {name!r}")
        self.names.discard(name)
        self.spaces.pop(name, None)
        self.removed.append(name)

    def lock(self, name: str) -> bool:
        """Return whether this tab holds the writer lock of ``name`` (as the host granted)."""
        return name in self.held

    def unlock(self, name: str) -> None:
        """Give up the writer lock of ``name``: queued in ``released`` for the host."""
        if name in self.held:
            self.held.discard(name)
            self.released.append(name)
