"""Server-sent events: turn a stream of text lines into (event, data) pairs."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass


@dataclass(frozen=True)
class SseEvent:
    """One dispatched event: its `event:` name (default `message`) and joined `data:` lines."""

    event: str
    data: str


async def iter_sse(lines: AsyncIterable[str]) -> AsyncIterator[SseEvent]:
    """Yield one SseEvent per blank-line-terminated block, per the WHATWG SSE rules."""
    event = ""
    data: list[str] = []
    has_data = False
    async for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if has_data:
                yield SseEvent(event or "message", "\n".join(data))
            event, data, has_data = "", [], False
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            event = value
        elif name == "data":
            data.append(value)
            has_data = True
    # A server that closes without the final blank line still meant the last event.
    if has_data:
        yield SseEvent(event or "message", "\n".join(data))
