"""The RPC endpoint hosts put in front of the registry.

The browser worker receives ``{"id", "name", "args"}`` requests from the page and answers
``{"id", "ok": true, "result"}`` or ``{"id", "ok": false, "error": {...}}``. The bridge is
plain Python (no ``js`` import) so the same code is tested under CPython.
"""

from __future__ import annotations

import json
import traceback
from typing import Any

from palazzo.core import jsontext
from palazzo.errors import PalazzoError, ValidationError
from palazzo.ops import Registry, default_registry
from palazzo.palace import Palace
from palazzo.persist.library import LIBRARY_REGISTRY


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
        # Host services the interface may use, e.g. "open_palace": an async function of a
        # palace name that loads its files first (the browser reads them asynchronously).
        self.hooks: dict[str, Any] = {}

    @property
    def palace(self) -> Palace:
        """Return the open palace (the library's, when there is one)."""
        if self.library is not None:
            if self.library.store is None:
                raise ValidationError("no palace is open: open or create one")
            return self.library.store.palace
        return self._palace

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one operation and return its result; errors propagate as exceptions.

        With a library, mutating operations are journaled (acknowledged once written) and the
        library operations (list_palaces, new_palace, open_palace, delete_palace,
        storage_status) are answered here.
        """
        result = self._call(name, args)
        if self.on_change is not None and self.mutates(name):
            self.on_change()
        return result

    def mutates(self, name: str) -> bool:
        """Return whether operation ``name`` may change what is kept (UnknownOperation for a
        name no registry has)."""
        if self.library is not None and name in LIBRARY_REGISTRY.names():
            return LIBRARY_REGISTRY.get(name).mutates
        return self.registry.get(name).mutates

    def _call(self, name: str, args: dict[str, Any] | None) -> dict[str, Any]:
        if self.library is None:
            return self.registry.call(self._palace, name, args)
        if name in LIBRARY_REGISTRY.names():
            return LIBRARY_REGISTRY.call(self.library, name, args)
        if self.library.store is None:
            raise ValidationError("no palace is open: open or create one")
        return self.library.store.call(name, args)

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
