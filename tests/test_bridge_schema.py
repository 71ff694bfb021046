"""Only tools whose input schema a model API accepts are offered."""

from __future__ import annotations

from launcher.bridge.schemas import ArgumentChecker, valid_schema


def test_object_schemas_that_are_valid_json_schema_pass() -> None:
    assert valid_schema({"type": "object"})
    assert valid_schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert valid_schema({"properties": {"q": {"type": "string"}}, "required": ["q"]})


def test_non_object_or_invalid_schemas_are_rejected() -> None:
    assert not valid_schema({"type": "array"})
    assert not valid_schema("object")
    assert not valid_schema({"type": "object", "properties": {"value": {"type": 42}}})
    assert not valid_schema({"type": "object", "required": "q"})


def test_arguments_are_checked_against_the_input_schema_with_a_clear_reason() -> None:
    schema = {
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "text": {"type": "string"}},
        "required": ["seconds"],
    }

    assert ArgumentChecker(schema).error({"seconds": 1.5}) is None
    assert ArgumentChecker(schema).error({}) == "'seconds' is a required property"
    assert ArgumentChecker(schema).error({"seconds": "abc"}) == (
        "'abc' is not of type 'number' (at 'seconds')"
    )
    assert ArgumentChecker({"type": "object"}).error({"anything": [1, 2]}) is None
