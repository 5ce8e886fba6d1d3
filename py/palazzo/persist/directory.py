"""A palace directory opened by a process (CLI, MCP server, hook), and how hosts pick it.

``default_palace`` says where the palace lives when no ``--palace`` is given, and
:class:`PalaceDirectory` opens the directory beside any number of other processes, each of
which writes by taking the lock for the write alone (embedders by name come from
:mod:`palazzo.embed.registry`). A :class:`PalaceDirectory` is a context manager, as an httpx
transport is: ``with PalaceDirectory(path, make) as d:`` gives a held lock back when the
block ends, however it ends.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import pickle
import selectors
import signal
import stat
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from palazzo.errors import PalazzoError, ReadOnly, StorageError
from palazzo.palace import Palace
from palazzo.persist.home import default_palace
from palazzo.persist.palacestore import (
    KEYS,
    SNAPSHOT_OPS,
    TIP,
    PalaceStore,
    journal_name,
    snapshot_name,
)
from palazzo.persist.storage import PALACE_NAME, DirectoryRoot, DirectorySpace

DEFAULT_PALACE = default_palace()
LOCK_WAIT = 30.0  # seconds a write waits for another process's write to finish
CHILD_NICENESS = 10  # how much lower a compaction's child runs than the process serving


def lock_wait_default() -> float:
    """Return how long a write waits for the writer lock: $PALAZZO_LOCK_WAIT seconds when
    it is a number ≥ 0 (a hook that must never stall its assistant sets it low), else
    :data:`LOCK_WAIT`."""
    try:
        wait = float(os.environ.get("PALAZZO_LOCK_WAIT", ""))
    except ValueError:
        return LOCK_WAIT
    return wait if wait >= 0 and wait == wait else LOCK_WAIT


class PalaceDirectory:
    """A palace directory opened by this process, one of any number that write it (the
    SQLite model): no process keeps the writer lock between calls.

    The lock is the one :class:`palazzo.persist.storage.DirectoryRoot` takes (``flock`` on
    ``.lock`` in the directory), so a library over the parent directory and other processes
    on the palace exclude each other while one of them writes. A write (an operation that
    ``mutates``, a compaction, a repair) waits for the lock (at most :data:`LOCK_WAIT`
    seconds, then ReadOnly says who is slow), brings memory up to what the others
    acknowledged (:meth:`PalaceStore.follow`: the journal's new tail, or a boot after
    another's compaction), runs, is appended and synced, and gives the lock back. A read
    takes no lock: it follows the files first, so it never returns data older than a write
    that any process acknowledged before the read began. Offers the :class:`PalaceStore`
    calls :func:`serve` needs (``call``, ``status``, ``registry``).

    ``hold()`` keeps the lock over several calls (a command whose steps must not be
    interleaved with another process's writes); a batch import does not need it, as each
    batch is one call and others interleave between batches.

    Cost of a read: reading the 28-byte tip, and the journal's new tail when it grew. Of a
    write: a ``flock``, the same, an append with its fsync. A boot only when another process
    compacted (or damage appeared).

    Use it as a context manager (``with PalaceDirectory(path, make) as d:``), or call
    :meth:`close` when done: either gives a held lock back, and a closed directory refuses
    calls.
    """

    def __init__(self, path: Path, make_palace: Callable[..., Palace],
                 lock_wait: float | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.path.mkdir(DirectorySpace.DIR_MODE, parents=True, exist_ok=True)
        name = self.path.name if PALACE_NAME.fullmatch(self.path.name) else "palace"

        def make(**kw: Any) -> Palace:
            return make_palace(**kw) if "name" in kw else make_palace(name=name, **kw)

        self._make = make
        self.lock_wait = lock_wait_default() if lock_wait is None else float(lock_wait)
        self._root = DirectoryRoot(self.path.parent)
        self.space = DirectorySpace(self.path)
        self._serial = threading.RLock()  # one call at a time: the store is not thread-safe
        # Taken before ``_serial`` (never after: no deadlock) by hold() (an import, compact,
        # repair, a held block), close(), and a compaction aside for its whole length, which
        # lets go of ``_serial`` while its child writes, so reads and plain writes (which
        # take ``_serial`` alone) go on then.
        self._gate = threading.RLock()
        self._holding = 0  # nested holds of the lock by this process
        self._private = False  # whether this process narrowed the files' modes yet
        self._closed = False
        self.reads_only = False  # (another(reads_only=True))
        # Heavy reads (Operation.heavy) in a forked child: the palace server's choice.
        self.reads_aside = False
        self.aside_limit = CHILD_WAIT  # seconds such a child may take
        if not self.space.names():  # a new palace: created (and compacted) by one process
            self._take()
            try:
                if not self.space.names():
                    self.store = PalaceStore(self.space, make, read_only=False)
                    self._set_writer(False)
                    return
            finally:
                self._release()
        self.store = PalaceStore(self.space, make, read_only=True,
                                 locked_elsewhere=self._locked_elsewhere)

    def another(self, reads_only: bool = False) -> PalaceDirectory:
        """Return a second :class:`PalaceDirectory` on the same files with the same palace
        maker: a copy of the palace in this process's memory that follows the files and
        takes the lock as another process would. ``reads_only``: it never takes the lock,
        and a read that has something to store raises ReadOnly instead of running again as
        a write (the palace server reads from such a copy while it writes with this one,
        and sends those reads here: :mod:`palazzo.hosts.server.pair`). Cost: opening the
        palace again (its snapshot read and its journal replayed)."""
        other = PalaceDirectory(self.path, self._make, self.lock_wait)
        other.reads_only = reads_only
        return other

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
        ``keys.json`` the signing secrets. Done by a writer holding the lock, only to the
        palace's own files (not to other files in the directory, nor to the directory,
        which a user may have chosen), and a mode that cannot be changed is left as it is.
        Cost: one stat a file."""
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
        """The store's status; ``read_only`` says whether writes fail here (damaged files,
        or a palace this palazzo cannot write), not whether this process holds the lock
        now: any process may write."""
        return dataclasses.replace(self.store.status, read_only=self.store.blocked)

    @property
    def registry(self) -> Any:
        """The operations registry the store runs."""
        return self.store.registry

    @property
    def writer(self) -> bool:
        """Whether this process holds the writer lock now (for a write or a :meth:`hold`)."""
        return self._holding > 0

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run an operation like :meth:`PalaceStore.call` and return its result.

        A read follows the files first (no lock); a mutating operation runs under the
        writer lock (:meth:`_locked`: during a compaction aside, under the lock it holds; an
        import, which writes a snapshot itself, waits for it as :meth:`hold` does). A read
        that has something to store (a slice that needs the palace's first signing key) is
        run again under the lock, so the key is stored before any token it signs is
        returned. After :meth:`close` it raises StorageError."""
        self._check_open()
        op = self.store.registry.get(name)
        if not op.mutates and op.heavy and self.reads_aside:
            return self._call_aside(name, args)
        if not op.mutates:
            with self._serial:
                self._check_open()
                if not self.writer:  # (holding the lock, nobody else can have written)
                    self.store.follow()
                try:
                    return self.store.call(name, args)
                except ReadOnly:  # nothing was kept: run it again as a write below
                    if self.store.blocked or self.reads_only:
                        raise
        if self.reads_only:
            raise ReadOnly("this copy of the palace only reads")
        # A write that makes a snapshot itself (an import) waits for a compaction aside.
        with self.hold() if name in SNAPSHOT_OPS else self._locked():
            return self.store.call(name, args)

    def _call_aside(self, name: str, args: dict[str, Any] | None) -> dict[str, Any]:
        """Run the heavy read ``name`` in a forked child on this copy as it stands after
        following the files, and return the child's answer (its error raised here), this
        copy's turn given back as soon as the child exists: other calls run here meanwhile,
        and the child's work runs on another core, outside this interpreter's lock. What
        the child computed and the palace keeps (its communities) comes back with the
        answer and is kept here when the palace is still as it was. At most
        :data:`HEAVY_CHILDREN` children at once (more wait); a child stops after
        :attr:`aside_limit` seconds. Where there is no ``fork`` the read runs here as any
        read does; a child that gives no answer (killed, out of time) raises StorageError.

        Why: community colouring of a 20k-drawer palace takes 12 s of Python; run in the
        server's process it held every other call, or with two copies shared the
        interpreter with them (search p50 4 s under load while it ran). Cost: a ``fork``
        (page tables; the child copies only pages the parent changes meanwhile), and the
        answer pickled through a pipe."""
        if getattr(os, "fork", None) is None:
            return self._call_here(name, args)
        with _HEAVY_CHILDREN:
            with self._serial:
                self._check_open()
                if not self.writer:
                    self.store.follow()
                child = _fork_reader(self.store, name, args, self.aside_limit)
            if child is None:  # (no child could be made)
                return self._call_here(name, args)
            answer = _child_answer(*child, limit=self.aside_limit + 5)
        if answer is None:
            raise StorageError(f"{name} ran in a child process that gave no answer within "
                               f"{self.aside_limit:g} s (it ran out of time or was stopped); "
                               "nothing was changed")
        kind, value, kept = answer
        if kept is not None:
            with self._serial, contextlib.suppress(Exception):  # (kept when still the
                self.store.palace.communities.adopt(kept)  # palace's communities)
        if kind == "error":
            raise value
        return value

    def _call_here(self, name: str, args: dict[str, Any] | None) -> dict[str, Any]:
        with self._serial:
            self._check_open()
            if not self.writer:
                self.store.follow()
            return self.store.call(name, args)

    @contextlib.contextmanager
    def turn(self, wait: float) -> Iterator[bool]:
        """Within the block this thread has the directory's turn (its calls run one at a
        time: the store is not thread-safe) when the block is given True: waiting at most
        ``wait`` seconds for it (0: not at all), False when it did not come. Calls this
        thread makes inside the block run at once. Why: the palace server sends a read to
        whichever of its two copies is free (:mod:`palazzo.hosts.server.pair`). Cost: none
        beyond the wait."""
        got = self._serial.acquire(timeout=wait) if wait > 0 else \
            self._serial.acquire(blocking=False)
        try:
            yield got
        finally:
            if got:
                self._serial.release()

    def compact(self) -> None:
        """Write the palace as a new snapshot now, so the next open reads it instead of
        replaying a long journal (the command line does this after an import). Takes the
        writer lock for it as a write does; returns None. Cost: writing the whole palace
        once."""
        self._check_open()
        with self.hold():  # (the gate before _serial, as everywhere: no deadlock)
            self.store.compact()

    def repair(self) -> dict[str, Any]:
        """Repair damaged files (:meth:`PalaceStore.repair`) under the writer lock, after a
        boot as the writer; return its report."""
        self._check_open()
        with self.hold(boot=True):
            return self.store.repair()

    @contextlib.contextmanager
    def hold(self, boot: bool = False) -> Iterator[None]:
        """Within the block this process holds the writer lock, its memory up to date with
        every other process's writes (``boot``: booted again as the writer, as a repair
        needs); the lock goes back when the block ends. Waits for a compaction aside to
        end (nothing else compacts, imports or repairs meanwhile). Raises ReadOnly when the
        lock did not come within ``lock_wait`` seconds, or when the files are damaged (then
        nothing can be written until a repair)."""
        with self._gate, self._locked(boot):
            yield

    @contextlib.contextmanager
    def _locked(self, boot: bool = False) -> Iterator[None]:
        """:meth:`hold` without waiting for a compaction aside: what one write takes. While a
        compaction's child writes, the lock is this process's already, and the write goes
        on under it (appended to the journal the new snapshot's journal will repeat)."""
        with self._serial:
            self._check_open()
            if self._holding:
                self._holding += 1
                try:
                    yield
                finally:
                    self._holding -= 1
                return
            self._take()
            try:
                self._set_writer(True)
                if boot:
                    self.store.boot()
                else:
                    self.store.follow()
                if self.store.blocked and not boot:
                    raise self.store.read_only_error()
                if not self._private:
                    self._make_private()
                    self._private = True
                yield
            finally:
                self._set_writer(False)
                self._release()

    def compact_aside(self) -> bool:
        """Compact the palace when its journal is due for it (:attr:`PalaceStore.compact_due`)
        without stopping this process: under the writer lock a forked child writes and
        verifies snapshot N+1 from a copy-on-write image of memory at record S, while the
        parent goes on answering reads and writes (appended to journal N under the lock
        the compaction holds; other processes' writes wait for it). Then the parent starts
        journal N+1 with the records after S (copied; journal N keeps them too) and moves
        the tip to it (:meth:`PalaceStore.adopt_snapshot`). Where there is no ``fork``, or
        the child fails, it compacts inline as a write does. A failed compaction is noted in
        the status and raises nothing (the journal goes on). Returns whether it compacted.

        Why: a snapshot of a 20k-drawer palace takes about a second and a half to encode,
        write and read back, and a server that did it on the request path held every client
        for that long (its p99). Cost: a ``fork`` (page tables; pages are copied only as the
        parent changes them), the child's work on the other core, and copying the records
        written meanwhile."""
        store = self.store
        with self._gate:  # (no hold, import, repair or other compaction meanwhile)
            with self._serial:
                if self._closed or not store.compact_due:
                    return False
                if self._holding:  # within this thread's hold(): inline, as a write does
                    store.compact_or_note()
                    return True
                self._take()
                try:
                    self._set_writer(True)
                    store.follow()
                    go = not store.blocked and store.compact_due
                    if go:
                        gen = store.status.generation + 1
                        since, boots = (store.seq, store.status.journal_bytes), store.boots
                        store.aside = gen
                        pid = _fork_writer(store, gen)  # (memory as it is: no call midway)
                except BaseException:
                    store.aside = None
                    self._set_writer(False)
                    self._release()
                    raise
                if not go:
                    self._set_writer(False)
                    self._release()
                    return False
            try:
                done = pid is not None and _child_wrote(pid)
                with self._serial:
                    store.aside = None
                    current = store.status.generation == gen - 1
                    if done and current and store.boots == boots:
                        try:
                            store.adopt_snapshot(gen, store.space.size(snapshot_name(gen)) or 0,
                                                 since=since)
                        except Exception as err:
                            if journal_name(gen) not in store.space.names():  # (else the
                                with contextlib.suppress(Exception):  # new generation stands)
                                    store.space.delete(snapshot_name(gen))
                            store.note_compaction_failed(err)
                    elif current:  # no child, a failed one, or memory read again meanwhile
                        if done:
                            with contextlib.suppress(Exception):
                                store.space.delete(snapshot_name(gen))  # never adopted
                        store.compact_or_note()
                    elif not done and snapshot_name(gen) not in store.space.names():
                        # A boot meanwhile took the child's snapshot, which then failed its
                        # check and was deleted: read the palace again, from generation N.
                        store.boot()
            finally:
                with self._serial:
                    store.aside = None
                    self._set_writer(False)
                    self._release()
        return True

    def refresh(self) -> None:
        """Bring this process's memory up to what every process acknowledged
        (:meth:`PalaceStore.follow`). Cost: reading the tip; the journal's new tail when it
        grew; a boot after another's compaction."""
        with self._serial:
            self.store.follow()

    def take_changes(self, wait: bool = True
                     ) -> tuple[list[dict[str, Any]], dict[str, int]] | None:
        """Return the writes this process made or followed since the last take (the store's
        ``changes``: ``{"seq", "op", "ids", "wings"}`` each, oldest first, ``wings`` those of
        the drawers it names that are still there) and where the palace
        stands (``seq``, ``generation``, ``journal_records``, ``journal_bytes``), emptying
        the list: what a change feed sends. Without ``wait``, None at once while a call
        runs here (a write waiting for another process's lock: the next take has them).
        Cost: copying the list."""
        if not self._serial.acquire(blocking=wait):
            return None
        try:
            store = self.store
            events = list(store.changes)
            store.changes.clear()
            drawers = store.palace.drawers
            for e in events:  # the wings a change touched (a wing-scoped listener's filter)
                rows = [drawers.row_of.get(i) for i in e["ids"]]
                e["wings"] = sorted({drawers.wing[r] for r in rows if r is not None})
            st = store.status
            return events, {"seq": store.seq, "generation": st.generation,
                            "journal_records": st.journal_records,
                            "journal_bytes": st.journal_bytes}
        finally:
            self._serial.release()

    def close(self) -> None:
        """Give a held lock back; returns None. Idempotent: a second close does nothing.
        Afterwards :meth:`call` raises StorageError."""
        with self._gate, self._serial:  # (after a compaction aside in flight)
            if self._closed:
                return
            self._closed = True
            if self._holding:
                self._holding = 0
                self._set_writer(False)
                self._release()

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError(f"{self.path} was closed: open the palace directory again to "
                               "use it")

    def _locked_elsewhere(self) -> bool:
        """Return whether someone else (another process, or another directory of this
        one) holds the writer lock now; False while this directory holds it. Cost: one
        ``flock`` tried and given back."""
        if self._holding:
            return False
        if self._root.lock(self.path.name, wait=0):
            self._root.unlock(self.path.name)
            return False
        return True

    def _take(self) -> None:
        """Take the writer lock, waiting up to ``lock_wait`` seconds; raise ReadOnly when it
        did not come."""
        if not self._root.lock(self.path.name, wait=self.lock_wait):
            raise ReadOnly(f"another process held this palace for writing for more than "
                           f"{self.lock_wait:g} s; nothing was changed here (try again)")
        self._holding = 1

    def _release(self) -> None:
        self._holding = 0
        self._root.unlock(self.path.name)

    def _set_writer(self, writer: bool) -> None:
        """Switch the store between writer and reader. A store has two switches and both
        must move: ``writer`` (this process holds the lock, so a boot may cut a torn tail and
        boots as the writer) and ``status.read_only`` (calls may write; a damaged store
        stays read-only)."""
        self.store.writer = writer
        self.store.status.read_only = not writer or self.store.blocked


CHILD_WAIT = 300.0  # seconds a compaction's child may take before it is stopped
HEAVY_CHILDREN = 2  # heavy reads in forked children at once, in this process
_HEAVY_CHILDREN = threading.BoundedSemaphore(HEAVY_CHILDREN)
# Forks here one at a time: a child forked between another's pipe and the closing of its
# write end would hold that pipe open.
_FORKING = threading.Lock()
# Forking in a process with threads is what the server does on purpose (the children only
# write a snapshot or compute one read): Python 3.12's warning about it is not for them.
warnings.filterwarnings("ignore", message=r".*fork\(\) may lead to deadlocks",
                        category=DeprecationWarning)


def _fork_writer(store: PalaceStore, gen: int) -> int | None:
    """Fork a child that runs ``store.write_snapshot(gen)`` and exits 0 when it wrote and
    verified the snapshot; return its pid (None where there is no ``fork``: the caller
    compacts inline). Called with the store's memory still (no call midway). The child
    inherits the writer lock's descriptor, so the lock stays held while it runs even if
    the parent dies (kill -9); it runs at a lower priority, ignores Ctrl-C and SIGTERM sent
    to the group (the parent decides), and leaves through ``os._exit``: nothing of the
    parent's (buffers, atexit, servers) runs in it."""
    fork = getattr(os, "fork", None)
    if fork is None:
        return None
    with _FORKING:
        try:
            pid = fork()
        except OSError:  # (no memory or processes left for a child: inline, then)
            return None
    if pid == 0:
        code = 1
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, signal.SIG_IGN)
            # Its own deadline, kept even when no parent is left to stop it (killed -9):
            # the lock it inherited must not be held for good by a child that hangs.
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(int(CHILD_WAIT))
            with contextlib.suppress(OSError):
                os.nice(CHILD_NICENESS)  # the parent's answers come first
            gc.disable()
            store.write_snapshot(gen)
            code = 0
        finally:
            os._exit(code)
    return pid


def _fork_reader(store: PalaceStore, name: str, args: dict[str, Any] | None,
                 limit: float = CHILD_WAIT) -> tuple[int, int] | None:
    """Fork a child that runs the read ``store.call(name, args)`` and writes, pickled and
    after its length (8 bytes), ``("ok", result, kept)`` or ``("error", the PalazzoError,
    kept)`` to a pipe, ``kept`` being the palace's communities cache as the read left it
    (:meth:`CommunityCache.state`); return (its pid, the pipe's reading end), or None where
    no child could be made. Called with the store still (no call midway). The child closes
    the sockets and the writer lock it inherited (a restarted server must be able to listen
    again, and no other process must wait for a lock the child holds), runs at a lower
    priority, dies at Ctrl-C or SIGTERM as any process, stops itself after ``limit``
    seconds, and leaves through ``os._exit``."""
    with _FORKING:  # (no other fork here between the pipe and its write end closed)
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid:
            os.close(w)
            return pid, r
    code = 1
    try:
        os.close(r)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.alarm(max(int(limit), 1))
        with contextlib.suppress(OSError):
            os.nice(CHILD_NICENESS)
        _close_inherited(keep=w)
        gc.disable()
        try:
            answer: tuple[str, Any] = ("ok", store.call(name, args))
        except PalazzoError as err:
            answer = ("error", err)
        kept = None
        with contextlib.suppress(Exception):
            kept = store.palace.communities.state()
        try:
            data = pickle.dumps((*answer, kept), pickle.HIGHEST_PROTOCOL)
        except Exception as err:  # (an answer that does not pickle: say so)
            data = pickle.dumps(("error", StorageError(
                f"{name}'s answer could not be sent from its child process: {err}"), None))
        view = memoryview(len(data).to_bytes(8, "big") + data)
        while view:
            view = view[os.write(w, view):]
        code = 0
    finally:
        os._exit(code)


def _close_inherited(keep: int) -> None:
    """Close, in a forked child, the sockets and writer-lock files it inherited (all but
    ``keep``): a listening socket held by the child would keep a restarted server from
    listening, and a lock descriptor would keep the lock held should the parent die.
    Where the process's descriptors cannot be listed (no ``/proc`` nor ``/dev/fd``),
    nothing. Cost: a ``stat`` a descriptor."""
    for folder in ("/proc/self/fd", "/dev/fd"):
        try:
            fds = [int(f) for f in os.listdir(folder)]
            break
        except (OSError, ValueError):
            continue
    else:
        return
    for fd in fds:
        if fd <= 2 or fd == keep:
            continue
        with contextlib.suppress(OSError):
            mode = os.fstat(fd).st_mode
            lock = stat.S_ISREG(mode) and os.readlink(f"{folder}/{fd}").endswith("/.lock")
            if stat.S_ISSOCK(mode) or lock:
                os.close(fd)


def _child_answer(pid: int, fd: int, limit: float = CHILD_WAIT
                  ) -> tuple[str, Any, Any] | None:
    """Read the answer of the child ``pid`` from ``fd`` (its length, then that many bytes;
    ``fd`` closed after) and wait for the child to end; return ``(kind, value, kept)`` as
    :func:`_fork_reader` sends it, or None when no whole answer came within ``limit``
    seconds (the child is then killed). Reads exactly the answer's bytes, so a descriptor
    of the pipe that another child inherited cannot keep it waiting. Cost: the answer's
    bytes; the waits are spent in ``select`` without the GIL."""
    deadline = time.monotonic() + limit
    data = bytearray()
    need = 8
    answered = False
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        try:
            while len(data) < need:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    break
                chunk = os.read(fd, min(need - len(data), 1 << 20))
                if not chunk:
                    break
                data += chunk
                if need == 8 and len(data) == 8:
                    need = 8 + int.from_bytes(data, "big")
            answered = need > 8 and len(data) == need
        finally:
            os.close(fd)
            if not answered:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
    if not answered:
        return None
    try:
        kind, value, kept = pickle.loads(bytes(data[8:]))
    except Exception:
        return None
    return kind, value, kept


def _child_wrote(pid: int, limit: float = CHILD_WAIT) -> bool:
    """Wait for the child ``pid`` (at most ``limit`` seconds, then it is killed) and return
    whether it exited 0. Cost: a poll every 20 ms, without the GIL in between."""
    deadline = time.monotonic() + limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        if time.monotonic() > deadline:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return False
        time.sleep(0.02)
