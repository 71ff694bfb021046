"""`subagent spawn` in a terminal: streamed text, a line per tool call, a usage line."""

from __future__ import annotations

import io

import pytest

from launcher.cli.render import SpawnRenderer
from launcher.events import AgentEnd, TextDelta, ToolCallEvent, ToolResultEvent, TurnStart


@pytest.mark.anyio
async def test_spawn_renderer_streams_text_and_summarises_calls_and_usage() -> None:
    out, err = io.StringIO(), io.StringIO()
    render = SpawnRenderer(out, err)
    events = [
        TurnStart(turn=1, tools=["gh__list"]),
        TextDelta(turn=1, text="Looking"),
        TextDelta(turn=1, text=" now."),
        ToolCallEvent(turn=1, id="c1", name="gh__list", arguments={}),
        ToolResultEvent(
            turn=1, id="c1", name="gh__list", is_error=False, content='[\n {"n": 1}\n]'
        ),
        ToolResultEvent(
            turn=1, id="c2", name="gh__nope", is_error=True, content="Tool not available"
        ),
        TurnStart(turn=2, tools=[]),
        TextDelta(turn=2, text="Done."),
        AgentEnd(
            status="completed",
            result="Done.",
            usage={
                "turns": 2,
                "tool_calls": 2,
                "input_tokens": 10,
                "output_tokens": 5,
                "duration_s": 1.25,
            },
        ),
    ]
    for event in events:
        await render(event)

    assert out.getvalue() == "Looking now.\nDone.\n"
    lines = err.getvalue().splitlines()
    assert lines[0] == "→ gh__list"
    assert lines[1] == '← gh__list: ok [ {"n": 1} ]'
    assert lines[2] == "← gh__nope: error Tool not available"
    assert lines[3] == "[completed] turns=2 tool_calls=2 tokens in=10 out=5 1.2s"
