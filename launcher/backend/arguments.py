"""A host's tool arguments checked against the tool's own input schema, before anything runs.

Covers the schema vocabulary serve's tools use (object, string, integer, boolean, array of
strings, minimum, exclusiveMinimum, maximum, enum, required, additionalProperties): a value
of the wrong type is an error naming the argument, never coerced (a string where a list is
expected is not split into characters). A `null` for an optional argument reads as leaving
it out. Numbers must be finite: JSON parsers take a bare NaN or 1e400, which compare like
no number.
"""

from __future__ import annotations

import math
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
    "number": (int, float),
}
_NAMES = {"string": "a string", "integer": "an integer", "boolean": "true or false"}
_NAMES.update(array="a list", object="an object", number="a number")


class ArgumentError(ValueError):
    """An argument does not fit the tool's input schema (the message names it)."""


def _describe(value: Any) -> str:
    """The JSON type of `value`, never the value itself (it may be long, or a secret)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    for name, kinds in _TYPES.items():
        if isinstance(value, kinds):
            return _NAMES[name]
    return type(value).__name__


def _fits(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False  # JSON true is no number, whatever Python thinks
    return isinstance(value, _TYPES.get(kind, (object,)))


def _check(name: str, value: Any, schema: dict[str, Any]) -> None:
    kind = schema.get("type")
    if kind and not _fits(value, kind):
        hint = ' (e.g. ["name"])' if kind == "array" and isinstance(value, str) else ""
        wanted = _NAMES.get(kind, kind)
        raise ArgumentError(f"`{name}` must be {wanted}{hint}, got {_describe(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ArgumentError(f"`{name}` must be a finite number, got {value}")
    minimum = schema.get("minimum")
    if minimum is not None and value < minimum:
        raise ArgumentError(f"`{name}` must be at least {minimum}, got {value}")
    above = schema.get("exclusiveMinimum")
    if above is not None and not value > above:
        raise ArgumentError(f"`{name}` must be greater than {above}, got {value}")
    maximum = schema.get("maximum")
    if maximum is not None and value > maximum:
        raise ArgumentError(f"`{name}` must be at most {maximum}, got {value}")
    if "enum" in schema and value not in schema["enum"]:
        raise ArgumentError(f"`{name}` must be one of {', '.join(map(str, schema['enum']))}")
    if kind == "array" and "items" in schema:
        for index, item in enumerate(value):
            _check(f"{name}[{index}]", item, schema["items"])


def check_arguments(tool: str, schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """`args` if they fit `schema`, with null optionals dropped; else ArgumentError."""
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ArgumentError(f"{tool} takes an object of arguments, got {_describe(args)}")
    properties: dict[str, Any] = schema.get("properties", {})
    required = set(schema.get("required", ()))
    out = {k: v for k, v in args.items() if v is not None or k in required}
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(out) - set(properties))
        if unknown:
            known = ", ".join(properties) or "none"
            raise ArgumentError(f"unknown argument `{unknown[0]}` (expected: {known})")
    missing = sorted(required - set(out))
    if missing:
        raise ArgumentError(f"missing required argument `{missing[0]}`")
    for name, value in out.items():
        if name in properties:
            _check(name, value, properties[name])
    return out
