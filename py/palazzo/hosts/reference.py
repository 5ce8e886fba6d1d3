"""The operations reference, ``docs/operations.md``, written from the registry.

Run ``python -m palazzo.hosts.reference docs/operations.md`` to write it; a test compares the
file with :func:`markdown` so the page can never drift from the code. Operations are grouped
by the module that registers them, in the order :mod:`palazzo.ops` assembles them, then the
library's operations (many palaces), which the hosts answer. It lives with the hosts because
it reads both registries.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from palazzo.ops import MODULES, REGISTRY
from palazzo.persist.library import LIBRARY_REGISTRY


def markdown() -> str:
    """Return the whole reference page as Markdown. Cost: one pass over the operations."""
    lines = ["# Operations", "",
             "Every operation palazzo has, as the browser (`window.palazzo.call`), the command "
             "line, the MCP server (one tool each) and Python (`palazzo.call(palace, name, "
             "args)`) run it. Arguments are checked against the schema before anything runs; "
             "*writes* are journaled.", "",
             "Generated from the registry by `python -m palazzo.hosts.reference "
             "docs/operations.md`; a test fails when this page is stale.", ""]
    for module in MODULES:
        title = (module.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        lines += [f"## `{module.__name__.rpartition('.')[2]}`", "", title, ""]
        for op in module.operation.ops:
            lines += _operation(op.name, op.summary, op.schema, op.mutates)
    listed = {op.name for module in MODULES for op in module.operation.ops}
    lines += ["## `registry`", "", "Operations the registry itself runs, over the others.", ""]
    for name in REGISTRY.names():
        if name not in listed:
            op = REGISTRY.get(name)
            lines += _operation(op.name, op.summary, op.schema, op.mutates)
    lines += ["## `library`", "", "Many palaces in one place (the browser's storage, a "
              "directory): the hosts answer these beside the open palace's operations.", ""]
    for name in LIBRARY_REGISTRY.names():
        op = LIBRARY_REGISTRY.get(name)
        lines += _operation(op.name, op.summary, op.schema, op.mutates)
    return "\n".join(lines).rstrip() + "\n"


def _operation(name: str, summary: str, schema: dict[str, Any], mutates: bool) -> list[str]:
    out = [f"### `{name}`" + (" *(writes)*" if mutates else ""), "", summary, ""]
    props = schema.get("properties", {})
    if not props:
        return out + ["No arguments.", ""]
    required = set(schema.get("required", []))
    out += ["| argument | type | |", "|---|---|---|"]
    for arg, spec in props.items():
        need = "**required**" if arg in required else ""
        out.append(f"| `{arg}` | {_type(spec)} | {need} |")
    return out + [""]


def _type(spec: dict[str, Any]) -> str:
    """Return a short human form of a JSON Schema: type, bounds, choices."""
    if "enum" in spec:
        return " \\| ".join(f"`{v}`" for v in spec["enum"])
    kind = spec.get("type", "any")
    text = " or ".join(kind) if isinstance(kind, list) else kind
    if text == "array" and isinstance(spec.get("items"), dict):
        text = f"array of {_type(spec['items'])}"
    bounds = [f"{label} {spec[key]:,}" for key, label in
              (("minLength", "min length"), ("maxLength", "max length"), ("minimum", "≥"),
               ("maximum", "≤"), ("minItems", "min items"), ("maxItems", "max items"))
              if key in spec]
    return text + (f" ({', '.join(bounds)})" if bounds else "")


if __name__ == "__main__":
    Path(sys.argv[1] if len(sys.argv) > 1 else "docs/operations.md").write_text(
        markdown(), encoding="utf-8")
