"""A small JSON Schema checker for operation arguments.

Operations publish a JSON Schema (MCP lists them to assistants); this module checks arguments
against the subset palazzo's schemas use, so the engine needs no third-party validator in
Pyodide. Supported keywords: type, properties, required, additionalProperties (false),
items, enum, minimum, maximum, minLength, maxLength, title (the field's name in messages),
default (ignored here).

A failure is a :class:`ValidationError` whose message is a sentence a person can act on
("Cycles must be at least 1, not 0.") and whose ``field`` is the argument's path ("cycles",
"bundle.token", "tags[1]"), so a form can show the sentence next to the field.
"""

from __future__ import annotations

import re
from typing import Any

from palazzo.errors import ValidationError

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list, tuple),
    "string": (str,),
    "boolean": (bool,),
    "integer": (int,),
    "number": (int, float),
    "null": (type(None),),
}
# What each JSON type is called in a sentence.
_KINDS = {"object": "an object", "array": "a list", "string": "text",
          "boolean": "true or false", "integer": "a whole number", "number": "a number",
          "null": "nothing"}
_ITEM = re.compile(r"^(.*)\[(\d+)\]$")


def _is_type(value: Any, name: str) -> bool:
    # bool is an int in Python but never a JSON number.
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def label(field: str) -> str:
    """Return the words a person reads for the argument path ``field``: "valid_from" is
    "valid from", "bundle.token" is "token in bundle", "tags[1]" is "item 2 of tags".
    Cost: O(len(field))."""
    item = _ITEM.match(field)
    if item:
        return f"item {int(item.group(2)) + 1} of {label(item.group(1))}"
    parent, _, key = field.rpartition(".")
    words = key.replace("_", " ")
    return f"{words} in {label(parent)}" if parent else words


def sentence(text: str) -> str:
    """Return ``text`` with its first letter in upper case (the rest unchanged)."""
    return text[:1].upper() + text[1:]


def _shown(value: Any) -> str:
    """Return how a wrong value is named in a message: short scalars as JSON, else a kind."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if value is None:
        return "nothing"
    for name in ("string", "array", "object"):
        if _is_type(value, name):
            return _KINDS[name]
    return type(value).__name__


def validate(value: Any, schema: dict[str, Any], where: str = "arguments",
             path: str = "") -> None:
    """Raise :class:`ValidationError` with a sentence about the first place ``value`` breaks
    ``schema``, its ``field`` set to that place's path (None for ``value`` itself).

    ``where`` names the whole value ("add_drawer arguments") in messages about it; ``path``
    is the place inside it (the recursion's own argument). Returns None when the value fits.
    Cost is linear in the size of ``value``.
    """
    field = path or None
    name = sentence(schema.get("title") or label(path)) if path else where

    def fail(text: str) -> None:
        raise ValidationError(text, field=field)

    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, n) for n in names):
            kinds = " or ".join(_KINDS[n] for n in names)
            if value is None:
                fail(f"{name} is empty: it must be {kinds}.")
            fail(f"{name} must be {kinds}, not {_shown(value)}.")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        fail(f"{name} must be one of {allowed}, not {value!r}.")
    if isinstance(value, str):
        least, most = schema.get("minLength", 0), schema.get("maxLength")
        if not value and least:
            fail(f"{name} is empty: it needs at least {least} "
                 f"character{'s' if least > 1 else ''}.")
        if len(value) < least:
            fail(f"{name} is too short: {len(value)} characters, it needs at least {least}.")
        if most is not None and len(value) > most:
            fail(f"{name} is too long: {len(value)} characters, at most {most} are allowed.")
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            fail(f"{name} must be at least {schema['minimum']}, not {value}.")
        if "maximum" in schema and value > schema["maximum"]:
            fail(f"{name} must be at most {schema['maximum']}, not {value}.")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                sub = f"{path}.{key}" if path else key
                title = props.get(key, {}).get("title") or label(sub)
                raise ValidationError(f"{sentence(title)} is missing: it is required.",
                                      field=sub)
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                takes = ", ".join(props) if props else "none"
                fail(f"Unknown field(s) for {name}: {', '.join(extra)} (it takes: {takes}).")
        for key, sub in props.items():
            if key in value:
                validate(value[key], sub, where, f"{path}.{key}" if path else key)
    if isinstance(value, list | tuple) and "items" in schema:
        for i, item in enumerate(value):
            validate(item, schema["items"], where, f"{path}[{i}]")
