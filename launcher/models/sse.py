"""Server-sent events: turn a stream of text lines into (event, data) pairs, and decode them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

from launcher.errors import ModelError


def decode_object(provider: str, text: str, what: str) -> dict[str, Any]:
    """`text` as a JSON object; anything else is a ModelError naming `what` and the text."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ModelError(f"{provider}: {what} is not JSON: {text[:200]}") from exc
    if not isinstance(value, dict):
        raise ModelError(f"{provider}: {what} is not a JSON object: {text[:200]}")
    return value


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
