"""What a sub-agent asks its host: input requests held until the host answers, or not.

A sub-agent's MCP server may ask for input (`elicitation/create`). The worker sends the
request up its pipe (protocol.ask); serve holds it here, keyed by the worker's own id,
while a way to ask the host exists: a foreground call that can elicit (2025-11-25) or
answer `input_required` (2026-07-28), or a task the host polls. With no way to ask, the
request is answered at once with None, and the worker falls back to what it does on its
own (bridge/elicitation.py). A request nobody answers within INPUT_WAIT_S gets None too.
SDK-free: the requests and answers are their wire JSON.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.abc

INPUT_WAIT_S = 600.0
"""How long a held request waits for the host: the SDK's sealed `requestState` lives as
long (600 s), so a 2026-07-28 host's retry after that could not be matched anyway."""

Reply = Callable[[str, dict[str, Any] | None], Awaitable[None]]
"""Sends one answer down to the worker (None: the worker decides without the host)."""


@dataclass
class HostInputs:
    """The input requests of one sub-agent that wait for its host."""

    can_ask: bool = False
    """Whether some way to ask the host exists for this sub-agent (set by who started it)."""
    pending: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Request id -> the request (`{"method", "params"}`), in arrival order."""
    changed: anyio.Event = field(default_factory=anyio.Event)
    """Set (and replaced) whenever a request is added or answered."""
    _reply: Reply | None = None
    _asked: set[str] = field(default_factory=set)
    """Ids a legacy host was already sent (each request goes to it once)."""

    def bind(self, reply: Reply) -> None:
        """Where answers go: the worker's pipe (set by the driver once the worker runs)."""
        self._reply = reply

    async def offer(
        self, request_id: str, request: dict[str, Any], tg: anyio.abc.TaskGroup
    ) -> None:
        """A request from the worker: held for the host, or answered None at once."""
        if not self.can_ask:
            await self._send(request_id, None)
            return
        self.pending[request_id] = request
        self._touch()
        tg.start_soon(self._expire, request_id)

    async def answer(self, request_id: str, result: dict[str, Any] | None) -> bool:
        """The host's answer to `request_id`; False when it is not (or no longer) pending."""
        if self.pending.pop(request_id, None) is None:
            return False
        self._asked.discard(request_id)
        self._touch()
        await self._send(request_id, result)
        return True

    def unasked(self) -> dict[str, dict[str, Any]]:
        """Pending requests not yet sent to a host that is asked one request at a time;
        each is marked sent."""
        fresh = {k: v for k, v in self.pending.items() if k not in self._asked}
        self._asked.update(fresh)
        return fresh

    async def release(self) -> None:
        """The host cannot answer any more (the run ended, serve drains): answer None."""
        for request_id in list(self.pending):
            await self.answer(request_id, None)

    async def _expire(self, request_id: str) -> None:
        await anyio.sleep(INPUT_WAIT_S)
        await self.answer(request_id, None)

    async def _send(self, request_id: str, result: dict[str, Any] | None) -> None:
        if self._reply is not None:
            await self._reply(request_id, result)

    def _touch(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


async def first_of(*events: anyio.Event) -> None:
    """Return once any of `events` is set."""
    async with anyio.create_task_group() as tg:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            tg.cancel_scope.cancel()

        for event in events:
            tg.start_soon(wait, event)
