"""A session's events, read onto its `invoke_agent` span: the event stream says what happened.

Subscribed to the session's bus by `Tracing.session`, it sees every event already masked:
- `server_state starting` opens `connect {server}` and makes it current in the task that
  said so (the connection's owner task), so the SDK's `initialize` and `tools/list` spans
  nest under it; the server's next state ends it there (connected, failed or closed);
- `tools_changed` of a connected server (a list_changed re-list) is an event on the
  session's span, and so is a connected server's failure;
- `agent_start` and `agent_end` give the model, the final status and the usage totals.
A tracing fault never reaches the session: the recorder swallows its own errors.
"""

from __future__ import annotations

import contextlib
import logging
from contextvars import Token
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import anyio
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

import launcher.telemetry.names as n
from launcher.events import AgentEnd, AgentStart, Event, ServerState, ToolsChanged

log = logging.getLogger(__name__)

CONNECTED, FAILED = "connected", "failed"


@dataclass
class _Connect:
    """An open `connect {server}` span and where it was made current."""

    span: trace.Span
    token: Token[otel_context.Context]
    task: int


@dataclass
class _Server:
    """What the recorder knows of one server."""

    connect: _Connect | None = None
    connected: bool = False
    tools: set[str] = field(default_factory=set)


class SessionRecorder:
    """Turns one session's events into its connect spans and its span's attributes."""

    def __init__(self, tracer: trace.Tracer, span: trace.Span, session: Any) -> None:
        self.tracer = tracer
        self.span = span
        self.session = session
        self.servers: dict[str, _Server] = {}
        self.closed = False
        self.ended = False

    async def __call__(self, event: Event) -> None:
        if self.closed:
            return
        try:
            self._record(event)
        except Exception:  # a span must never cost the run; say it in the SDK log
            log.exception("trace recorder failed on %s", event.type)

    def interrupted(self) -> None:
        """The run was cancelled (a signal) before its agent ended: say so on the span."""
        if not self.ended:
            self.span.set_attribute(n.STATUS, "interrupted")

    def close(self) -> None:
        """The session's span ends: connect spans still open end with it."""
        self.closed = True
        for server in self.servers.values():
            if server.connect is not None:
                server.connect.span.end()
                server.connect = None

    def _record(self, event: Event) -> None:
        if isinstance(event, ServerState):
            self._server_state(event)
        elif isinstance(event, ToolsChanged):
            self._tools_changed(event)
        elif isinstance(event, AgentStart):
            provider, _, model = event.model.partition(":")
            self.span.set_attributes({n.PROVIDER: provider, n.REQUEST_MODEL: model})
        elif isinstance(event, AgentEnd):
            self._agent_end(event)

    def _server_state(self, event: ServerState) -> None:
        server = self.servers.setdefault(event.server, _Server())
        if event.state == "starting":
            self._open(event.server, server)
            return
        if server.connect is not None:
            self._close(server.connect, event)
            server.connect = None
        elif event.state == FAILED and server.connected:
            failed = {n.SERVER: event.server, n.REASON: event.error or ""}
            self.span.add_event(n.SERVER_FAILED, failed)
        server.connected = event.state == CONNECTED

    def _open(self, name: str, server: _Server) -> None:
        spec = self.session.servers.get(name)
        attributes: dict[str, Any] = {n.SERVER: name}
        if spec is not None and spec.type == "http":
            attributes[n.NETWORK_TRANSPORT] = "tcp"
            with contextlib.suppress(ValueError):
                url = urlsplit(spec.url or "")
                if url.hostname:
                    attributes[n.SERVER_ADDRESS] = url.hostname
                if url.port:
                    attributes[n.SERVER_PORT] = url.port
        else:
            attributes[n.NETWORK_TRANSPORT] = "pipe"
        span = self.tracer.start_span(
            f"connect {name}",
            context=trace.set_span_in_context(self.span),
            kind=SpanKind.CLIENT,
            attributes=attributes,
        )
        # Current in the owner task from here on: the SDK's start-up requests are its children.
        token = otel_context.attach(trace.set_span_in_context(span))
        server.connect = _Connect(span, token, anyio.get_current_task().id)

    def _close(self, connect: _Connect, event: ServerState) -> None:
        span = connect.span
        span.set_attribute(n.TOOLS, event.tools)
        if event.protocol:
            span.set_attribute(n.MCP_PROTOCOL_VERSION, event.protocol)
        info = event.server_info or {}
        for key, field_name in ((n.SERVER_NAME, "name"), (n.SERVER_VERSION, "version")):
            if value := info.get(field_name):
                span.set_attribute(key, value)
        if event.state == FAILED:
            span.set_attribute(n.ERROR_TYPE, "server_failed")
            span.set_status(Status(StatusCode.ERROR, event.error or "failed"))
        elif event.state != CONNECTED:
            span.set_attribute(n.STATUS, event.state)
        if anyio.get_current_task().id == connect.task:
            otel_context.detach(connect.token)  # not in another task: its context never had it
        span.end()

    def _tools_changed(self, event: ToolsChanged) -> None:
        server = self.servers.get(event.source)
        if server is None:
            return
        before = set(server.tools)
        server.tools.difference_update(event.removed)
        server.tools.update(event.added)
        # A server that fails loses every tool at once: that is its failure, not a re-list.
        lost_all = not event.added and not event.changed and before and not server.tools
        if server.connected and not lost_all:
            self.span.add_event(
                n.LIST_CHANGED,
                {
                    n.SERVER: event.source,
                    n.ADDED: list(event.added),
                    n.REMOVED: list(event.removed),
                    n.CHANGED: list(event.changed),
                },
            )

    def _agent_end(self, event: AgentEnd) -> None:
        self.ended = True
        usage = event.usage or {}
        self.span.set_attributes(
            {
                n.STATUS: str(event.status),
                n.INPUT_TOKENS: int(usage.get("input_tokens", 0)),
                n.OUTPUT_TOKENS: int(usage.get("output_tokens", 0)),
                n.TURNS: int(usage.get("turns", 0)),
                n.TOOL_CALLS: int(usage.get("tool_calls", 0)),
            }
        )
        if str(event.status) == "error":
            self.span.set_attribute(n.ERROR_TYPE, "agent_error")
            self.span.set_status(Status(StatusCode.ERROR, event.error or "error"))
