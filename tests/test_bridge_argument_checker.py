"""Per-tool argument checkers are compiled once: flat object schemas take a plain-Python
fast path whose verdicts match jsonschema's, and errors still come from jsonschema."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from launcher.bridge.schemas import ArgumentChecker

SIMPLE: dict[str, Any] = {
    "type": "object",
    "$schema": "http://json-schema.org/draft-07/schema#",
    "properties": {
        "text": {"type": "string", "description": "what to echo"},
        "count": {"type": "integer", "title": "Count"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean", "default": False},
        "tags": {"type": "array"},
        "extra": {"type": "object"},
        "none": {"type": "null"},
        "free": {"description": "any value"},
    },
    "required": ["text"],
}
CLOSED: dict[str, Any] = {**SIMPLE, "additionalProperties": False}

ARGUMENTS: list[dict[str, Any]] = [
    {"text": "hi"},
    {},
    {"text": 1},
    {"text": "a", "count": 3},
    {"text": "a", "count": 3.0},
    {"text": "a", "count": 3.5},
    {"text": "a", "count": True},
    {"text": "a", "ratio": 1},
    {"text": "a", "ratio": False},
    {"text": "a", "flag": 0},
    {"text": "a", "tags": [1], "extra": {}, "none": None, "free": [1, {"x": 2}]},
    {"text": "a", "tags": {}, "none": 0},
    {"text": "a", "unknown": 1},
]


@pytest.mark.parametrize("schema", [SIMPLE, CLOSED], ids=["open", "closed"])
def test_fast_path_verdicts_match_jsonschema(schema: dict[str, Any]) -> None:
    checker = ArgumentChecker(schema)
    reference = jsonschema.Draft7Validator(schema)

    assert checker.fast is not None
    for arguments in ARGUMENTS:
        assert (checker.error(arguments) is None) == reference.is_valid(arguments), arguments


def test_errors_on_the_fast_path_are_jsonschema_messages() -> None:
    checker = ArgumentChecker(CLOSED)

    assert checker.error({"text": "a", "count": "x"}) == "'x' is not of type 'integer' (at 'count')"
    assert checker.error({"text": "a", "zzz": 1}) == (
        "Additional properties are not allowed ('zzz' was unexpected)"
    )


def test_schemas_outside_the_simple_subset_use_jsonschema_only() -> None:
    nested = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}
    union = {"type": "object", "properties": {"n": {"anyOf": [{"type": "string"}]}}}

    for schema in (nested, union):
        assert ArgumentChecker(schema).fast is None
    assert ArgumentChecker(nested).error({"n": 0}) == "0 is less than the minimum of 1 (at 'n')"
    assert ArgumentChecker(union).error({"n": "x"}) is None
