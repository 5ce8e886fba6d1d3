"""A small JSON Schema checker for operation arguments.

Operations publish a JSON Schema (MCP lists them to assistants); this module checks arguments
against the subset palazzo's schemas use, so the engine needs no third-party validator in
Pyodide. Supported keywords: type, properties, required, additionalProperties (false),
items, minItems, maxItems, enum, minimum, maximum, minLength, maxLength, title (the field's
name in messages); default and description are notes for readers, not checked
(:data:`KEYWORDS`). A schema using any other keyword would be silently not enforced, so
``tests/palazzo/ops/test_registry_limits.py`` holds every operation's schema to this list.

Before the schema, the whole value is held to what every palace and every host can carry
(:func:`plain`), wherever it sits, even inside an object the schema leaves open: nesting at
most :data:`palazzo.core.jsontext.MAX_DEPTH` deep, finite numbers (no NaN, no infinity) within
a double's range, text that is Unicode (no lone surrogate, which no UTF-8 file or pipe takes).
A value passing the checker can be journaled, printed and sent to the browser.

A failure is a :class:`ValidationError` whose message is a sentence a person can act on
("Cycles must be at least 1, not 0.") and whose ``field`` is the argument's path ("cycles",
"bundle.token", "tags[1]"), so a form can show the sentence next to the field.
"""

from __future__ import annotations

import math
import re
import reprlib
import sys
from typing import Any

from palazzo.core.jsontext import MAX_DEPTH
from palazzo.errors import ValidationError

QUOTED = 80  # characters of a person's text quoted back in a message
_LISTED = 10  # unknown field names listed in a message
_SHORT = reprlib.Repr()
_SHORT.maxstring = _SHORT.maxother = QUOTED
_SHORT.maxlong = 40
KEYWORDS = frozenset({"type", "properties", "required", "additionalProperties", "items",
                      "minItems", "maxItems", "enum", "minimum", "maximum", "minLength",
                      "maxLength", "title", "default", "description"})
_MAX_DOUBLE = sys.float_info.max
# No surrogate code point in a str can be written as UTF-8 (the JSON reader joins a pair).
_SURROGATE = re.compile("[\ud800-\udfff]")

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


def quote(value: Any, limit: int = QUOTED) -> str:
    """Return how a value a person gave is quoted back in a message: as a Python literal, text
    cut to its first ``limit`` characters and its length when longer (a 6 MB argument is not
    echoed whole), lone surrogates escaped; lists and objects shortened as :mod:`reprlib`
    does. Cost: O(limit), whatever the size of ``value``."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        return f"{value[:limit]!r}… ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return _shown(value)
    return _SHORT.repr(value)


def _shown(value: Any) -> str:
    """Return how a wrong value is named in a message: short scalars as JSON, else a kind."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"  # str() of 5,000 digits raises
    if isinstance(value, int | float):
        return repr(value)
    if value is None:
        return "nothing"
    for name in ("string", "array", "object"):
        if _is_type(value, name):
            return _KINDS[name]
    return type(value).__name__


def _step(key: str) -> str:
    """Return the path step a person reads for the key ``key`` of an object the schema leaves
    open (a key comes from the caller: cut and escaped as :func:`quote` does)."""
    if len(key) <= QUOTED and (key.isascii() or not _SURROGATE.search(key)):
        return key
    return quote(key)


def plain(value: Any, where: str = "arguments", own: tuple[str, ...] = ()) -> None:
    """Raise :class:`ValidationError` naming the first place in ``value`` that no palace or
    host can carry, its ``field`` set to that place's path; return None when there is none.

    Refused anywhere in ``value``: nesting deeper than :data:`MAX_DEPTH`, a number that is
    NaN or infinite, an integer beyond a double's range (the engine turns numbers into floats,
    which would overflow), text or a key holding a lone surrogate (not Unicode: no file,
    pipe or journal can be written with it), a key that is not text. ``where`` names
    ``value`` in messages; the members of ``value`` named in ``own`` are left out (their
    reader checks them itself, as the palace file reader does a document).

    Cost: O(size of ``value``), without recursion (a value nested 5,000 deep is refused,
    not a RecursionError): about 0.1 µs a value, nothing more for ASCII text, a UTF-8
    encoding for other text; a path is only spelled out for the error.
    """
    if not isinstance(value, dict | list | tuple):
        _scalar(value, None, where)
        return
    # A place is (the place of the container, key or index) or None for ``value`` itself.
    todo: list[tuple[Any, Any, int]] = [(value, None, 0)]
    while todo:
        box, place, level = todo.pop()
        if level >= MAX_DEPTH:
            raise ValidationError(f"{where} nest deeper than {MAX_DEPTH} levels.",
                                  field=_path(place))
        if isinstance(box, dict):
            pairs: Any = box.items()
            for key in box:
                if not isinstance(key, str):
                    raise ValidationError(f"{_name(place, where)} has a field name that is not "
                                          f"text: {quote(key)}.", field=_path(place))
                if not key.isascii() and not _is_text(key):
                    raise ValidationError(f"A field name in {_name(place, where)} holds a lone "
                                          "surrogate: it is not Unicode text.",
                                          field=_path(place))
        else:
            pairs = enumerate(box)
        for key, item in pairs:
            if isinstance(item, dict | list | tuple):
                if not (own and place is None and key in own):
                    todo.append((item, (place, key), level + 1))
            elif not (isinstance(item, str) and item.isascii()):
                _scalar(item, (place, key), where)


def _scalar(item: Any, place: Any, where: str) -> None:
    """Raise the :func:`plain` error for the scalar ``item`` at ``place``, if it has one."""
    if isinstance(item, str):
        if not item.isascii() and not _is_text(item):
            raise ValidationError(f"{_name(place, where)} holds a lone surrogate (an unpaired "
                                  "\\ud800-\\udfff character): it is not Unicode text.",
                                  field=_path(place))
    elif isinstance(item, float):
        if not math.isfinite(item):
            raise ValidationError(f"{_name(place, where)} must be a finite number, not "
                                  f"{item!r}.", field=_path(place))
    elif isinstance(item, int) and not isinstance(item, bool) and abs(item) > _MAX_DOUBLE:
        raise ValidationError(f"{_name(place, where)} is beyond the range of a number: "
                              f"{_shown(item)}.", field=_path(place))


def _is_text(text: str) -> bool:
    """Return whether ``text`` is Unicode (no lone surrogate). Cost: one UTF-8 encoding, which
    is faster in CPython than a pattern search for the surrogates."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path(place: Any) -> str | None:
    """Return the ``field`` path of a :func:`plain` place ("calls[1].args.name")."""
    steps = []
    while place is not None:
        place, key = place
        steps.append(key)
    path = ""
    for key in reversed(steps):  # an index is an int, a key is text (checked before)
        if isinstance(key, int):
            path += f"[{key}]"
        else:
            path += f".{_step(key)}" if path else _step(key)
    return path or None


def _name(place: Any, where: str) -> str:
    """Return the words naming a :func:`plain` place in a message; the items of a list given
    whole are named after it ("item 2 of the conversation")."""
    path = _path(place)
    if path is None:
        return where
    return sentence(label(where + path if path[:1] == "[" else path))


def validate(value: Any, schema: dict[str, Any], where: str = "arguments",
             own: tuple[str, ...] = ()) -> None:
    """Raise :class:`ValidationError` with a sentence about the first place ``value`` breaks
    ``schema`` or cannot be carried (:func:`plain`), its ``field`` set to that place's path
    (None for ``value`` itself); return None when the value fits.

    ``where`` names the whole value ("add_drawer arguments") in messages about it; ``own``
    names members :func:`plain` leaves out. Cost is linear in the size of ``value``.
    """
    plain(value, where, own)
    _check(value, schema, where, "")


def _check(value: Any, schema: dict[str, Any], where: str, path: str) -> None:
    """Raise :class:`ValidationError` about the first place ``value`` (at ``path`` inside
    the whole value) breaks ``schema``. The recursion follows the schema, not the value, so
    it is as deep as the schema is."""
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
        fail(f"{name} must be one of {allowed}, not {quote(value)}.")
    if isinstance(value, str):
        least, most = schema.get("minLength", 0), schema.get("maxLength")
        if not value and least:
            fail(f"{name} is empty: it needs at least {least} "
                 f"character{'s' if least > 1 else ''}.")
        if len(value) < least:
            fail(f"{name} is too short: {len(value)} characters, it needs at least {least}.")
        if most is not None and len(value) > most:
            fail(f"{name} is too long: {len(value):,} characters, at most {most:,} are "
                 "allowed.")
    if _is_type(value, "number"):
        if "minimum" in schema and value < schema["minimum"]:
            fail(f"{name} must be at least {schema['minimum']}, not {_shown(value)}.")
        if "maximum" in schema and value > schema["maximum"]:
            fail(f"{name} must be at most {schema['maximum']}, not {_shown(value)}.")
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
                named = ", ".join(_step(k) for k in extra[:_LISTED])
                more = f" and {len(extra) - _LISTED:,} more" if len(extra) > _LISTED else ""
                takes = ", ".join(props) if props else "none"
                fail(f"Unknown field(s) for {name}: {named}{more} (it takes: {takes}).")
        for key, sub in props.items():
            if key in value:
                _check(value[key], sub, where, f"{path}.{key}" if path else key)
    if isinstance(value, list | tuple):
        least, most = schema.get("minItems", 0), schema.get("maxItems")
        if len(value) < least:
            fail(f"{name} is empty: it needs at least {least} item{'s' if least > 1 else ''}."
                 if not value else
                 f"{name} has too few items: {len(value)}, it needs at least {least}.")
        if most is not None and len(value) > most:
            fail(f"{name} has too many items: {len(value):,}, at most {most:,} are allowed.")
        if "items" in schema:
            for i, item in enumerate(value):
                _check(item, schema["items"], where, f"{path}[{i}]")
