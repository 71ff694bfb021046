"""Traces under `subagent serve`: the host's `_meta.traceparent` is the sub-agent's ancestor.

serve and its worker processes export to a loopback OTLP receiver; the host is a plain SDK
client in this process, which has no tracer provider: the `_meta` it sends is the one the
test writes. A task keeps the spawn's context however many `tasks/get` polls follow.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.otlp_receiver import OtlpReceiver, Span, ancestors, named
from tests.e2e.serve_tasks_support import LIMIT_S, StatusLog, TaskObserver, request, serve_client

pytestmark = pytest.mark.e2e

PARENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_SPAN = "00f067aa0ba902b7"
POLL_TRACE = "11111111111111111111111111111111"
SPANS_LIMIT_S = 30.0
"""Bounds the wait for serve's and its worker's last spans (each flushes as it ends)."""
POLL_S = 0.2


def _traceparent(trace_id: str, span_id: str) -> str:
    return f"00-{trace_id}-{span_id}-01"


@pytest.fixture
def receiver(monkeypatch: pytest.MonkeyPatch) -> Iterator[OtlpReceiver]:
    with OtlpReceiver() as server:
        # serve_client passes this process's environment on to serve (and so its workers).
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", server.endpoint)
        yield server


def _spawn_request(tmp_path: Path) -> dict[str, Any]:
    return {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"}


def _sub_agent_run(spans: list[Span]) -> tuple[Span, Span]:
    """The worker's `invoke_agent` and serve's SDK server span for the spawn above it."""
    (run,) = named(spans, "invoke_agent general-purpose")
    (server_span,) = [s for s in ancestors(run, spans) if s.name == "tools/call spawn_subagent"]
    return run, server_span


def _observer() -> TaskObserver:
    return TaskObserver(
        "dev.subagent.test/task-status", "notifications/tasks/status", StatusLog(), claim=False
    )


@pytest.mark.anyio
async def test_the_hosts_traceparent_is_an_ancestor_of_the_workers_invoke_agent(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    meta = {"traceparent": _traceparent(PARENT_TRACE, PARENT_SPAN)}
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="legacy", extension=_observer()) as client:
            answer = await client.call_tool("spawn_subagent", _spawn_request(tmp_path), meta=meta)
            assert answer.structured_content is not None
            assert answer.structured_content["status"] == "completed"
    spans = receiver.wait_for(
        lambda got: bool(named(got, "invoke_agent")) and bool(named(got, "tools/call spawn")),
        SPANS_LIMIT_S,
    )
    run, server_span = _sub_agent_run(spans)
    assert run.trace_id == PARENT_TRACE
    assert server_span.parent_id == PARENT_SPAN and server_span.scope == "mcp-python-sdk"
    assert run.parent_id == server_span.span_id  # the worker's parent came with its job
    (mcp_call,) = named(spans, "MCP send tools/call echo")  # in the worker, under its tool
    assert mcp_call.trace_id == PARENT_TRACE


@pytest.mark.anyio
async def test_a_task_keeps_the_spawns_context_across_polling(
    tmp_path: Path, receiver: OtlpReceiver
) -> None:
    spawn_meta = {"traceparent": _traceparent(PARENT_TRACE, PARENT_SPAN)}
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="legacy", extension=_observer()) as client:
            params = {
                "name": "spawn_subagent",
                "arguments": _spawn_request(tmp_path),
                "task": {"ttl": 60_000},
                "_meta": spawn_meta,
            }
            created = await client.session._dispatcher.send_raw_request(
                "tools/call", params, {"timeout": LIMIT_S}
            )
            task_id = created["task"]["taskId"]
            polls = 0
            while True:  # every poll in a trace of its own
                poll_meta = {"traceparent": _traceparent(POLL_TRACE, f"{polls + 1:016x}")}
                polled = await request(client, "tasks/get", {"taskId": task_id, "_meta": poll_meta})
                polls += 1
                if polled["status"] != "working":
                    break
                await anyio.sleep(POLL_S)
            assert polled["status"] == "completed"
    spans = receiver.wait_for(
        lambda got: bool(named(got, "invoke_agent")) and bool(named(got, "tasks/get")),
        SPANS_LIMIT_S,
    )
    run, server_span = _sub_agent_run(spans)
    assert run.trace_id == PARENT_TRACE and server_span.parent_id == PARENT_SPAN
    assert all(s.trace_id == POLL_TRACE for s in named(spans, "tasks/get"))
    assert not [s for s in ancestors(run, spans) if s.trace_id == POLL_TRACE]
