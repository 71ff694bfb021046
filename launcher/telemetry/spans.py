"""Tracing: the spans the seams open, and trace context in and out of the process.

Spans open where a run, a model request and a tool call already pass one place (the
session, the agent loop's model call and tool call); what a session's events say
(servers, the end of the run) is added by its recorder (recorder.py). The MCP SDK's own
client spans nest under whatever span is current when it sends, and it puts that
context into each request's `params._meta`: so it is not done twice here.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar, Token
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

import launcher.telemetry.names as n
from launcher import __version__
from launcher.telemetry.content import (
    MASK,
    as_json,
    input_messages,
    masked_text,
    output_messages,
    system_instructions,
)
from launcher.telemetry.switch import FLUSH_LIMIT_S

_Opened = tuple[trace.Span, Token[otel_context.Context]]
"""A span made current, and the token that makes its parent current again."""
LINK: ContextVar[trace.SpanContext | None] = ContextVar("subagent_trace_link", default=None)
"""A span the next session's span links to, as a trace of its own (a batch's task)."""
TRACE_ENV = {"traceparent": "TRACEPARENT", "tracestate": "TRACESTATE", "baggage": "BAGGAGE"}
"""W3C carrier keys and the environment variables that carry them to a process."""


def from_carrier(carrier: Mapping[str, str] | None) -> otel_context.Context | None:
    """The context a W3C carrier names, or None when it names no valid span."""
    if not carrier:
        return None
    from opentelemetry import propagate  # see _inject

    ctx = propagate.extract(dict(carrier))
    return ctx if trace.get_current_span(ctx).get_span_context().is_valid else None


def from_environment(env: Mapping[str, str]) -> otel_context.Context | None:
    """The parent that `TRACEPARENT`/`TRACESTATE` in `env` name, if valid."""
    return from_carrier({key: env[var] for key, var in TRACE_ENV.items() if env.get(var)})


def _inject(carrier: dict[str, str]) -> None:
    # Imported at first use: loading the propagators (OTEL_PROPAGATORS, W3C trace context
    # and baggage) is a few ms that a run carrying no context anywhere never needs.
    from opentelemetry import propagate

    propagate.inject(carrier)


def _fail(span: trace.Span, exc: BaseException) -> None:
    if isinstance(exc, Exception):
        span.set_attribute(n.ERROR_TYPE, type(exc).__name__)
        span.set_status(Status(StatusCode.ERROR, masked_text(str(exc))))


class ChatRecord:
    """What a chat span learns from the model's answer."""

    def __init__(self, span: trace.Span, content: bool) -> None:
        self.span = span
        self.content = content

    def reply(self, request: Any, response: Any) -> None:
        """Usage, finish reason and (opt-in) the messages of one model request."""
        reason = getattr(response, "finish_reason", None) or (
            "tool_call" if response.tool_calls else "stop"
        )
        self.span.set_attributes(
            {
                n.INPUT_TOKENS: response.usage.input_tokens,
                n.OUTPUT_TOKENS: response.usage.output_tokens,
                n.FINISH_REASONS: [reason],
            }
        )
        if self.content:
            self.span.set_attributes(
                {
                    n.SYSTEM_INSTRUCTIONS: system_instructions(request.system),
                    n.INPUT_MESSAGES: input_messages(request.messages),
                    n.OUTPUT_MESSAGES: output_messages(response, reason),
                }
            )


class ToolRecord:
    """What an execute_tool span learns from the call's result."""

    def __init__(self, span: trace.Span, content: bool) -> None:
        self.span = span
        self.content = content

    def result(self, result: Any) -> Any:
        """Record `result` (error status when it is an error) and hand it back."""
        if result.is_error:
            self.span.set_attribute(n.ERROR_TYPE, "tool_error")
            self.span.set_status(Status(StatusCode.ERROR, "the tool call returned an error"))
        if self.content:
            self.span.set_attribute(n.TOOL_RESULT, masked_text(result.content))
        return result


class BatchRecord:
    """What a batch span learns when the batch ends."""

    def __init__(self, span: trace.Span) -> None:
        self.span = span

    def done(self, progress: Any) -> None:
        """The batch's counts."""
        self.span.set_attributes(
            {
                n.BATCH_COMPLETED: progress.completed,
                n.BATCH_FAILED: progress.failed,
                n.BATCH_SKIPPED: progress.skipped,
            }
        )
        if progress.failed:
            self.span.set_status(Status(StatusCode.ERROR, f"{progress.failed} task(s) failed"))


class Tracing:
    """Spans for one process, made by `provider` (the exporter's, or a test's in-memory one).

    `content`: prompts, messages, tool arguments and results go into spans (masked).
    """

    on = True

    def __init__(self, provider: Any, *, content: bool = False) -> None:
        self.provider = provider
        self.content = content
        self.tracer = provider.get_tracer(n.INSTRUMENTATION, __version__)
        self._shut = False

    # ---- spans at the seams ------------------------------------------------------------

    @contextmanager
    def session(self, session: Any) -> Iterator[trace.Span]:
        """`invoke_agent {agent}`, current for the session's run; its recorder follows the
        session's events (servers' start-up, the run's end)."""
        from launcher.telemetry.recorder import SessionRecorder

        agent = session.agent
        attributes: dict[str, Any] = {
            n.OPERATION: n.INVOKE_AGENT,
            n.AGENT_NAME: agent.name,
            n.AGENT_ID: session.id,
            n.CONVERSATION_ID: session.id,
        }
        if agent.description:
            attributes[n.AGENT_DESCRIPTION] = agent.description
        link = LINK.get()
        span = self.tracer.start_span(
            f"{n.INVOKE_AGENT} {agent.name}",
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=[Link(link)] if link is not None else None,
        )
        recorder = SessionRecorder(self.tracer, span, session)
        session.bus.subscribe(recorder)
        token = otel_context.attach(trace.set_span_in_context(span))
        mask = MASK.set(session.mask)
        try:
            yield span
        except Exception as exc:
            _fail(span, exc)
            raise
        except BaseException:
            recorder.interrupted()
            raise
        finally:
            MASK.reset(mask)
            otel_context.detach(token)
            recorder.close()
            span.end()

    def _open(self, name: str, kind: SpanKind, attributes: dict[str, Any]) -> _Opened:
        """A span started and made current: what `start_as_current_span` does, without its
        two generator context managers around each of the run's many chat and tool spans."""
        # Errors are recorded by the seams (masked), not by the SDK from the raw exception.
        span = self.tracer.start_span(
            name,
            kind=kind,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        )
        return span, otel_context.attach(trace.set_span_in_context(span))

    @staticmethod
    def _close(opened: _Opened) -> None:
        span, token = opened
        otel_context.detach(token)
        span.end()

    @contextmanager
    def chat(self, spec: str) -> Iterator[ChatRecord]:
        """`chat {model}`, current while the model answers (its HTTP request carries it)."""
        provider, _, model = spec.partition(":")
        attributes = {n.OPERATION: n.CHAT, n.PROVIDER: provider, n.REQUEST_MODEL: model}
        opened = self._open(f"{n.CHAT} {model}", SpanKind.CLIENT, attributes)
        try:
            yield ChatRecord(opened[0], self.content)
        except BaseException as exc:
            _fail(opened[0], exc)
            raise
        finally:
            self._close(opened)

    @contextmanager
    def tool(
        self,
        call_id: str,
        name: str,
        server: str | None,
        tool: str | None,
        arguments: Any,
    ) -> Iterator[ToolRecord]:
        """`execute_tool {name}`, current while the call runs: the MCP SDK's client span,
        a nested sub-agent and a shell command the call starts are its children."""
        # A server may name a tool after a secret of its config: the session's mask applies.
        name = masked_text(name)
        attributes: dict[str, Any] = {
            n.OPERATION: n.EXECUTE_TOOL,
            n.TOOL_NAME: name,
            n.TOOL_CALL_ID: call_id,
            n.VETOED: False,
        }
        if server is not None:
            attributes[n.SERVER] = server
        if tool is not None:
            attributes[n.TOOL] = masked_text(tool)
        if self.content:
            attributes[n.TOOL_ARGUMENTS] = as_json(arguments)
        opened = self._open(f"{n.EXECUTE_TOOL} {name}", SpanKind.INTERNAL, attributes)
        try:
            yield ToolRecord(opened[0], self.content)
        finally:
            self._close(opened)

    @contextmanager
    def batch(self, path: Path) -> Iterator[BatchRecord]:
        """`batch {file}`: each task's run is a trace of its own, linked to this span."""
        with self.tracer.start_as_current_span(
            f"batch {path.name}",
            kind=SpanKind.INTERNAL,
            attributes={n.BATCH_FILE: str(path)},
        ) as span:
            yield BatchRecord(span)

    def vetoed(self, reason: str) -> None:
        """Mark the current execute_tool span: the veto refused the call (no MCP span)."""
        span = trace.get_current_span()
        span.set_attributes({n.VETOED: True, n.VETO_REASON: reason})

    def retry(self, attempt: int, reason: str, delay_s: float) -> None:
        """An event on the current chat span: attempt `attempt` failed, retried after a delay."""
        trace.get_current_span().add_event(
            n.RETRY,
            {n.ATTEMPT: attempt, n.REASON: masked_text(reason), n.DELAY_S: round(delay_s, 3)},
        )

    # ---- context out -------------------------------------------------------------------

    def carrier(self) -> dict[str, str] | None:
        """The current span as W3C trace context, for a worker's job; None without one."""
        out: dict[str, str] = {}
        _inject(out)
        return out or None

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        """`headers` plus `traceparent` (and `tracestate`) of the current span."""
        out = dict(headers)
        _inject(out)
        return out

    def child_env(self, env: dict[str, str]) -> dict[str, str]:
        """`env` with TRACEPARENT/TRACESTATE of the current span (a stale one is replaced)."""
        carried = self.carrier()
        if carried is None:
            return env
        out = {k: v for k, v in env.items() if k not in TRACE_ENV.values()}
        out.update({TRACE_ENV[key]: value for key, value in carried.items() if key in TRACE_ENV})
        return out

    # ---- context in --------------------------------------------------------------------

    @contextmanager
    def adopt(
        self, parent: Mapping[str, str] | None, link: Mapping[str, str] | None
    ) -> Iterator[None]:
        """Run under `parent` (a carried span: the serve request, the delegating tool call),
        else as a new trace, linked to `link` when given (a batch's span)."""
        ctx = from_carrier(parent) or otel_context.Context()
        linked = from_carrier(link)
        link_context = trace.get_current_span(linked).get_span_context() if linked else None
        token = otel_context.attach(ctx)
        link_token = LINK.set(link_context)
        try:
            yield
        finally:
            LINK.reset(link_token)
            otel_context.detach(token)

    # ---- the end -----------------------------------------------------------------------

    def shutdown(self, limit_s: float = FLUSH_LIMIT_S) -> None:
        """Export what is left and stop; gives up after `limit_s` (an endpoint that hangs)."""
        if self._shut:
            return
        self._shut = True
        ending = threading.Thread(target=self.provider.shutdown, name="trace-flush", daemon=True)
        ending.start()
        ending.join(limit_s)
