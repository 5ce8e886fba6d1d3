"""A small JSON Schema checker for operation arguments.

Operations publish a JSON Schema (MCP lists them to assistants); this module checks arguments
against the subset palazzo's schemas use, so the engine needs no third-party validator in
Pyodide. Supported keywords: type, properties, required, additionalProperties (false),
items, enum, minimum, maximum, minLength, maxLength, default (ignored here).
"""

from __future__ import annotations

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


def _is_type(value: Any, name: str) -> bool:
    # bool is an int in Python but never a JSON number.
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[name])


def validate(value: Any, schema: dict[str, Any], where: str = "arguments") -> None:
    """Raise :class:`ValidationError` naming the first place ``value`` breaks ``schema``.

    Returns None when the value fits. Cost is linear in the size of ``value``.
    """
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(value, n) for n in names):
            raise ValidationError(
                f"{where} must be {' or '.join(names)}, got {type(value).__name__}"
            )
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        raise ValidationError(f"{where} must be one of {allowed}, got {value!r}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            raise ValidationError(f"{where} must have at least {schema['minLength']} characters")
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise ValidationError(f"{where} must have at most {schema['maxLength']} characters")
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            raise ValidationError(f"{where} must be at least {schema['minimum']}, got {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ValidationError(f"{where} must be at most {schema['maximum']}, got {value}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise ValidationError(f"{where} is missing required field {key!r}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                raise ValidationError(f"{where} has unknown field(s): {', '.join(extra)}")
        for key, sub in props.items():
            if key in value:
                validate(value[key], sub, f"{where}.{key}")
    if isinstance(value, list | tuple) and "items" in schema:
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{where}[{i}]")
