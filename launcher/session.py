"""Session: the only place that starts MCP servers, and the place that ends them.

A session registers built-in tools, starts exactly the servers its scope can use,
all at once, waits for the ready barrier, runs a body (list tools, run an agent),
and on the way out, however it leaves, closes every connection and process.
"""

from __future__ import annotations

import dataclasses
import io
import logging
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import anyio

from launcher.auth.tokens import TokenStore
from launcher.bridge.phase import REPORTED, ServerPhase
from launcher.config.lock import AgentPin, lock_reason
from launcher.config.types import DELEGATE_TOOL, AgentSpec, ServerSpec
from launcher.errors import ServerError
from launcher.events import (
    Event,
    EventBus,
    ServerState,
    SessionEnd,
    SessionStart,
    ToolsChanged,
    jsonl_file_sink,
)
from launcher.secrets import LiveMask, SecretMask, process_secrets
from launcher.state import new_session_id, private_dir, private_opener
from launcher.store.spill import fit_result, results_dir
from launcher.toolset.naming import naming_for
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolCaller, ToolDef, ToolEntry, ToolResult

if TYPE_CHECKING:
    from launcher.bridge.connection import McpConnection
    from launcher.procs.watchdog import Watchdog
    from launcher.tools.delegate import Delegate
    from launcher.tools.sandbox import ShellSandbox

T = TypeVar("T")

CLOSE_GRACE_S = 10.0
"""How long connections get to end after close(); the rest are then cancelled.

Above a stdio shutdown's worst case (~7.3 s: flush, stdin EOF, TERM and KILL waits, group
sweep, exit reap), which is shielded and so completes even when cancelled.
"""


@dataclass
class ServerStatus:
    """A configured server's state as `subagent tools --json` reports it."""

    state: str
    tools: int = 0
    error: str | None = None
    info: dict[str, str | None] | None = field(default=None, compare=False)
    """The server's own name and version (initialize `serverInfo`), once connected."""


SERVER_CONFIG = "off in the server's config"
"""Muted reason of a tool its server's own config turns off (`disabled_tools`, ...)."""


class Session:
    """One agent's tools and servers for the length of one run."""

    def __init__(
        self,
        agent: AgentSpec,
        servers: Mapping[str, ServerSpec],
        *,
        ext: Sequence[str] = (),
        workspace: Path,
        state_home: Path,
        bus: EventBus | None = None,
        session_id: str | None = None,
        home: Path | None = None,
        delegate: Delegate | None = None,
        pin: AgentPin | None = None,
    ) -> None:
        self.agent = agent
        # The agent's pin in the lock: server tools that do not match it are muted.
        self.pin = pin
        self.servers = dict(servers)
        self.ext = tuple(ext)
        self.workspace = workspace
        self.id = session_id or new_session_id()
        self.state_home = state_home
        self.dir = state_home / "sessions" / self.id
        # Every event is masked before any sink sees it: events.jsonl, --json stdout, the
        # serve pipe and the renderer never carry a `${VAR}` value or an API key.
        self.mask = LiveMask(
            set().union(*(spec.secrets for spec in servers.values()), process_secrets())
        )
        self.bus = bus or EventBus()
        self.home = home or Path.home()
        self._delegate = delegate
        self.scope = ToolScope(agent, self.ext)
        # Config order decides colliding names: every configured server, started or not,
        # so a tool's exposed name depends on mcp.json alone, not on the agent or timing.
        self.registry = ToolRegistry(
            gate=self._gate, order=tuple(self.servers), naming=naming_for(agent.dialect)
        )
        self.connections: dict[str, McpConnection] = {}
        from launcher.procs.watchdog import Watchdog

        # Starts its process only when a first process group needs guarding.
        self._watchdog: Watchdog = Watchdog()
        self._sandbox: ShellSandbox | None = None  # the built-in tools' confinement
        self._closed = False
        self._barrier: anyio.CancelScope | None = None
        self._start_aborted = False
        # Past the ready barrier a required server's failure ends the run (issue 14).
        self._serving = False
        self._on_required_lost: list[Callable[[str], None]] = []
        # What status() reports, read back from this session's own event stream.
        self._server_states: dict[str, ServerState] = {}
        self._server_tools: dict[str, set[str]] = {}
        self._server_info: dict[str, dict[str, str | None]] = {}
        self.bus.subscribe(self._record)
        # Every session, CLI or serve worker, keeps its own record for post-mortems.
        self.bus.subscribe(jsonl_file_sink(self.dir / "events.jsonl"))

    # ---- what the agent loop and the CLI read -------------------------------------------

    def active(self) -> list[ToolEntry]:
        """The tools in scope right now: what the model is offered at the next turn."""
        return self.scope.active(self.registry.entries())

    def muted(self) -> list[tuple[ToolEntry, str]]:
        """Every announced server tool that is not active, with its reason."""
        return self.scope.muted(self.registry)

    def veto(self, name: str, offered: Collection[str], call_id: str = "") -> ToolEntry | str:
        """The call-time veto: the entry to call, or why `name` is refused.

        Refused unless the turn offered `name` and it is in scope now: a tool that
        registered (or changed scope) mid-turn waits for the next turn's snapshot.
        The entry's results are masked, and a server's result over its `max_result_bytes`
        is kept whole in `results/CALL.txt` (`call_id` names the file).
        """
        if name not in offered:
            return "not offered this turn"
        entry = self.scope.admit(name, self.registry)
        if isinstance(entry, str):
            return entry
        spec = self.servers.get(entry.source) if entry.server is not None else None
        limit = spec.max_result_bytes if spec is not None else None
        if not self.mask and limit is None:
            return entry
        return dataclasses.replace(entry, call=self._finished(entry.call, limit, call_id))

    def _finished(self, call: ToolCaller, limit: int | None, call_id: str) -> ToolCaller:
        # A result never carries a known secret: not to the model, the events, stdout or
        # the spilled file; what is over the limit is kept, not dropped.
        async def finished(arguments: dict) -> ToolResult:
            result = await call(arguments)
            if self.mask:
                result.content = self.mask.text(result.content)
                if result.structured is not None:
                    result.structured = self.mask.value(result.structured)
            if limit is not None:
                result.content = await anyio.to_thread.run_sync(
                    fit_result, result.content, limit, results_dir(self.dir), call_id or "result"
                )
            return result

        return finished

    def status(self) -> dict[str, ServerStatus]:
        """Every configured server's state, from the event stream; never started: `not_started`.

        State and error come from the server's last `server_state` event, the tool count
        from its `tools_changed` events (which also follow list_changed re-lists).
        """
        out: dict[str, ServerStatus] = {}
        for name in self.servers:
            last = self._server_states.get(name)
            if last is None:
                out[name] = ServerStatus(ServerPhase.NOT_STARTED)
                continue
            # A server still `starting` has not made the ready barrier: it did not start.
            state = last.state if last.state in REPORTED else ServerPhase.FAILED
            count = len(self._server_tools.get(name, ()))
            out[name] = ServerStatus(state, count, last.error, self._server_info.get(name))
        return out

    async def emit(self, event: Event) -> None:
        """Send an event (masked) to every subscriber."""
        await self.bus.emit(self.mask.event(event))

    # ---- lifecycle ---------------------------------------------------------------------

    async def run(self, body: Callable[[Session], Awaitable[T]]) -> T:
        """Start, wait for the ready barrier, run `body`, and always close."""
        to_start = self.scope.servers_to_start(self.servers)
        private_dir(self.dir, self.state_home)
        sdk_log = self._route_sdk_logging()
        failure: Exception | None = None
        try:
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
                    # Raised after the task group: from inside, it would leave wrapped in an
                    # ExceptionGroup and the CLI could not map it to an exit status.
                    failure = exc
                finally:
                    with anyio.CancelScope(shield=True):
                        await self.close()
                    # Past the grace period: a connection still running (an HTTP server that
                    # hangs on shutdown) would hold the task group open for ever.
                    tg.cancel_scope.cancel()
            if failure is not None:
                raise failure
            return outcome[0]
        finally:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(self._watchdog.close)
                if self._sandbox is not None:
                    self._sandbox.close()
                logging.getLogger("mcp").removeHandler(sdk_log)
                sdk_log.close()
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
        with anyio.move_on_after(CLOSE_GRACE_S):
            for conn in self.connections.values():
                await conn.done.wait()

    # ---- internals ---------------------------------------------------------------------

    def _gate(self, entry: ToolEntry) -> str | None:
        # A tool its source marked unusable is rejected whatever the scope says.
        reason = entry.problem or self.scope.gate(entry)
        server = self.servers.get(entry.server) if entry.server is not None else None
        if reason is None and server is not None and not server.offers(entry.tool):
            reason = SERVER_CONFIG  # Codex's disabled_tools / enabled_tools, Gemini's
        if reason is not None or self.pin is None:
            return reason
        # The lock judges only what the scope would offer: an unselected tool keeps
        # `not selected` (it was never pinned, and `not in lock` would mislead).
        return None if self.scope.selects(entry) else lock_reason(self.pin, entry)

    def on_required_lost(self, callback: Callable[[str], None]) -> None:
        """Call `callback(reason)` if a required server fails after the ready barrier."""
        self._on_required_lost.append(callback)

    async def _record(self, event: Event) -> None:
        if isinstance(event, ServerState):
            self._server_states[event.server] = event
            if event.server_info is not None:
                self._server_info[event.server] = event.server_info
            self._check_lost(event)
        elif isinstance(event, ToolsChanged) and event.source in self.servers:
            tools = self._server_tools.setdefault(event.source, set())
            tools.difference_update(event.removed)
            tools.update(event.added)

    def _register_local_tools(self) -> None:
        from launcher.tools import builtin_entries, memory_entries
        from launcher.tools.delegate import delegate_entry
        from launcher.tools.sandbox import ShellSandbox

        wanted = self.scope.builtin_names()
        names = [n for n in wanted if not n.startswith("memory_") and n != DELEGATE_TOOL]
        self._sandbox = ShellSandbox(
            self.agent.sandbox, workspace=self.workspace, state_home=self.state_home, home=self.home
        )
        entries = builtin_entries(
            self.workspace,
            names,
            group_guard=self._watchdog,
            results=results_dir(self.dir),
            sandbox=self._sandbox,
        )
        if DELEGATE_TOOL in wanted:
            entries.append(delegate_entry(self.agent.allowed_subagents, self._delegate))
        if self.agent.memory is not None:
            entries += memory_entries(self.agent.name, self.agent.memory, self.workspace, self.home)
        self.registry.add_local(entries)

    def _start_servers(self, tg: anyio.abc.TaskGroup, names: Sequence[str]) -> None:
        from launcher.bridge.connection import McpConnection

        for name in names:
            spec = self.servers[name]
            conn = McpConnection(
                spec,
                on_tools=self._tools_sink(name),
                emit=self.emit,
                log_path=self.dir / "servers" / f"{name}.log",
                workspace=self.workspace,
                watchdog=self._watchdog,
                auth_store=TokenStore(self.state_home),
            )
            self.connections[name] = conn
            tg.start_soon(conn.run, name=f"mcp:{name}")

    def _tools_sink(self, server: str) -> Callable[[list[ToolDef]], Awaitable[None]]:
        async def sink(defs: list[ToolDef]) -> None:
            conn = self.connections[server]
            if defs:
                change = self.registry.set_server_tools(server, defs, self._caller_factory(conn))
            else:
                change = self.registry.remove_server(server)
            if change.added or change.removed or change.changed:
                await self.emit(
                    ToolsChanged(
                        source=server,
                        added=list(change.added),
                        removed=list(change.removed),
                        changed=list(change.changed),
                    )
                )

        return sink

    @staticmethod
    def _caller_factory(
        conn: McpConnection,
    ) -> Callable[[str], Callable[..., Awaitable[ToolResult]]]:
        def make(tool: str) -> Callable[..., Awaitable[ToolResult]]:
            async def call(arguments: dict) -> ToolResult:
                return await conn.call(tool, arguments)

            return call

        return make

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

    def _route_sdk_logging(self) -> logging.Handler:
        """The SDK logs protocol noise (junk lines, tracebacks): keep it in the session log."""
        handler = _PrivateFileHandler(self.dir / "sdk.log", delay=True)
        handler.setFormatter(_MaskingFormatter(self.mask))
        logger = logging.getLogger("mcp")
        logger.addHandler(handler)
        logger.propagate = False
        return handler


class _PrivateFileHandler(logging.FileHandler):
    """A log file made 0600, like everything under SUBAGENT_HOME."""

    def _open(self) -> io.TextIOWrapper:
        stream = open(self.baseFilename, self.mode, encoding=self.encoding, opener=private_opener)
        assert isinstance(stream, io.TextIOWrapper)  # text mode: FileHandler writes str
        return stream


class _MaskingFormatter(logging.Formatter):
    """SDK log lines (tracebacks included) with every known secret masked."""

    def __init__(self, mask: SecretMask) -> None:
        super().__init__()
        self._mask = mask

    def format(self, record: logging.LogRecord) -> str:
        return self._mask.text(super().format(record))
