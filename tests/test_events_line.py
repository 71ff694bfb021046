"""A tool call's two events write their JSON line directly, the same text as the encoder's."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import pytest

from launcher.events import Event, ToolCallEvent, ToolResultEvent


def encoder_line(event: Event) -> str:
    """What every other event's line is: its dict through json.dumps."""
    return json.dumps(event.to_dict(), ensure_ascii=False, default=str)


ODD_VALUES: list[Any] = [
    None,
    True,
    0,
    -7,
    2**70,
    1.5,
    math.nan,
    math.inf,
    'é \u2028 " \\ \n \x00 😀',
    "",
    {"nested": [1, 2.25, None, False, {"k": "v"}], "": "empty key"},
    [1, "two"],
    ("a", "tuple"),
    b"bytes",  # not JSON: the encoder's default (str)
]


@pytest.mark.parametrize("value", ODD_VALUES, ids=repr)
def test_tool_call_line_is_the_encoders_for_any_value(value: Any) -> None:
    for field in ("ts", "turn", "id", "name", "arguments", "server", "tool"):
        fields: dict[str, Any] = {"turn": 1, "id": "c1", "name": "s__t", "arguments": {}}
        fields[field] = value
        event = ToolCallEvent(**fields)
        assert event.to_json() == encoder_line(event), field


@pytest.mark.parametrize("value", ODD_VALUES, ids=repr)
def test_tool_result_line_is_the_encoders_for_any_value(value: Any) -> None:
    for field in ("ts", "turn", "id", "name", "is_error", "content", "server", "tool"):
        fields: dict[str, Any] = {
            "turn": 1,
            "id": "c1",
            "name": "s__t",
            "is_error": False,
            "content": "ok",
            "server": "s",
            "tool": "t",
        }
        fields[field] = value
        event = ToolResultEvent(**fields)
        assert event.to_json() == encoder_line(event), field


def test_the_call_events_lines_are_written_without_their_dict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Every call writes both: the line is made from the fields, not by walking a dict.
    call = ToolCallEvent(turn=3, id="c", name="s__t", arguments={"a": 1}, server="s", tool="t")
    result = ToolResultEvent(turn=3, id="c", name="s__t", is_error=True, content="no")
    expected = [encoder_line(call), encoder_line(result)]

    def walked(self: Event) -> dict[str, Any]:
        raise AssertionError("the event's dict was built for its line")

    monkeypatch.setattr(Event, "to_dict", walked)
    assert [call.to_json(), result.to_json()] == expected


@dataclass(kw_only=True)
class LongerCall(ToolCallEvent):
    """A subclass with a field of its own: its line is the encoder's, with that field."""

    extra: str = "more"


def test_a_subclass_line_keeps_its_own_fields() -> None:
    event = LongerCall(turn=1, id="c", name="n")
    assert json.loads(event.to_json())["extra"] == "more"
    assert event.to_json() == encoder_line(event)
