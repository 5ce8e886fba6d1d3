"""The RPC endpoint hosts put in front of the engine session, and the typed hooks a host
plugs into it.

The browser worker receives ``{"id", "name", "args"}`` requests from the page and answers
``{"id", "ok": true, "result"}`` or ``{"id", "ok": false, "error": {...}}``. The Panel
interface calls :meth:`Bridge.call` directly. Either way a call passes two layers: the bridge
looks the operation up once and hands it to the session (the open palace's store, which
journals it) or runs it on a bare palace. The bridge is plain Python (no ``js`` import) so
the same code is tested under CPython.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from palazzo.core import jsontext
from palazzo.embed import Embedder
from palazzo.errors import PalazzoError, ValidationError
from palazzo.ops import Registry, default_registry
from palazzo.palace import Palace
from palazzo.persist.library import LIBRARY_REGISTRY

Result = dict[str, Any]


@dataclass(slots=True)
class Hooks:
    """What hosts plug into a bridge; each stays None until a host sets it.

    The worker sets the services of the browser (embedder, persist, library_call,
    indexing, prepare_texts), the Panel interface how the worker reaches the views
    (refresh_ui, refresh_status, packages_ready, lock_free, exported).
    """

    # The embedder palaces opened from now on get (MiniLM, once the page sent its weights).
    embedder: Embedder | None = None
    # Wait until every change so far is durably written; raises StorageError when one failed.
    persist: Callable[[], Awaitable[None]] | None = None
    # Run a library operation (open, new, delete palace) where the palace locks are held.
    library_call: Callable[[str, dict[str, Any]], Awaitable[Result]] | None = None
    # Redraw the views after a change made elsewhere (the page's RPC, a reload).
    refresh_ui: Callable[[], None] | None = None
    # Redraw the status line (background embedding progress).
    refresh_status: Callable[[], None] | None = None
    # The deferred packages (NetworkX) have loaded: what needed them can be shown.
    packages_ready: Callable[[], None] | None = None
    # Load packages some operations import and the host loads only when first needed
    # (SciPy for the atlas in the browser); an operation's ``packages`` name them. Set by
    # the worker; None where every package is there (CPython).
    load_packages: Callable[[list[str]], Awaitable[None]] | None = None
    # The writer of the read-only palace of this name has gone: offer to take over.
    lock_free: Callable[[str], None] | None = None
    # Background embedding's rate and time left in words ("12.5 drawers/s, about 4 min
    # left"), or None when nothing is being embedded.
    indexing: Callable[[], str | None] | None = None
    # Have the vectors of these texts (a search's query) computed before a call needs them:
    # the browser's embedding worker runs apart from the engine. Set by the worker.
    prepare_texts: Callable[[list[str]], Awaitable[None]] | None = None
    # The page has saved the palace file the worker streamed to it (name, bytes, or the error
    # that stopped it): the interface says so. Set by the interface.
    exported: Callable[[str, int, str | None], None] | None = None


class Bridge:
    """Holds the open palace (bare, or persisted through a library) and answers requests."""

    __slots__ = ("_palace", "library", "registry", "on_change", "hooks")

    def __init__(self, palace: Palace | None = None, registry: Registry | None = None,
                 library: Any = None) -> None:
        self._palace = palace if palace is not None or library is not None else Palace()
        self.library = library
        self.registry = registry if registry is not None else default_registry()
        # Set by a host: called after every call that may have changed something (the
        # browser worker then writes the changes to storage).
        self.on_change: Any = None
        self.hooks = Hooks()

    @property
    def palace(self) -> Palace:
        """Return the open palace (the library's, when there is one)."""
        if self.library is not None:
            if self.library.store is None:
                raise ValidationError("no palace is open: open or create one")
            return self.library.store.palace
        return self._palace

    def call(self, name: str, args: dict[str, Any] | None = None) -> Result:
        """Run one operation and return its result; errors propagate as exceptions.

        With a library, mutating operations are journaled (acknowledged once written) and the
        library operations (list_palaces, new_palace, open_palace, delete_palace,
        storage_status) are answered here. The operation is looked up once (UnknownOperation
        for a name no registry has) and its arguments checked before anything runs.
        """
        args = {} if args is None else args
        if self.library is None:
            op = self.registry.check(name, args)
            result = op.run(self._palace, args)
        elif name in LIBRARY_REGISTRY.names():
            op = LIBRARY_REGISTRY.check(name, args)
            result = op.run(self.library, args)
        else:
            store = self.library.store
            if store is None:
                raise ValidationError("no palace is open: open or create one")
            op = store.registry.check(name, args)
            result = store.run(op, args)
        if op.mutates and self.on_change is not None:
            self.on_change()
        return result

    def mutates(self, name: str) -> bool:
        """Return whether operation ``name`` may change what is kept (UnknownOperation for a
        name no registry has)."""
        if self.library is not None and name in LIBRARY_REGISTRY.names():
            return LIBRARY_REGISTRY.get(name).mutates
        return self.registry.get(name).mutates

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        """Answer one request dict with a reply dict; never raises.

        Palazzo errors keep their code and message; anything else is reported as
        ``internal_error`` with the traceback so a bug is visible rather than swallowed.
        """
        rid = request.get("id") if isinstance(request, dict) else None
        try:
            if not isinstance(request, dict) or not isinstance(request.get("name"), str):
                raise PalazzoError("a request needs a string 'name' and an optional 'args'")
            result = self.call(request["name"], request.get("args"))
            return {"id": rid, "ok": True, "result": result}
        except PalazzoError as err:
            return {"id": rid, "ok": False, "error": err.to_dict()}
        except Exception as err:  # noqa: BLE001 - reported, not hidden
            return {
                "id": rid,
                "ok": False,
                "error": {
                    "code": "internal_error",
                    "type": type(err).__name__,
                    "message": str(err),
                    "traceback": traceback.format_exc(),
                },
            }

    def handle_json(self, request_json: str) -> str:
        """Answer a JSON request string with a JSON reply string (the worker's wire form)."""
        try:
            request = jsontext.loads(request_json, what="the request", error=PalazzoError)
        except PalazzoError as err:
            return json.dumps({"id": None, "ok": False, "error": err.to_dict()})
        return json.dumps(self.handle(request))
