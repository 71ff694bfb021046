"""Coalescing of re-list requests: a burst of notifications costs one re-list at a time."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio


class Coalescer:
    """Runs an action on request; requests made while it runs coalesce into one more run.

    The last request always wins: one that arrives during a run is never lost, and the
    run it causes starts after the request, so it sees the state the request announced.
    """

    def __init__(self) -> None:
        self._wake = anyio.Event()
        self.runs = 0

    @property
    def pending(self) -> bool:
        """Whether a run has been requested and not yet started."""
        return self._wake.is_set()

    def request(self) -> None:
        """Ask for a run; returns at once."""
        self._wake.set()

    async def serve(self, action: Callable[[], Awaitable[None]]) -> None:
        """Run `action` once per coalesced batch of requests, forever (cancel to stop)."""
        while True:
            await self._wake.wait()
            # A fresh event before the run: requests during the run schedule exactly one more.
            self._wake = anyio.Event()
            self.runs += 1
            await action()
