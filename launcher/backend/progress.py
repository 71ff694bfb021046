"""Progress of a foreground sub-agent, for hosts that reset their timeout on progress.

A host that sends a `progressToken` with `spawn_subagent` gets `notifications/progress`
at each turn start and each tool call ("turn 2: mcp-github__list_issues"), read from the
worker's event stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

PROGRESS_BUFFER = 64
"""Progress lines queued for sending; past this a slow host misses some (never blocks a run)."""
PROGRESS_DRAIN_S = 2.0
"""After the run ends, how long the last queued lines get to go out before the result."""


def progress_message(event: dict[str, Any]) -> str | None:
    """The progress line for one worker event, or None for events that are not milestones."""
    kind = event.get("type")
    if kind == "turn_start":
        return f"turn {event.get('turn')}"
    if kind == "tool_call":
        return f"turn {event.get('turn')}: {event.get('name')}"
    return None


class ProgressRelay:
    """Turns a run's events into progress notifications through `send(progress, message)`."""

    def __init__(self, send: Callable[[float, str], Any]) -> None:
        self._send = send
        self._tx, self._rx = anyio.create_memory_object_stream[str](PROGRESS_BUFFER)
        self.sent = 0
        self.finished = anyio.Event()

    def close(self) -> None:
        """No more lines: forward() returns once the queue is sent."""
        self._tx.close()

    def watch(self, event: dict[str, Any]) -> None:
        """An event watcher (synchronous, never blocks): queue the event's progress line."""
        message = progress_message(event)
        if message is not None:
            try:
                self._tx.send_nowait(message)
            except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
                pass

    async def forward(self) -> None:
        """Send queued lines until cancelled; progress counts up from 1."""
        try:
            async with self._rx:
                async for message in self._rx:
                    self.sent += 1
                    try:
                        await self._send(float(self.sent), message)
                    except Exception:  # a host that went away must not end the run
                        return
        finally:
            self.finished.set()
