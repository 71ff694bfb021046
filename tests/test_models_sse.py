"""SSE parsing: event blocks, multi-line data, comments, a missing final blank line."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from launcher.errors import ModelError
from launcher.models.sse import SseEvent, decode_object, iter_sse

pytestmark = pytest.mark.anyio


async def lines(*items: str) -> AsyncIterator[str]:
    for item in items:
        yield item


async def parse(*items: str) -> list[SseEvent]:
    return [event async for event in iter_sse(lines(*items))]


async def test_named_events_and_default_name() -> None:
    assert await parse("event: ping", "data: {}", "", "data: x", "") == [
        SseEvent("ping", "{}"),
        SseEvent("message", "x"),
    ]


async def test_multi_line_data_is_joined_with_newlines() -> None:
    assert await parse("data: a", "data: b", "") == [SseEvent("message", "a\nb")]


async def test_comments_and_unknown_fields_are_ignored() -> None:
    assert await parse(": keep-alive", "id: 7", "retry: 10", "data:x", "") == [
        SseEvent("message", "x")
    ]


async def test_blank_blocks_without_data_dispatch_nothing() -> None:
    assert await parse("", "event: lonely", "", "") == []


async def test_last_event_without_blank_line_is_still_delivered() -> None:
    assert await parse("data: [DONE]") == [SseEvent("message", "[DONE]")]


async def test_crlf_line_endings_are_stripped() -> None:
    assert await parse("event: e\r\n", "data: d\r\n", "\r\n") == [SseEvent("e", "d")]


def test_decode_object_accepts_only_a_json_object() -> None:
    assert decode_object("openai", '{"a": 1}', "stream chunk") == {"a": 1}
    with pytest.raises(ModelError, match=r"openai: stream chunk is not JSON: \{broken"):
        decode_object("openai", "{broken", "stream chunk")
    with pytest.raises(ModelError, match=r"anthropic: input of tool call 'x' is not a JSON object"):
        decode_object("anthropic", "[1, 2]", "input of tool call 'x'")
