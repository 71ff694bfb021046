"""Following a server's tool list after the first listing: list_changed in both eras.

Handshake era: the connection's message handler calls `request()` on
`ToolListChangedNotification`. 2026-07-28 era: the SDK drops that notification, so
`listen` follows a listen stream (re-opened when it drops). Either way a burst of
changes costs one re-list at a time (`serve`), retried with backoff when it fails, so a
transient failure does not lose a late tool for the session.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import anyio
from anyio.abc import TaskStatus

from launcher.bridge.coalesce import Coalescer
from launcher.bridge.loader import load_sdk

if TYPE_CHECKING:
    from mcp import Client

RELIST_TIMEOUT_S = 60.0
"""A re-list attempt after list_changed that takes longer than this is abandoned."""
RELIST_ATTEMPTS = 4
"""Tries per re-list: a transient failure must not lose a late tool for the session."""
RELIST_BACKOFF_S = 0.5
"""Pause before the first retry of a failed re-list, doubled before each further one."""
LISTEN_REOPENS = 5
"""How often a dropped listen stream is re-opened; a server that keeps dropping it is broken."""
LISTEN_REOPEN_DELAY_S = 0.5
"""Pause before re-opening a dropped listen stream, so a flapping server is not hammered."""


class ListFollower:
    """Re-lists a server's tools whenever it says they changed, one re-list at a time.

    `relist(client)` lists every page and hands the tools on; `note(text)` writes to the
    server's log; `ended()` says the connection is closing or its server is gone.
    """

    def __init__(
        self,
        relist: Callable[[Client], Awaitable[None]],
        note: Callable[[str], None],
        ended: Callable[[], bool],
        *,
        backoff_s: float = RELIST_BACKOFF_S,
    ) -> None:
        self._relist = relist
        self._note = note
        self._ended = ended
        self.backoff_s = backoff_s
        self._relister = Coalescer()

    @property
    def pending(self) -> bool:
        """Whether a re-list was requested and has not started yet."""
        return self._relister.pending

    def request(self) -> None:
        """Schedule a re-list; a burst of requests coalesces into one re-list at a time."""
        self._relister.request()

    async def serve(self, client: Client) -> None:
        """Run the requested re-lists until cancelled."""
        await self._relister.serve(lambda: self.refresh(client))

    async def refresh(self, client: Client) -> None:
        """Re-list after list_changed, retrying with backoff; the old list stays meanwhile."""
        delay = self.backoff_s
        for attempt in range(1, RELIST_ATTEMPTS + 1):
            try:
                with anyio.fail_after(RELIST_TIMEOUT_S):
                    await self._relist(client)
                return
            except Exception as exc:
                failure = f"{type(exc).__name__}: {exc}"
                self._note(
                    f"re-list after list_changed failed ({attempt}/{RELIST_ATTEMPTS}): {failure}"
                )
            if attempt == RELIST_ATTEMPTS or self.pending:
                # Pending: a newer request re-lists anyway, with a fresh set of attempts.
                return
            await anyio.sleep(delay)
            delay *= 2

    async def listen(
        self, client: Client, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """2026-07-28 list_changed: follow the listen stream, re-opening it when it drops.

        Started (with `tg.start`) before the first listing: a change in between is not
        replayed.
        """
        sdk = await load_sdk()
        started = False
        for attempt in range(LISTEN_REOPENS + 1):
            if attempt:
                await anyio.sleep(LISTEN_REOPEN_DELAY_S)
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    if started:
                        # Nothing is replayed: whatever changed during the gap needs a re-list.
                        self.request()
                    else:
                        started = True
                        task_status.started()
                    async for event in subscription:
                        if isinstance(event, sdk.ToolsListChanged):
                            self.request()
                ended = "was closed by the server"
            except sdk.LISTEN_FAILURES as exc:
                if not started:
                    self._note(f"listen stream unavailable, late tools will not be seen: {exc}")
                    task_status.started()
                    return
                ended = f"could not be re-opened: {exc}"
            except sdk.LISTEN_LOSSES as exc:
                ended = f"was lost: {exc}"
            if self._ended():
                break
            self._note(f"listen stream {ended}")
        else:
            self._note(f"listen stream dropped {LISTEN_REOPENS} times; late tools will be missed")
        if not started:
            task_status.started()
