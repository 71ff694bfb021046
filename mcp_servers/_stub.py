"""Serve a live ToolTable over stdio in both MCP protocol eras, with list_changed in each.

Era facts (mcp 2.3.0): the low-level `Server.run` serves whichever era the client's
first request opens. Handshake era: change notifications go out on the session captured
from `notifications/initialized`. 2026-07-28 era: they are dropped on the connection and
reach only clients with an open `subscriptions/listen` stream, fed from our bus.

"Initialized" (the zero of every schedule) is `notifications/initialized` in the
handshake era and the client's first request (usually `server/discover`) in 2026-07-28.
"Notifiable" is when a change notice can reach the client: initialized in the handshake
era, the first open listen stream in 2026-07-28 (the bus does not replay earlier events).
"Listed" is when the stub has answered its first complete tools/list (the last page).
"""

from __future__ import annotations

import fcntl
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ServerEvent,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from mcp_servers._common import CallLog
from mcp_servers._table import BadCursorError, ToolRpcError, ToolTable

Background = Callable[["StubServer"], Awaitable[None]]


class _LockedStdout:
    """Protocol stdout shared by the SDK writer and raw-line injection; lines never tear."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._lock = anyio.Lock()

    async def write(self, text: str) -> int:
        async with self._lock:
            return await anyio.to_thread.run_sync(self._raw.write, text.encode())

    async def flush(self) -> None:
        async with self._lock:
            await anyio.to_thread.run_sync(self._raw.flush)


def _claim_stdout() -> _LockedStdout:
    """Keep a private copy of fd 1 for the protocol and point fd 1 at stderr for strays."""
    private = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(2, 1)
    return _LockedStdout(os.fdopen(private, "wb"))


class _WatchedBus(InMemorySubscriptionBus):
    """A subscription bus that sets an event once a listener (a listen stream) joins."""

    def __init__(self, joined: anyio.Event) -> None:
        super().__init__()
        self._joined = joined

    def subscribe(self, listener: Callable[[ServerEvent], None]) -> Callable[[], None]:
        unsubscribe = super().subscribe(listener)
        self._joined.set()
        return unsubscribe


class StubServer:
    """One stub MCP server: a ToolTable served over stdio, notifying changes in both eras."""

    def __init__(
        self,
        name: str,
        table: ToolTable,
        *,
        call_log: CallLog,
        page_size: int = 0,
        instructions: str | None = None,
    ) -> None:
        self.table = table
        self._call_log = call_log
        self._page_size = page_size
        self._initialized = anyio.Event()
        self._notifiable = anyio.Event()
        self._listed = anyio.Event()
        self._bus = _WatchedBus(self._notifiable)
        self._legacy_session: ServerSession | None = None
        self._stdout: _LockedStdout | None = None
        self._server: Server[Any] = Server(
            name,
            version="0.1.0",
            instructions=instructions,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        self._server.add_notification_handler(
            "notifications/initialized", types.NotificationParams, self._on_initialized
        )
        self._server.middleware.append(self._watch_modern_start)
        self._server.middleware.append(self._patch_wire_schemas)

    async def wait_initialized(self) -> None:
        """Return once the client has initialized (see module docstring for each era)."""
        await self._initialized.wait()

    async def wait_notifiable(self) -> None:
        """Return once a change notice can reach the client (see module docstring)."""
        await self._notifiable.wait()

    async def wait_listed(self) -> None:
        """Return once the client was answered a complete tools/list (its last page)."""
        await self._listed.wait()

    async def tools_changed(self) -> None:
        """Announce a tool list change to the client, whichever era it speaks."""
        if self._legacy_session is not None:
            await self._legacy_session.send_tool_list_changed()
        # Without a listen stream open this is a no-op, as the 2026-07-28 spec wants.
        await self._bus.publish(ToolsListChanged())

    async def write_raw_line(self, line: str) -> None:
        """Write one raw line to the protocol stdout (for junk-output tests)."""
        await self.write_raw(line + "\n")

    async def write_raw(self, text: str) -> None:
        """Write raw text, newline or not, to the protocol stdout (for framing tests)."""
        assert self._stdout is not None, "write_raw needs a running server"
        await self._stdout.write(text)
        await self._stdout.flush()

    async def serve(self, background: Background | None = None) -> None:
        """Serve stdio until stdin closes; `background(self)` runs alongside, then is cancelled."""
        self._stdout = _claim_stdout()
        options = self._server.create_initialization_options(
            NotificationOptions(tools_changed=True)
        )
        # The SDK types stdout as AsyncFile[str]; it only ever calls write() and flush().
        async with stdio_server(stdout=self._stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
            async with anyio.create_task_group() as tg:
                if background is not None:
                    tg.start_soon(background, self)
                await self._server.run(read_stream, write_stream, options)
                tg.cancel_scope.cancel()

    async def _on_initialized(
        self, ctx: ServerRequestContext[Any], params: types.NotificationParams
    ) -> None:
        # This session's standalone channel stays usable after the handler returns.
        self._legacy_session = ctx.session
        self._initialized.set()
        self._notifiable.set()

    async def _watch_modern_start(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if ctx.request_id is not None and ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            self._initialized.set()
        return await call_next(ctx)

    async def _patch_wire_schemas(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        # Middleware sees the already validated wire dict, so this is the one place a
        # schema the SDK would refuse to send can still reach the client.
        if ctx.method == "tools/list" and isinstance(result, dict):
            for tool in result.get("tools", []):
                spec = self.table.get(tool.get("name", ""))
                if spec is not None and spec.wire_input_schema is not None:
                    tool["inputSchema"] = spec.wire_input_schema
            if not result.get("nextCursor"):
                # The answer is built: a change from now on is only in a later listing.
                self._listed.set()
        return result

    async def _list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        cursor = params.cursor if params is not None else None
        try:
            specs, next_cursor = self.table.page(cursor, self._page_size)
        except BadCursorError as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from exc
        tools = [
            types.Tool(name=s.name, description=s.description, input_schema=s.input_schema)
            for s in specs
        ]
        return types.ListToolsResult(tools=tools, next_cursor=next_cursor)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        self._call_log.record(params.name, arguments, dict(ctx.meta or {}))
        spec = self.table.get(params.name)
        if spec is None:
            return _text_result(f"Unknown tool: {params.name}", is_error=True)
        try:
            output = await spec.handler(arguments)
        except ToolRpcError as exc:
            raise MCPError(exc.code, exc.message) from exc
        return _text_result(output.text, structured=output.structured, is_error=output.is_error)


def _text_result(
    text: str, *, structured: dict[str, Any] | None = None, is_error: bool = False
) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=is_error,
    )


def run(server: StubServer, background: Background | None = None) -> None:
    """Run `server` until stdin closes; logs go to stderr, never stdout."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    anyio.run(server.serve, background)
