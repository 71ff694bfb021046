"""McpConnection: one MCP server's life, from connect to the last process gone.

One owner task (`run`) enters and leaves every SDK context; other tasks only call
`call()` and `close()`. Tools go out through `on_tools` as complete lists. This module
does not import the SDK: `run` spawns a stdio server first and then loads
`launcher.bridge.sdk`, so the SDK import overlaps the server's start-up.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
from anyio.abc import ByteReceiveStream

from launcher.auth.tokens import TokenStore
from launcher.bridge.follow import ListFollower
from launcher.bridge.listing import list_all_tools, to_defs
from launcher.bridge.loader import describe_startup_error, load_sdk
from launcher.bridge.phase import ServerPhase
from launcher.bridge.process import StdioChild
from launcher.bridge.seam import SdkModule
from launcher.bridge.serverlog import ServerLog
from launcher.bridge.transport import connect, spawn_stdio
from launcher.config.types import ServerSpec
from launcher.events import EventSink, ServerState
from launcher.procs.watchdog import Watchdog
from launcher.secrets import LiveMask, process_secrets
from launcher.state import private_dir
from launcher.toolset.types import ToolDef, ToolResult

EXIT_REAP_S = 0.5
"""After a server is lost, how long to wait for its exit status before reporting without it."""
STDERR_SETTLE_S = 0.5
"""Before a failure is reported, how long its stderr may take to reach EOF (a grandchild
holding the pipe would otherwise delay the report for ever)."""

ToolsSink = Callable[[list[ToolDef]], Awaitable[None]]

if TYPE_CHECKING:
    from mcp import Client


class McpConnection:
    """One MCP server: connect, list every page, follow list_changed, call, shut down."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        on_tools: ToolsSink,
        emit: EventSink,
        log_path: Path,
        workspace: Path,
        watchdog: Watchdog | None = None,
        auth_store: TokenStore | None = None,
    ) -> None:
        self.spec = spec
        self._auth_store = auth_store
        self._auth: Any = None  # the OAuth provider (auth.session.SessionAuth), if any
        self.state = ServerPhase.NOT_STARTED
        self.error: str | None = None
        self.tool_count = 0
        self.skipped_tools: list[str] = []
        self.protocol_version: str | None = None
        self.server_info: dict[str, str | None] | None = None
        self.ready = anyio.Event()
        self.done = anyio.Event()
        self.log_path = log_path
        self._mask = LiveMask(spec.secrets | process_secrets())
        self.log = ServerLog(log_path, self._mask)
        self._logs: anyio.abc.TaskGroup | None = None
        self._on_tools = on_tools
        self._emit = emit
        self._workspace = workspace
        self._watchdog = watchdog
        self._client: Client | None = None
        self._sdk: SdkModule | None = None
        self._closing = anyio.Event()
        self._life: anyio.CancelScope | None = None
        self._child = StdioChild()
        self.follow = ListFollower(
            self._relist,
            self.log.note,
            lambda: self._closing.is_set() or self._child.lost.is_set(),
        )

    @property
    def pid(self) -> int | None:
        """The stdio server's pid (its process group id), once spawned."""
        return self._child.pid

    def close(self) -> None:
        """Ask the owner task to end the connection; returns at once.

        A connection still starting is cut short: a stopped session must not wait out
        its servers' start-up timeouts.
        """
        self._closing.set()
        if self._life is not None and not self.ready.is_set():
            self._life.cancel()

    @property
    def lost(self) -> bool:
        """Whether the server went away (process exited or stdout closed) on its own."""
        return self._child.lost.is_set() and not self._closing.is_set()

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call one tool with the server's tool_timeout; every failure is an error result.

        Arguments were checked by the registry entry that runs this (ToolEntry.run).
        """
        client, sdk = self._client, self._sdk
        if client is None or sdk is None or self.state is not ServerPhase.CONNECTED or self.lost:
            return ToolResult(content=self._unavailable(), is_error=True)
        timeout = self.spec.tool_timeout
        try:
            result = await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except Exception as exc:
            login = self._auth_failure()
            if login is not None:
                # No usable token any more (refresh failed, token revoked): the server is
                # failed until `subagent login`; later calls get the same text at once,
                # and the owner task closes the HTTP client.
                # The state may have moved during the call (mypy keeps the narrowing across it).
                if cast(ServerPhase, self.state) is not ServerPhase.FAILED:
                    await self._fail(login)
                    self._closing.set()
                return ToolResult(content=self._unavailable(), is_error=True)
            if self._child.failure is not None:
                # The transport gave up on the server mid-call: its reason beats "closed".
                text = f"Server '{self.spec.name}' failed: {self._child.failure}"
                return ToolResult(content=self._redact(text), is_error=True)
            failed = sdk.from_exception(
                exc,
                server=self.spec.name,
                tool=tool,
                timeout=timeout,
                connection_lost=self._child.lost.is_set(),
            )
            failed.content = self._redact(failed.content)
            return failed
        return sdk.from_call_result(result)

    def _unavailable(self) -> str:
        if self.state is ServerPhase.FAILED and self.error:
            return f"Server '{self.spec.name}' is not available: {self.error}"
        if self.lost or self.state is ServerPhase.CONNECTED:
            return f"Server '{self.spec.name}' is not available: it exited unexpectedly."
        return f"Server '{self.spec.name}' is not available ({self.state})."

    async def run(self) -> None:
        """The owner task: lives until `close()`, a lost server, or cancellation."""
        try:
            await self._set_state(ServerPhase.STARTING)
            with contextlib.suppress(OSError):
                private_dir(self.log_path.parent)
                self.log.create()
            # The stderr pump's task group: it outlives the client, to copy the last lines.
            async with anyio.create_task_group() as self._logs:
                try:
                    await self._run()
                except Exception as exc:
                    if self.state is not ServerPhase.FAILED:
                        reason = (
                            self._auth_failure()
                            or self._child.failure
                            or await describe_startup_error(exc)
                        )
                        await self._fail(self._child.with_exit_status(reason))
                finally:
                    self._client = None
                    self.ready.set()
                    self._logs.cancel_scope.cancel()
        finally:
            # Shielded: a cancelled session (SIGINT, SIGTERM) still reports every server closed.
            with anyio.CancelScope(shield=True):
                if not self.state.ended:
                    await self._set_state(ServerPhase.CLOSED)
            self.ready.set()
            self.done.set()

    async def _run(self) -> None:
        with anyio.CancelScope() as life:
            self._life = life
            if self._closing.is_set():
                life.cancel()
            life.deadline = anyio.current_time() + self.spec.startup_timeout
            async with self._open_client() as (sdk, client):
                self.protocol_version = client.protocol_version
                self.server_info = sdk.implementation(client.server_info)
                async with anyio.create_task_group() as tg:
                    if client.protocol_version in sdk.MODERN_PROTOCOL_VERSIONS:
                        # Opened before the first listing: a change in between is not replayed.
                        await tg.start(self.follow.listen, client)
                    await self._relist(client)
                    life.deadline = math.inf
                    self._client = client
                    await self._set_state(ServerPhase.CONNECTED)
                    self.ready.set()
                    tg.start_soon(self.follow.serve, client)
                    if self.spec.type == "stdio":
                        tg.start_soon(self._watch_lost)
                    await self._closing.wait()
                    tg.cancel_scope.cancel()
                self._client = None
        if life.cancelled_caught and not self.ready.is_set() and not self._closing.is_set():
            await self._fail(
                f"no tool list within startup_timeout ({self.spec.startup_timeout:g} s)"
            )

    @asynccontextmanager
    async def _open_client(self) -> AsyncIterator[tuple[SdkModule, Client]]:
        async with AsyncExitStack() as stack:
            if self.spec.type == "stdio":
                # Spawned before the SDK is loaded: the import overlaps the server's start-up.
                await spawn_stdio(
                    self.spec,
                    stack,
                    self._child,
                    workspace=self._workspace,
                    watchdog=self._watchdog,
                    on_stderr=self._pump_stderr,
                )
            self._sdk = sdk = await load_sdk()
            client = await connect(
                sdk,
                self.spec,
                stack,
                self._child,
                self._auth_store,
                client=lambda transport: sdk.Client(
                    transport,
                    message_handler=self._on_message,
                    elicitation_callback=sdk.accept_with_defaults,
                    read_timeout_seconds=self.spec.tool_timeout,
                ),
                on_auth=lambda auth: setattr(self, "_auth", auth),
                note=self.log.note,
            )
            yield sdk, client

    def _pump_stderr(self, stream: ByteReceiveStream) -> None:
        if self._logs is not None:
            self._logs.start_soon(self.log.pump, stream)

    async def _on_message(self, message: Any) -> None:
        sdk = self._sdk
        if sdk is not None and isinstance(message, sdk.ToolListChangedNotification):
            self.follow.request()
        elif isinstance(message, Exception):
            self.log.note(f"protocol error from server: {type(message).__name__}: {message}")

    async def _watch_lost(self) -> None:
        await self._child.lost.wait()
        if self._closing.is_set():
            return
        # Report at once, before the (bounded, shielded) shutdown: calls fail fast and
        # the server's tools leave the registry now, not seconds later. Shielded: a
        # session closing in the same instant must not turn a crash into "closed".
        with anyio.CancelScope(shield=True):
            if self._child.failure is not None:
                # The transport dropped a live server (e.g. an unframeable line): say why.
                await self._fail(self._child.failure)
                self._closing.set()
                return
            code = await self._child.wait_exit(EXIT_REAP_S)
            status = f"exit status {code}" if code is not None else "stdout closed"
            await self._fail(f"server exited unexpectedly ({status})")
        self._closing.set()

    async def _relist(self, client: Client) -> None:
        defs, skipped = to_defs(await list_all_tools(client))
        if skipped and skipped != self.skipped_tools:
            self.log.note(f"tools with an invalid input schema are muted: {', '.join(skipped)}")
        self.skipped_tools = skipped
        if self.state is ServerPhase.FAILED:
            return  # a listing that raced the server's loss must not bring its tools back
        self.tool_count = len(defs)
        await self._on_tools(defs)

    def _auth_failure(self) -> str | None:
        """Why the server's OAuth provider gave up (e.g. "...; run `subagent login NAME`")."""
        return getattr(self._auth, "failure", None)

    async def _fail(self, reason: str) -> None:
        if self._child.process is not None:
            await self.log.settle(STDERR_SETTLE_S)
        message = reason + self.log.failure_detail()
        if self.spec.type == "stdio":
            message += f" (log: {self.log_path})"
        self.error = self._redact(message)
        self.state = ServerPhase.FAILED
        self.tool_count = 0
        await self._on_tools([])
        await self._set_state(ServerPhase.FAILED)

    async def _set_state(self, state: ServerPhase) -> None:
        self.state = state
        await self._emit(
            ServerState(
                server=self.spec.name,
                state=state.value,
                error=self.error if state is ServerPhase.FAILED else None,
                tools=self.tool_count,
                log=str(self.log_path),
                protocol=self.protocol_version,
                server_info=self.server_info,
            )
        )

    def _redact(self, text: str) -> str:
        """Every error text and note passes here: `${VAR}` values never leave the connection."""
        return self._mask.text(text)
