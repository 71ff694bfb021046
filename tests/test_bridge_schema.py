"""Only tools whose input schema a model API accepts are offered."""

from __future__ import annotations

from launcher.bridge.connection import valid_schema


def test_object_schemas_that_are_valid_json_schema_pass() -> None:
    assert valid_schema({"type": "object"})
    assert valid_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert valid_schema({"properties": {"q": {"type": "string"}}, "required": ["q"]})


def test_non_object_or_invalid_schemas_are_rejected() -> None:
    assert not valid_schema({"type": "array"})
    assert not valid_schema("object")
    assert not valid_schema({"type": "object", "properties": {"value": {"type": 42}}})
    assert not valid_schema({"type": "object", "required": "q"})
