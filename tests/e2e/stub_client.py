"""Drive the stub MCP servers with a plain SDK client, in either protocol era.

How each era delivers list_changed (mcp 2.3.0), which `ToolChanges` hides:
- legacy: `Client(..., mode="legacy", message_handler=fn)`; `fn` receives
  `mcp_types.ToolListChangedNotification`.
- modern: `Client(..., mode="auto")` negotiates 2026-07-28 with these stubs; then
  `client.listen(tools_list_changed=True)` yields `ToolsListChanged` events.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Literal

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.subscriptions import Subscription
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

Era = Literal["legacy", "modern"]
ERAS: tuple[Era, ...] = ("legacy", "modern")

# A stub pays ~0.6-1.6 s importing the SDK; a loaded 2-core CI box can triple that.
# Also the per-request read timeout, so no single request can hang a test.
STARTUP_TIMEOUT_S = 20.0


def stub_params(module: str, *args: str) -> StdioServerParameters:
    """Launch parameters for `python -m mcp_servers.MODULE ARGS`."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", f"mcp_servers.{module}", *args]
    )


class ToolChanges:
    """Counts list_changed notices, whichever way the era delivers them."""

    def __init__(self) -> None:
        self.seen = 0
        self.junk: list[Exception] = []
        self._changed = anyio.Event()
        self._subscription: Subscription | None = None

    def attach(self, subscription: Subscription) -> None:
        """Count events of this 2026-07-28 listen stream instead of session notices."""
        self._subscription = subscription

    async def on_message(self, message: types.ServerNotification | Exception) -> None:
        """The client's message handler: counts legacy notices, keeps transport junk."""
        if isinstance(message, Exception):
            self.junk.append(message)
        elif isinstance(message, types.ToolListChangedNotification):
            # Under a listen stream the SDK tees events here too; count them once.
            if self._subscription is None:
                self.seen += 1
        else:
            return
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_count(self, count: int) -> None:
        """Wait until at least `count` notices arrived; bound it with `anyio.fail_after`."""
        while self.seen < count:
            if self._subscription is not None:
                await self._subscription.__anext__()
                self.seen += 1
            else:
                await self._changed.wait()

    async def wait_junk(self) -> Exception:
        """Wait until the client reported an unparsable message; bound it with `fail_after`."""
        while not self.junk:
            await self._changed.wait()
        return self.junk[0]


@asynccontextmanager
async def connect_stub(
    module: str, *args: str, era: Era, errlog: Path
) -> AsyncIterator[tuple[Client, ToolChanges]]:
    """Start a stub, connect in `era`, and (modern) open the listen stream before any list."""
    changes = ToolChanges()
    mode = "legacy" if era == "legacy" else "auto"
    async with AsyncExitStack() as stack:
        log = stack.enter_context(errlog.open("a"))
        # The read timeout bounds the handshake and the listen ack: a fail_after around
        # entering these contexts would wrap their task groups and break cancel scopes.
        client = await stack.enter_async_context(
            Client(
                stdio_client(stub_params(module, *args), errlog=log),
                mode=mode,
                message_handler=changes.on_message,
                read_timeout_seconds=STARTUP_TIMEOUT_S,
            )
        )
        if era == "modern":
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
            changes.attach(await stack.enter_async_context(client.listen(tools_list_changed=True)))
        else:
            assert client.protocol_version not in MODERN_PROTOCOL_VERSIONS
        yield client, changes


async def list_pages(client: Client) -> list[list[str]]:
    """Every tools/list page's tool names, following cursors, bypassing the client cache."""
    pages: list[list[str]] = []
    cursor: str | None = None
    while True:
        result = await client.list_tools(cursor=cursor, cache_mode="refresh")
        pages.append([tool.name for tool in result.tools])
        cursor = result.next_cursor
        if cursor is None:
            return pages


async def list_names(client: Client) -> list[str]:
    """All tool names, in announcement order."""
    return [name for page in await list_pages(client) for name in page]


async def relist_until(
    client: Client, changes: ToolChanges, done: Callable[[list[str]], bool]
) -> list[str]:
    """Re-list after each change notice until `done(names)`; bound it with `fail_after`.

    Robust to notices the SDK coalesces (events are level triggers): every refetch
    happens after a notice, so the final state is always seen.
    """
    while True:
        seen = changes.seen
        names = await list_names(client)
        if done(names):
            return names
        await changes.wait_count(seen + 1)


def result_text(result: types.CallToolResult) -> str:
    """The concatenated text content of a tool result."""
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))
