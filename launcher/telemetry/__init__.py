"""Traces: the sub-agent tree as OpenTelemetry spans, switched on by the standard variables.

This module is the switch and stays cheap (stdlib only): `traces()` is what every seam
calls, and without an OTLP endpoint it is `OFF`, whose every method hands back a shared
no-op, so a run without traces imports nothing of OpenTelemetry's. With one, `start()`
builds the exporter (setup.py) and the seams get a `Tracing` (spans.py).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from launcher.telemetry.switch import FLUSH_LIMIT_S, wanted

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["FLUSH_LIMIT_S", "OFF", "Off", "install", "installed", "shutdown", "start", "traces"]


class _Nothing:
    """What OFF's seams hand back: a context manager that records nothing."""

    def __enter__(self) -> _Nothing:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def reply(self, request: Any, response: Any) -> None:
        """A chat span's answer: nothing to record."""

    def result(self, result: Any) -> Any:
        """A tool span's result, handed back as it came."""
        return result

    def done(self, progress: Any) -> None:
        """A batch span's counts: nothing to record."""


NOTHING = _Nothing()


class Off:
    """No traces: each seam costs one call that returns NOTHING (or its input unchanged).

    Tracing (spans.py) has the same methods; tests/test_telemetry_switch.py holds them equal.
    """

    on = False

    def session(self, session: Any) -> _Nothing:
        """`invoke_agent {agent}` around a session's run."""
        return NOTHING

    def chat(self, spec: str) -> _Nothing:
        """`chat {model}` around one model request."""
        return NOTHING

    def tool(
        self,
        call_id: str,
        name: str,
        server: str | None,
        tool: str | None,
        arguments: Any,
    ) -> _Nothing:
        """`execute_tool {name}` around one tool call, vetoed or run."""
        return NOTHING

    def batch(self, path: Path) -> _Nothing:
        """`batch {file}` around a batch."""
        return NOTHING

    def vetoed(self, reason: str) -> None:
        """Mark the tool call being traced as refused by the veto."""

    def retry(self, attempt: int, reason: str, delay_s: float) -> None:
        """Note a retried model request on its chat span."""

    def headers(self, headers: dict[str, str]) -> dict[str, str]:
        """An HTTP request's headers, with `traceparent` when tracing."""
        return headers

    def child_env(self, env: dict[str, str]) -> dict[str, str]:
        """A child process's environment, with `TRACEPARENT` when tracing."""
        return env

    def carrier(self) -> dict[str, str] | None:
        """The current span as W3C trace context (`traceparent`, `tracestate`), if any."""
        return None

    def adopt(
        self, parent: Mapping[str, str] | None, link: Mapping[str, str] | None
    ) -> contextlib.AbstractContextManager[None]:
        """Run under a carried parent, or as a new trace linked to `link` (a worker's job)."""
        return contextlib.nullcontext()

    def shutdown(self, limit_s: float = FLUSH_LIMIT_S) -> None:
        """Send what is left, for at most `limit_s` seconds."""


OFF = Off()
_current: Any = None


def traces() -> Any:
    """The process's traces: OFF, or the Tracing that `start()` built (decided once)."""
    return _current if _current is not None else start()


def start(*, parent_from_env: bool = True, env: Mapping[str, str] | None = None) -> Any:
    """Decide once a process, from the environment, whether to trace; returns `traces()`.

    `parent_from_env`: `TRACEPARENT`/`TRACESTATE` parent everything this process traces
    (a CLI run, serve); a worker passes False, its parent comes with its job. Call it
    before the event loop starts, so every task inherits that parent.
    """
    global _current
    if _current is not None:
        return _current
    env = os.environ if env is None else env
    if not wanted(env):
        _current = OFF
        return OFF
    from launcher.telemetry.setup import build

    _current = build(env, parent_from_env=parent_from_env) or OFF
    return _current


def install(tracing: Any) -> Any:
    """Use `tracing` from now on (OFF, or a Tracing built elsewhere); returns the previous."""
    global _current
    previous, _current = _current, tracing
    return previous


def shutdown(limit_s: float = FLUSH_LIMIT_S) -> None:
    """Flush and stop the process's traces, if any were started (bounded by `limit_s`)."""
    if _current is not None:
        _current.shutdown(limit_s)


@contextlib.contextmanager
def installed(tracing: Any) -> Iterator[Any]:
    """`install(tracing)` for the length of a block, the previous one back after it."""
    previous = install(tracing)
    try:
        yield tracing
    finally:
        install(previous)
