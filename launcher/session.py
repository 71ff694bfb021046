"""Session: the only place that starts MCP servers, and the place that ends them.

A session registers built-in tools, starts exactly the servers its scope can use,
all at once, waits for the ready barrier, runs a body (list tools, run an agent),
and on the way out, however it leaves, closes every connection and process.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio

from launcher.auth.tokens import TokenStore
from launcher.bridge.phase import ServerPhase
from launcher.bridge.sdk_logs import session_sdk_log
from launcher.config.lockfile import lock_reason
from launcher.errors import RunError, ServerError
from launcher.event_mask import MaskedEvents
from launcher.events import (
    Event,
    EventBus,
    ServerState,
    SessionEnd,
    SessionStart,
    ToolsChanged,
    jsonl_file_sink,
)
from launcher.run_plan import RunPlan
from launcher.secrets import LiveMask, process_secrets
from launcher.session_status import ServerBook, ServerStatus
from launcher.session_tools import local_entries, on_demand, server_tools_sink
from launcher.state import new_session_id, private_dir
from launcher.telemetry import traces
from launcher.toolset.admission import admission, server_config
from launcher.toolset.naming import naming_for
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import Offer, ToolEntry

if TYPE_CHECKING:
    from launcher.bridge.connection import McpConnection
    from launcher.procs.watchdog import Watchdog
    from launcher.tools.delegate import Delegate
    from launcher.tools.sandbox import ShellSandbox

T = TypeVar("T")

ConnectionFactory = Callable[..., "McpConnection"]
"""Makes one server's connection, called as `McpConnection(spec, on_tools=..., emit=...,
log_path=..., workspace=..., watchdog=..., auth_store=...)`; tests hand in their own."""

CLOSE_GRACE_S = 10.0
"""How long connections get to end after close(); the rest are then cancelled.

Above a stdio shutdown's worst case (~7.3 s: flush, stdin EOF, TERM and KILL waits, group
sweep, exit reap), which is shielded and so completes even when cancelled.
"""


class Session:
    """One agent's tools and servers for the length of one run."""

    def __init__(
        self,
        plan: RunPlan,
        *,
        bus: EventBus | None = None,
        home: Path | None = None,
        delegate: Delegate | None = None,
        close_grace_s: float = CLOSE_GRACE_S,
        connect: ConnectionFactory | None = None,
    ) -> None:
        self.plan = plan
        agent = self.agent = plan.agent
        # None: McpConnection, imported only when a server starts (the SDK loads lazily).
        self._connect = connect
        self.close_grace_s = close_grace_s
        # The agent's pin in the lock: server tools that do not match it are muted.
        pin = self.pin = plan.pin
        servers = self.servers = dict(plan.servers)
        self.ext = plan.ext
        self.workspace = plan.workspace
        self.id = plan.session_id or new_session_id()
        self.state_home = plan.state_home
        self.dir = self.state_home / "sessions" / self.id
        # Every event is masked before any sink sees it: events.jsonl, --json stdout, the
        # serve pipe and the renderer never carry a `${VAR}` value or an API key, whole or
        # split across streamed deltas.
        self.mask = LiveMask(
            set().union(*(spec.secrets for spec in servers.values()), process_secrets())
        )
        self._masked = MaskedEvents(self.mask)
        self.bus = bus or EventBus()
        self.home = home or Path.home()
        self._delegate = delegate
        self.scope = ToolScope(agent, self.ext)
        # Config order decides colliding names: every configured server, started or not,
        # so a tool's exposed name depends on mcp.json alone, not on the agent or timing.
        lock = functools.partial(lock_reason, pin) if pin is not None else None
        gate = admission(self.scope, lock, source=server_config(self.servers))
        naming = naming_for(agent.dialect)
        self.registry = ToolRegistry(gate=gate, order=tuple(self.servers), naming=naming)
        self.ondemand = on_demand(self.registry, agent, self.mask, self.dir, self.emit)
        self.connections: dict[str, McpConnection] = {}
        from launcher.procs.watchdog import Watchdog

        # Starts its process only when a first process group needs guarding.
        self.watchdog: Watchdog = Watchdog(workspace=self.workspace)
        self._sandbox: ShellSandbox | None = None  # the built-in tools' confinement
        self._closed = False
        self._barrier: anyio.CancelScope | None = None
        self._start_aborted = False
        # Past the ready barrier a required server's failure ends the run: it was promised.
        self._serving = False
        self._on_required_lost: list[Callable[[str], None]] = []
        self._book = ServerBook(tuple(self.servers))
        self.bus.subscribe(self._record, only=(ServerState, ToolsChanged))
        # Every session, CLI or serve worker, keeps its own record for post-mortems.
        self.bus.subscribe(jsonl_file_sink(self.dir / "events.jsonl"))

    # ---- what the agent loop and the CLI read -------------------------------------------

    def active(self) -> list[ToolEntry]:
        """The tools in scope right now (all offered, or loadable through `tool_search`)."""
        return self.registry.entries()

    def offer(self) -> Offer:
        """What the next turn offers: the active set, or tools on demand (toolset/ondemand)."""
        return self.ondemand.offer()

    def muted(self) -> list[tuple[ToolEntry, str]]:
        """Every announced server tool that is not active, with its reason."""
        return self.registry.muted()

    def veto(self, name: str, offered: Collection[str]) -> ToolEntry | str:
        """The call-time veto: the entry to run, or why `name` is refused. Refused unless
        the turn offered `name` and it is admitted now: a tool that registered (or changed
        scope) mid-turn waits for the next turn's snapshot."""
        if name not in offered:
            return "not offered this turn"
        return self.ondemand.admit(name)

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's state, from the event stream; never started: `not_started`."""
        return self._book.status()

    async def emit(self, event: Event) -> None:
        """Send an event (masked) to every subscriber."""
        for masked in self._masked(event):
            await self.bus.emit(masked)

    # ---- lifecycle ---------------------------------------------------------------------

    async def run(self, body: Callable[[Session], Awaitable[T]]) -> T:
        """Start, wait for the ready barrier, run `body`, and always close."""
        to_start = self.scope.servers_to_start(self.servers)
        private_dir(self.dir, self.state_home)
        failure: Exception | None = None
        try:
            with session_sdk_log(self.dir / "sdk.log", self.mask), traces().session(self):
                await self.emit(
                    SessionStart(
                        agent=self.agent.name,
                        session_id=self.id,
                        servers=list(to_start),
                        log_dir=str(self.dir),
                    )
                )
                self._register_local_tools()
                outcome: list[T] = []
                async with anyio.create_task_group() as tg:
                    try:
                        if to_start:
                            self._start_servers(tg, to_start)
                            with anyio.CancelScope() as self._barrier:
                                if self._start_aborted:
                                    self._barrier.cancel()
                                await self.ready()
                        if not self._start_aborted:
                            self._check_required()
                            self._serving = True
                        outcome.append(await body(self))
                    except Exception as exc:
                        # Raised after the task group: from inside, it would leave wrapped in
                        # an ExceptionGroup and the CLI could not map it to an exit status.
                        failure = exc
                    finally:
                        with anyio.CancelScope(shield=True):
                            await self.close()
                        # Past the grace period: a connection still running (an HTTP server
                        # that hangs on shutdown) would hold the task group open for ever.
                        tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
            return outcome[0]
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self.watchdog.close)
                unrepaired = None
                if self._sandbox is not None:
                    self._sandbox.close()
                    unrepaired = self._sandbox.unrepaired_at_end or None
                if unrepaired is not None:
                    from launcher.tools.sandbox import unrepaired_line

                    line = unrepaired_line(unrepaired)
                    if failure is not None:
                        sys.stderr.write(f"subagent: {line}\n")
                    await self.emit(SessionEnd(error=str(failure) if failure else line))
                    if failure is None:
                        # Refuse-safe: the run fails (exit 1) rather than end as clean.
                        raise RunError(line)
                else:
                    await self.emit(SessionEnd(error=str(failure) if failure else None))

    def abort_start(self) -> None:
        """Stop waiting for the ready barrier (the run was stopped while servers started)."""
        self._start_aborted = True
        if self._barrier is not None:
            self._barrier.cancel()

    async def ready(self) -> None:
        """The ready barrier: every started server listed its tools once, or failed."""
        for conn in self.connections.values():
            await conn.ready.wait()

    async def close(self) -> None:
        """Idempotent: ask every connection to end and wait (bounded) for them."""
        if self._closed:
            return
        self._closed = True
        for conn in self.connections.values():
            conn.close()
        with anyio.move_on_after(self.close_grace_s):
            for conn in self.connections.values():
                await conn.done.wait()

    # ---- internals ---------------------------------------------------------------------

    def on_required_lost(self, callback: Callable[[str], None]) -> None:
        """Call `callback(reason)` if a required server fails after the ready barrier."""
        self._on_required_lost.append(callback)

    async def _record(self, event: Event) -> None:
        # Only server events change the book: the bus sends no other (not a call's events).
        if isinstance(event, ServerState | ToolsChanged):
            self._book.record(event)
            if isinstance(event, ServerState):
                self._check_lost(event)

    def _register_local_tools(self) -> None:
        entries, self._sandbox = local_entries(
            self.agent,
            self.scope.builtin_names(),
            workspace=self.workspace,
            home=self.home,
            state_home=self.state_home,
            session_dir=self.dir,
            mask=self.mask,
            guard=self.watchdog,
            delegate=self._delegate,
        )
        self.registry.add_local(entries)

    def _start_servers(self, tg: anyio.abc.TaskGroup, names: Sequence[str]) -> None:
        connect = self._connect
        if connect is None:
            from launcher.bridge.connection import McpConnection

            connect = McpConnection
        for name in names:
            spec = self.servers[name]
            sink = server_tools_sink(
                self.registry,
                spec,
                self.connections,
                mask=self.mask,
                session_dir=self.dir,
                emit=self.emit,
            )
            conn = connect(
                spec,
                on_tools=sink,
                emit=self.emit,
                log_path=self.dir / "servers" / f"{name}.log",
                workspace=self.workspace,
                watchdog=self.watchdog,
                auth_store=TokenStore(self.state_home),
            )
            self.connections[name] = conn
            tg.start_soon(conn.run, name=f"mcp:{name}")

    def _check_lost(self, event: ServerState) -> None:
        spec = self.servers.get(event.server)
        lost = event.state == ServerPhase.FAILED and spec is not None and spec.required
        if lost and self._serving and not self._closed:
            reason = str(ServerError(event.server, f"required server failed: {event.error}"))
            for callback in self._on_required_lost:
                callback(reason)

    def _check_required(self) -> None:
        for name, status in self.status().items():
            if self.servers[name].required and name in self.connections:
                if status.state != ServerPhase.CONNECTED:
                    reason = status.error or status.state
                    raise ServerError(name, f"required server failed: {reason}")
