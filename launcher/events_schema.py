"""The event stream's JSON Schema (`events.jsonl`, `--json`, serve's run result), made from
the event classes themselves, so the published file and the code cannot drift apart.

`python -m launcher.events_schema` prints it; docs/events.schema.json is that output, held
equal to it by a test.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Sequence
from typing import Any

from launcher import events
from launcher.events import SCHEMA_VERSION, Event, RunStatus

SCHEMA_ID = f"urn:subagent:events:v{SCHEMA_VERSION}"
"""A name, not an address: the file lives in the repository and the manual."""
RUN_RESULT: dict[str, Any] = {
    "description": "serve's structured content for a run: spawn_subagent (foreground), "
    "get_subagent_result, stop_subagent, a task's result",
    "type": "object",
    "properties": {
        "agent_id": {"type": "string"},
        "status": {"enum": [s.value for s in RunStatus]},
        "result": {"type": "string"},
        # Counts, `cost_usd` (null: unpriced) and `total` (the same keys, children included).
        "usage": {"type": "object", "additionalProperties": {"type": ["number", "null", "object"]}},
        "turns": {"type": "integer"},
        "session_id": {"type": ["string", "null"]},
        "error": {"type": "string"},
        "worktree": {"type": "object"},
    },
    "required": ["agent_id", "status", "result", "usage", "turns", "session_id"],
}
"""Kept by hand (the pool that makes it lives above this leaf); a serve test validates real
answers against it, every key included."""


def event_classes() -> list[type[Event]]:
    """Every concrete event type, in the order events.py declares them (a module's names
    keep their definition order)."""
    return [
        obj
        for obj in vars(events).values()
        if isinstance(obj, type) and issubclass(obj, Event) and obj is not Event
    ]


def _schema_of(hint: Any) -> dict[str, Any]:
    """The JSON Schema of one field's type hint."""
    if hint is Any:
        return {}
    origin = typing.get_origin(hint)
    if origin in (types.UnionType, typing.Union):
        members = [_schema_of(arg) for arg in typing.get_args(hint)]
        simple = [m["type"] for m in members if set(m) == {"type"} and isinstance(m["type"], str)]
        if len(simple) == len(members):
            return {"type": simple}
        return {"anyOf": members}
    if origin in (list, tuple, Sequence) or (isinstance(hint, type) and issubclass(hint, tuple)):
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        return {"type": "array", "items": _schema_of(args[0]) if args else {"type": "string"}}
    if origin is dict:
        _, value = typing.get_args(hint)
        return {
            "type": "object",
            **({} if value is Any else {"additionalProperties": _schema_of(value)}),
        }
    if hint is type(None):
        return {"type": "null"}
    if isinstance(hint, type) and issubclass(hint, RunStatus):
        return {"enum": [s.value for s in hint]}
    for python, json_type in (
        (bool, "boolean"),
        (int, "integer"),
        (float, "number"),
        (str, "string"),
    ):
        if hint is python:
            return {"type": json_type}
    raise TypeError(f"no JSON Schema for the event field type {hint!r}")


def event_schema(cls: type[Event]) -> dict[str, Any]:
    """One event type's schema: `type` is its wire name; every field it writes, typed."""
    hints = typing.get_type_hints(cls)
    properties: dict[str, Any] = {"type": {"const": cls.type}, "ts": {"type": "number"}}
    for f in dataclasses.fields(cls):
        if f.name != "ts":
            properties[f.name] = _schema_of(hints[f.name])
    # An event is written with every field (Event.to_dict), defaults included.
    required = list(properties)
    # dataclass() writes a signature as the docstring of a class that has none.
    doc = "" if cls.__doc__ is None or cls.__doc__.startswith(cls.__name__ + "(") else cls.__doc__
    described = {"description": " ".join(doc.strip().split("\n\n")[0].split())} if doc else {}
    return {**described, "type": "object", "properties": properties, "required": required}


def schema() -> dict[str, Any]:
    """The whole schema: one line of the stream is exactly one of the event types."""
    defs = {cls.type: event_schema(cls) for cls in event_classes()}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        "title": f"subagent events, schema version {SCHEMA_VERSION}",
        "description": "One object per line of events.jsonl and of `spawn --json`. Fields may "
        "be added within a version: read what you know, ignore the rest.",
        "oneOf": [{"$ref": f"#/$defs/{name}"} for name in defs],
        "$defs": {**defs, "run_result": RUN_RESULT},
    }


def render() -> str:
    """The schema as the published file holds it."""
    return json.dumps(schema(), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    print(render(), end="")
