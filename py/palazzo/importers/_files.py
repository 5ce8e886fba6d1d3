"""Reading a source's files without ever blocking: regular files only.

Where an importer expects a file, a folder may hold a FIFO, a socket or a device instead
(``mkfifo message.json``). Opening a FIFO for reading waits for a writer that may never come
— forever, while the CLI holds the palace's writer lock — and a device such as ``/dev/zero``
never ends. So importers open a file only through :func:`open_regular` (or
:func:`read_regular`), which looks at the path before opening it, opens it without waiting,
and looks again at what it opened (the path may have been swapped in between); a folder's
entries are sorted with :func:`irregular` (or :func:`regular_files`), and whatever is not a
regular file is left out with the reason, as every other left-out item is.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

__all__ = ["NOT_REGULAR", "irregular", "open_regular", "read_regular", "regular_files"]

NOT_REGULAR = "not a regular file"
# Non-blocking, so opening a FIFO returns at once; no controlling terminal from a tty.
_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
          | getattr(os, "O_BINARY", 0))


def _kind(mode: int) -> str | None:
    """Return what a file of ``mode`` is when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    for test, what in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISDIR, "a folder")):
        if test(mode):
            return f"{NOT_REGULAR} ({what})"
    return NOT_REGULAR


def irregular(path: str | os.PathLike[str]) -> str | None:
    """Return why ``path`` is not a file to read — ``"not a regular file (a FIFO)"``, a
    socket, a character or block device, a folder — or None when it is a regular file (a
    symbolic link is followed, as :meth:`pathlib.Path.is_file` does). Raises OSError when
    it cannot be looked at (missing, no permission). Cost: one ``stat``; nothing opened."""
    return _kind(os.stat(path).st_mode)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """Return the regular file at ``path`` open for reading in binary (the caller closes
    it: ``with open_regular(p) as f``); never waits on a FIFO or opens a device. Raises
    OSError when the path is not a regular file — before or after it is opened, as the path
    may be swapped in between; then ``strerror`` is :func:`irregular`'s reason, so a
    caller's ``cannot read: {err.strerror}`` says what it found — or cannot be opened.
    Cost: two ``stat`` calls."""
    where = os.fspath(path)
    kind = irregular(where)
    if kind is None:
        fd = os.open(where, _FLAGS)
        try:
            kind = _kind(os.fstat(fd).st_mode)
        except OSError:
            os.close(fd)
            raise
        if kind is None:
            # Non-blocking changes nothing for a regular file's reads.
            return os.fdopen(fd, "rb")
        os.close(fd)
    raise OSError(errno.EINVAL, kind, where)


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """Return the bytes of the regular file at ``path``; raises OSError as
    :func:`open_regular` does, or when it cannot be read. Cost: one read of the file."""
    with open_regular(path) as file:
        return file.read()


def regular_files(paths: list[Path]) -> tuple[list[Path], list[tuple[Path, str]]]:
    """Return ``paths`` split into (the regular files, [(path, why it is left out)]): FIFOs,
    sockets, devices and folders with :func:`irregular`'s reason, a path that cannot be
    looked at with ``unreadable: <why>``. Order is kept. Cost: one ``stat`` a path."""
    files: list[Path] = []
    left: list[tuple[Path, str]] = []
    for p in paths:
        try:
            kind = irregular(p)
        except OSError as err:
            left.append((p, f"unreadable: {err.strerror}"))
            continue
        if kind is None:
            files.append(p)
        else:
            left.append((p, kind))
    return files, left
