"""The published events schema is the one the event classes make, and it is a valid schema."""

from __future__ import annotations

import dataclasses
import typing
from pathlib import Path

import jsonschema
import pytest

from launcher import events
from launcher.events_schema import event_classes, render, schema

PUBLISHED = Path(__file__).resolve().parents[1] / "docs" / "events.schema.json"


def test_the_published_file_is_what_the_classes_make() -> None:
    assert PUBLISHED.read_text() == render(), (
        "the event classes changed: run `python -m launcher.events_schema > "
        "docs/events.schema.json` (and raise events.SCHEMA_VERSION if a field was removed, "
        "renamed or retyped)"
    )


def test_it_is_a_valid_2020_12_schema_with_one_definition_per_event_type() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    names = [cls.type for cls in event_classes()]
    assert len(names) == len(set(names))
    assert {"session_start", "tool_call", "agent_end", "worktree", "hook"} <= set(names)
    assert set(schema()["$defs"]) == {*names, "run_result"}


@pytest.mark.parametrize("cls", event_classes(), ids=lambda c: c.type)
def test_an_event_with_its_defaults_validates_and_a_wrong_type_does_not(
    cls: type[events.Event],
) -> None:
    samples = {str: "x", int: 1, bool: False, events.RunStatus: events.RunStatus.COMPLETED}
    hints = typing.get_type_hints(cls)
    fields = {
        f.name: samples.get(hints[f.name], "x")
        for f in dataclasses.fields(cls)
        if f.name != "ts"
        and f.default is dataclasses.MISSING
        and f.default_factory is dataclasses.MISSING
    }
    line = cls(**fields).to_dict()
    validator = jsonschema.Draft202012Validator(schema())
    validator.validate(line)
    assert not validator.is_valid({**line, "ts": "yesterday"})
    assert not validator.is_valid({k: v for k, v in line.items() if k != "type"})


def test_every_session_start_carries_the_schema_version() -> None:
    start = events.SessionStart(agent="a", session_id="s").to_dict()
    assert start["schema_version"] == events.SCHEMA_VERSION
    assert schema()["$id"].endswith(f"v{events.SCHEMA_VERSION}")


def test_the_manual_names_every_event_type() -> None:
    page = (PUBLISHED.parent / "events.md").read_text()
    missing = [cls.type for cls in event_classes() if f"`{cls.type}`" not in page]
    assert not missing, f"docs/events.md does not describe {missing}"
