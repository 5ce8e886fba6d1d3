"""The HTTP API's OpenAPI 3.1 document, generated from the operations registry.

Each operation is ``POST /api/ops/{name}``: its request body is the operation's JSON Schema
(OpenAPI 3.1 schemas are JSON Schema 2020-12, so the registry's schemas are used as they
are), its 200 answer the operation's JSON result, and every failure the one error shape
(:data:`ERROR`). The server makes it from the registry it runs whenever it is asked, so it
cannot drift from the operations (tests/hosts/test_server.py checks it against every one);
``python -m palazzo.hosts.server.openapi FILE`` writes it to a file.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from palazzo._version import __version__
from palazzo.ops import REGISTRY, Registry

# What every failure answers: the PalazzoError's stable code, its class and its sentence.
ERROR = {"type": "object", "required": ["error"], "properties": {"error": {
    "type": "object", "required": ["code", "message"],
    "properties": {"code": {"type": "string"}, "type": {"type": "string"},
                   "message": {"type": "string"}, "field": {"type": "string"}}}}}
# HTTP status of each failure (the body's code says which).
STATUSES = {"400": "invalid arguments (nothing was changed)",
            "404": "no such operation, drawer, wing, room, entity …",
            "409": "the palace cannot be written now (damaged, or another process held it "
                   "for longer than the server waits)",
            "413": "the request body is larger than the server reads",
            "500": "a failure inside palazzo (nothing acknowledged was lost)",
            "504": "the call took longer than the server waits for it (a write may still "
                   "finish: read before writing again)"}


def document(registry: Registry = REGISTRY) -> dict[str, Any]:
    """Return the OpenAPI 3.1 document of every operation of ``registry``. Cost: one pass
    over the registry."""
    error = {"description": "an error", "content": {"application/json": {
        "schema": {"$ref": "#/components/schemas/Error"}}}}
    paths: dict[str, Any] = {}
    for name in registry.names():
        op = registry.get(name)
        paths[f"/api/ops/{name}"] = {"post": {
            "operationId": name,
            "summary": op.summary,
            "tags": ["writes" if op.mutates else "reads"],
            "requestBody": {"required": False, "content": {"application/json": {
                "schema": op.schema}}},
            "responses": {"200": {"description": "the operation's result", "content": {
                "application/json": {"schema": {"type": "object"}}}},
                **{code: {**error, "description": why} for code, why in STATUSES.items()}}}}
    return {"openapi": "3.1.0",
            "info": {"title": "palazzo", "version": __version__,
                     "description": "A memory palace for AI agents: every operation of the "
                                    "registry over HTTP (palazzo serve)."},
            "paths": paths,
            "components": {"schemas": {"Error": ERROR}}}


def text(registry: Registry = REGISTRY) -> str:
    """Return :func:`document` as JSON text (what ``__main__`` writes)."""
    return json.dumps(document(registry), indent=1, ensure_ascii=False, sort_keys=True) + "\n"


if __name__ == "__main__":
    Path(sys.argv[1]).write_text(text(), encoding="utf-8")
