"""JSON Schema checks for MCP tools: is an announced input schema usable, are call arguments valid.

Uses `jsonschema` (a declared dependency), imported only once tools arrive.
"""

from __future__ import annotations

import functools
import json
from typing import Any

MAX_ERROR_CHARS = 300
"""An argument error quotes the offending value; a huge one is cut."""


def valid_schema(schema: Any) -> bool:
    """Whether an announced input schema is one a model API will accept.

    An object schema that is itself valid JSON Schema: model APIs reject a whole
    request over one bad tool, so a bad one must never be offered.
    """
    if not isinstance(schema, dict) or schema.get("type", "object") != "object":
        return False
    try:
        return _schema_ok(_key(schema))
    except (TypeError, ValueError):
        return False


def argument_error(schema: dict[str, Any], arguments: dict[str, Any]) -> str | None:
    """Why `arguments` do not match the tool's input schema, or None if they do."""
    try:
        validator = _validator(_key(schema))
    except (TypeError, ValueError):
        return None  # an unserialisable schema was never offered; let the server judge
    error = next(iter(validator.iter_errors(arguments)), None)
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path)
    text = f"{error.message} (at '{where}')" if where else error.message
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def _key(schema: dict[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True)


@functools.lru_cache(maxsize=4096)
def _schema_ok(schema_json: str) -> bool:
    # Cached by text: servers re-announce the same schemas on every re-list.
    return _meta_validator().is_valid(json.loads(schema_json))


@functools.lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Any:
    import jsonschema

    return jsonschema.Draft7Validator(json.loads(schema_json))


@functools.cache
def _meta_validator() -> Any:
    # Draft 7's meta-schema: what model APIs check against, and ~5x faster to apply than
    # 2020-12's (2 000 tools: 0.3 s, not 1.4 s). Later keywords pass as unknown ones.
    import jsonschema

    return jsonschema.Draft7Validator(jsonschema.Draft7Validator.META_SCHEMA)
