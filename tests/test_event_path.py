"""A tool call's event path, made cheaper, says the same: the JSON line, the sinks an emit
reaches, and what the mask leaves or changes."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

import launcher.event_line as event_line
from launcher.event_mask import MaskedEvents
from launcher.events import (
    AgentEnd,
    AssistantMessage,
    Event,
    EventBus,
    RunStatus,
    TextDelta,
    ToolCallEvent,
    ToolResultEvent,
    jsonl_file_sink,
)
from launcher.secrets import MASK, LiveMask, SecretMask, forget_learned_secrets, note_secrets

KEY = "sk-live-0123456789abcdef"

SAMPLES: list[Event] = [
    ToolCallEvent(
        turn=3,
        id="c1",
        name="srv__tool",
        arguments={"text": 'é "quoted"\n\t\u2028', "n": [1, 2.5, None, True], "p": Path("/a/b")},
        server="srv",
        tool="tool",
    ),
    ToolResultEvent(turn=3, id="c1", name="srv__tool", is_error=False, content="ünïcode ✓"),
    AgentEnd(status=RunStatus.MAX_TURNS, result="r", usage={"cost_usd": float("nan")}),
    AssistantMessage(turn=1, text="", tool_calls=[{"id": "c", "arguments": {}}]),
]


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_an_event_line_is_json_dumps_of_its_dict(event: Event) -> None:
    plain = json.dumps(event.to_dict(), ensure_ascii=False, default=str)
    assert event.to_json() == plain


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.type)
def test_without_the_c_scanner_the_line_is_the_same(
    event: Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json.encoder, "c_make_encoder", None)
    encode = event_line._line_encoder()
    assert encode(event.to_dict()) == json.dumps(event.to_dict(), ensure_ascii=False, default=str)


def test_a_sink_subscribed_during_an_emit_gets_the_next_event_only() -> None:
    bus = EventBus()
    seen: dict[str, list[str]] = {"first": [], "late": []}

    async def late(event: Event) -> None:
        seen["late"].append(event.type)

    async def first(event: Event) -> None:
        seen["first"].append(event.type)
        if len(seen["first"]) == 1:
            bus.subscribe(late)

    bus.subscribe(first)

    async def main() -> None:
        await bus.emit(ToolResultEvent(turn=1, id="a", name="t", is_error=False, content="x"))
        await bus.emit(AgentEnd(status=RunStatus.COMPLETED))

    anyio.run(main)
    assert seen == {"first": ["tool_result", "agent_end"], "late": ["agent_end"]}


def test_a_tool_call_s_events_are_masked_in_every_string_and_left_whole_elsewhere() -> None:
    mask = SecretMask({KEY})
    call = ToolCallEvent(
        turn=7,
        id="c1",
        name="t",
        arguments={"token": KEY, "nested": {"list": [f"x{KEY}", 4, 1.5, False, None]}},
        server=f"s{KEY}",
    )
    masked = mask.event(call)
    assert masked is not call
    nested = {"list": [f"x{MASK}", 4, 1.5, False, None]}
    assert masked.arguments == {"token": MASK, "nested": nested}
    assert masked.server == f"s{MASK}"
    assert (masked.turn, masked.ts, masked.id, masked.name) == (7, call.ts, "c1", "t")
    clean = ToolCallEvent(turn=7, id="c1", name="t", arguments={"n": 1, "s": "plain"})
    assert mask.event(clean) is clean  # nothing to mask: the event itself, no copy


def test_a_str_subclass_is_masked_and_an_unchanged_one_kept() -> None:
    mask = SecretMask({KEY})
    end = AgentEnd(status=RunStatus.ERROR, error=f"failed: {KEY}")
    masked = mask.event(end)
    assert masked.status is RunStatus.ERROR
    assert masked.error == f"failed: {MASK}"


def test_the_mask_leaves_a_non_dataclass_as_it_is() -> None:
    thing: dict[str, Any] = {"text": KEY}
    assert SecretMask({KEY}).event(thing) is thing


def test_an_event_right_after_held_deltas_comes_after_their_release() -> None:
    masked = MaskedEvents(SecretMask({KEY}))
    assert masked(TextDelta(turn=1, text="see sk-live")) == []  # all held: may start a key
    out = masked(ToolCallEvent(turn=1, id="c", name="t", arguments={"k": KEY}))
    assert [type(e) for e in out] == [TextDelta, ToolCallEvent]
    assert out[0].text == "see sk-live"  # type: ignore[attr-defined]
    assert out[1].arguments == {"k": MASK}  # type: ignore[attr-defined]
    # Released: the next event comes alone.
    again = masked(ToolResultEvent(turn=1, id="c", name="t", is_error=False, content=KEY))
    assert [dataclasses.asdict(e)["content"] for e in again] == [MASK]


def test_a_live_mask_masks_a_token_learned_after_the_session_s_first_events(
    tmp_path: Path,
) -> None:
    forget_learned_secrets()
    token = "learned-token-0123456789"
    masked = MaskedEvents(LiveMask())
    sink = jsonl_file_sink(tmp_path / "events.jsonl")

    async def main() -> None:
        for event in masked(ToolResultEvent(turn=1, id="a", name="t", is_error=False, content="x")):
            await sink(event)
        note_secrets([token])
        later = ToolResultEvent(turn=2, id="b", name="t", is_error=False, content=token)
        for event in masked(later):
            await sink(event)

    try:
        anyio.run(main)
    finally:
        forget_learned_secrets()
    lines = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [line["content"] for line in lines] == ["x", MASK]


def test_an_event_s_dict_is_its_type_then_its_fields_in_order_and_nothing_else() -> None:
    call = ToolCallEvent(turn=1, id="c", name="t", arguments={"a": 1}, server="s", tool="x")
    names = ["type", *(f.name for f in dataclasses.fields(ToolCallEvent))]
    assert list(call.to_dict()) == names
    call.note = "not a field"  # type: ignore[attr-defined]
    assert list(call.to_dict()) == names
    assert "note" not in call.to_json()


ESCAPED = 'tok/9f3+a61 c2e7=b54d08&x"é\\n\u2028'
"""A secret whose JSON form differs from its raw one (quote, backslash, non-ASCII)."""


@pytest.mark.parametrize(
    "spot",
    ["key", "value", "list", "name", "content"],
)
def test_a_secret_anywhere_in_an_event_is_found_by_its_line_and_masked(spot: str) -> None:
    masked = MaskedEvents(SecretMask({ESCAPED}))
    arguments: dict[str, Any] = {"plain": "x"}
    name = "t"
    if spot == "key":
        arguments[f"k{ESCAPED}"] = 1
    elif spot == "value":
        arguments["v"] = {"deep": f"..{ESCAPED}.."}
    elif spot == "list":
        arguments["l"] = [1, None, [ESCAPED]]
    elif spot == "name":
        name = f"srv__{ESCAPED}"
    event: Event = ToolCallEvent(turn=1, id="c", name=name, arguments=arguments)
    if spot == "content":
        event = ToolResultEvent(turn=1, id="c", name="t", is_error=False, content=ESCAPED)
    (out,) = masked(event)
    assert out is not event
    line = out.to_json()
    assert ESCAPED not in line and json.dumps(ESCAPED)[1:-1] not in line
    assert MASK in line


def test_an_event_with_nothing_to_mask_goes_on_as_itself_with_its_line_made_once() -> None:
    masked = MaskedEvents(SecretMask({KEY}))
    event = ToolResultEvent(turn=1, id="c", name="t", is_error=False, content="clean")
    (out,) = masked(event)
    assert out is event
    assert out.to_json() is out.to_json()  # the sinks reuse the line the check made
    assert json.loads(out.to_json())["content"] == "clean"


@pytest.mark.parametrize("secrets", [1, 40], ids=["few forms", "many forms"])
def test_text_is_masked_alike_whether_forms_are_searched_one_by_one_or_by_pattern(
    secrets: int,
) -> None:
    values = [f"secret-{n:02d}-0123456789" for n in range(secrets)]
    mask = SecretMask(values)
    clean = "nothing to see " * 20
    assert mask.text(clean) is clean
    assert not mask.finds(clean)
    for value in (values[0], values[-1]):
        dirty = f"a {value} b {json.dumps(value)} c"
        assert mask.finds(dirty)
        assert mask.text(dirty) == f'a {MASK} b "{MASK}" c'


def test_a_sink_for_some_event_types_is_not_called_for_the_others() -> None:
    bus = EventBus()
    seen: list[tuple[str, str]] = []

    def sink(label: str) -> Callable[[Event], Awaitable[None]]:
        async def record(event: Event) -> None:
            seen.append((label, event.type))

        return record

    bus.subscribe(sink("all"))
    bus.subscribe(sink("text"), only=(TextDelta,))
    bus.subscribe(sink("end"), only=(AgentEnd, TextDelta))
    sent = [
        ToolCallEvent(turn=1, id="c", name="n"),
        TextDelta(turn=1, text="t"),
        AgentEnd(status=RunStatus.COMPLETED, result="r"),
    ]

    async def main() -> None:
        for event in sent:
            await bus.emit(event)
        bus.subscribe(sink("late"), only=(ToolCallEvent,))  # routes found again
        await bus.emit(sent[0])

    anyio.run(main)
    assert seen == [
        ("all", "tool_call"),
        ("all", "text_delta"),
        ("text", "text_delta"),
        ("end", "text_delta"),
        ("all", "agent_end"),
        ("end", "agent_end"),
        ("all", "tool_call"),
        ("late", "tool_call"),
    ]
