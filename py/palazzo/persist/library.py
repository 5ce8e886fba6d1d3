"""Many named palaces in one root, one of them open at a time, and the library's operations.

Hosts (the worker bridge, the CLI's palace directory) answer ``list_palaces``, ``new_palace``,
``open_palace``, ``delete_palace`` and ``storage_status`` here; every other operation goes to the
open palace's :class:`~palazzo.persist.palacestore.PalaceStore`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from palazzo.errors import ReadOnly, ValidationError
from palazzo.ops import REGISTRY, Operation, Registry
from palazzo.ops.registry import obj
from palazzo.palace import Palace
from palazzo.persist.palacestore import PalaceStore
from palazzo.persist.storage import Root, Space, check_palace_name


class Library:
    """Several named palaces in one root; one of them open at a time.

    ``list_palaces``, ``new_palace``, ``open_palace`` and ``delete_palace`` are host-level
    calls (they change which palace the operations run on); everything else goes to the open
    palace's :class:`PalaceStore`.
    """

    def __init__(self, root: Root, make_palace: Callable[..., Palace],
                 registry: Registry = REGISTRY, clock: Callable[[], float] = time.time) -> None:
        self.root = root
        self.make_palace = make_palace
        self.registry = registry
        self.clock = clock
        self.store: PalaceStore | None = None
        self.name: str | None = None

    def list_palaces(self) -> dict[str, Any]:
        """Return {"palaces": names, "open": the open one, "backend": the root's kind}."""
        return {"palaces": self.root.palaces(), "open": self.name, "backend": self.root.kind}

    def new_palace(self, name: str) -> dict[str, Any]:
        """Create an empty palace called ``name``, open it and return its status; refuse an
        existing name, and a name whose writer lock someone else holds (a palace made
        read-only could never be written, so creating it would keep nothing)."""
        check_palace_name(name)
        if name in self.root.palaces():
            raise ValidationError(f"a palace named {name!r} exists already")
        space = self.root.space(name, create=True)
        if not self.root.lock(name):
            raise ReadOnly(f"palace {name!r} is being written elsewhere (another tab or "
                           "process); nothing was created")
        return self._switch(name, space, writable=True)

    def open_palace(self, name: str) -> dict[str, Any]:
        """Open ``name`` and return its status: read-only when another writer holds its lock.

        Re-opening the palace that is open for writing changes nothing (same store, same
        lock). Re-opening it while it is read-only tries the lock again: this is how a tab
        takes over writing once the other writer has gone, and it boots from the files again
        (the other writer may have changed them). The lock of the palace open before is
        released once the new one is open. Costs one boot (snapshot + journal replay) unless
        it is the no-op.
        """
        if name == self.name and self.writable:
            return {"palace": name, "status": self.store.status.to_dict()}
        space = self.root.space(name)
        return self._switch(name, space, self.root.lock(name))

    def reload(self) -> dict[str, Any]:
        """Boot the open palace again from its files, keeping its lock; return its status.

        For hosts whose writes can fail after a call returned (the browser writes once the
        call is done): memory then holds again exactly what storage kept, so no later write
        builds on a change that was never saved. Costs one boot (snapshot + journal replay).
        """
        if self.store is None or self.name is None:
            raise ValidationError("no palace is open: open or create one")
        name, writable = self.name, self.holds_lock
        try:
            self.store = PalaceStore(self.root.space(name), self._maker(name), self.registry,
                                     self.clock, read_only=not writable)
        except BaseException:
            # Closed rather than left holding what storage lost.
            self.store, self.name = None, None
            if writable:
                self.root.unlock(name)
            raise
        return {"palace": name, "status": self.store.status.to_dict()}

    def _maker(self, name: str) -> Callable[..., Palace]:
        def make(**kw: Any) -> Palace:
            return self.make_palace(name=name, **kw) if "name" not in kw else \
                self.make_palace(**kw)

        return make

    @property
    def writable(self) -> bool:
        """Return whether a palace is open here and may be written: this library holds its
        writer lock and its files are not damaged."""
        return self.store is not None and not self.store.status.read_only

    @property
    def holds_lock(self) -> bool:
        """Return whether a palace is open here with its writer lock (also when it is
        read-only because its files are damaged: the lock stays, for its repair)."""
        return self.store is not None and self.store.writer

    def _switch(self, name: str, space: Space, writable: bool) -> dict[str, Any]:
        """Boot ``name`` from ``space`` (writable when its lock was just taken), make it the
        open palace, release the previous palace's lock, and return the new status. If boot
        raises, the previous palace stays open and the new lock is given back."""
        held_before = self.holds_lock
        try:
            store = PalaceStore(space, self._maker(name), self.registry, self.clock,
                                read_only=not writable)
        except BaseException:
            if writable:
                self.root.unlock(name)
            raise
        if self.name is not None and self.name != name and held_before:
            self.root.unlock(self.name)
        self.store, self.name = store, name
        return {"palace": name, "status": store.status.to_dict()}

    def check_palace(self) -> dict[str, Any]:
        """Return {"palace", "backend", "check"}: every file of the open palace read and
        verified (:meth:`PalaceStore.check`); nothing is changed."""
        store = self._open_store()
        return {"palace": self.name, "backend": self.root.kind, "check": store.check()}

    def repair_palace(self) -> dict[str, Any]:
        """Repair the open palace's damaged files (:meth:`PalaceStore.repair`) and return
        {"palace", "repair"}. Refused (ReadOnly) when another tab or process holds it."""
        store = self._open_store()
        return {"palace": self.name, "repair": store.repair()}

    def _open_store(self) -> PalaceStore:
        if self.store is None:
            raise ValidationError("no palace is open: open or create one")
        return self.store

    def storage_status(self) -> dict[str, Any]:
        """Return {"palace", "backend", "status"}: the open palace's storage status."""
        store = self.store
        return {"palace": self.name, "backend": self.root.kind,
                "status": None if store is None else store.status.to_dict()}

    def delete_palace(self, name: str, confirm: str) -> dict[str, Any]:
        """Delete ``name`` and all its files; ``confirm`` must repeat the name. Returns
        {"deleted": name}. Refused (ReadOnly) while another writer holds the palace: its
        files would vanish under it. Deleting the open palace closes it and releases its
        lock, so a palace of the same name can be created next."""
        if confirm != name:
            raise ValidationError("to delete a palace, confirm must repeat its name exactly")
        if name not in self.root.palaces():
            raise ValidationError(f"no palace named {name!r}")
        if not (self.name == name and self.writable) and not self.root.lock(name):
            raise ReadOnly(f"palace {name!r} is open for writing elsewhere (another tab or "
                           "process); close it there first. Nothing was deleted")
        if self.name == name:
            self.store, self.name = None, None
        self.root.unlock(name)
        self.root.remove(name)
        return {"deleted": name}


PALACE_NAME_ARG = {"type": "string", "minLength": 1, "maxLength": 64}


def library_registry() -> Registry:
    """Return the library's operations, run on a :class:`Library` instead of a palace: they
    change which palace is open (hosts answer them before the palace's registry)."""
    reg = Registry()
    name = {"name": PALACE_NAME_ARG}
    reg.add(Operation("list_palaces", "The palaces kept here and the one that is open.",
                      obj({}), lambda lib, a: lib.list_palaces()))
    reg.add(Operation("storage_status", "Where the open palace is kept and what boot found.",
                      obj({}), lambda lib, a: lib.storage_status()))
    reg.add(Operation("check_palace", "Read every file of the open palace and verify it "
                      "(checksums, journal records, tip, signing keys); changes nothing.",
                      obj({}), lambda lib, a: lib.check_palace()))
    reg.add(Operation("repair_palace", "Repair the open palace's damaged files: keep "
                      "everything that still verifies, move damaged files aside, set aside "
                      "records that no longer apply, and write it again.",
                      obj({}), lambda lib, a: lib.repair_palace(), mutates=True))
    reg.add(Operation("new_palace", "Create an empty palace and open it.",
                      obj(name, ("name",)), lambda lib, a: lib.new_palace(a["name"]),
                      mutates=True))
    reg.add(Operation("open_palace", "Open another palace (read-only if it is open elsewhere).",
                      obj(name, ("name",)), lambda lib, a: lib.open_palace(a["name"]),
                      mutates=True))
    reg.add(Operation("delete_palace", "Delete a palace; confirm repeats its name.",
                      obj({**name, "confirm": PALACE_NAME_ARG}, ("name", "confirm")),
                      lambda lib, a: lib.delete_palace(a["name"], a["confirm"]),
                      mutates=True))
    return reg


LIBRARY_REGISTRY = library_registry()
