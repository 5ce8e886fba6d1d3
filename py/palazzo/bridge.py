"""The RPC endpoint hosts put in front of the registry.

The browser worker receives ``{"id", "name", "args"}`` requests from the page and answers
``{"id", "ok": true, "result"}`` or ``{"id", "ok": false, "error": {...}}``. The bridge is
plain Python (no ``js`` import) so the same code is tested under CPython.
"""

from __future__ import annotations

import json
import traceback
from typing import Any

from palazzo import jsontext
from palazzo.errors import PalazzoError
from palazzo.ops import Registry, default_registry
from palazzo.palace import Palace


class Bridge:
    """Holds the open palace and answers operation requests against it."""

    __slots__ = ("palace", "registry")

    def __init__(self, palace: Palace | None = None, registry: Registry | None = None) -> None:
        self.palace = palace if palace is not None else Palace()
        self.registry = registry if registry is not None else default_registry()

    def call(self, name: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run one operation and return its result; errors propagate as exceptions."""
        return self.registry.call(self.palace, name, args)

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
