"""One traced session in a process of its own, its spans kept by the OTel SDK's in-memory
exporter and printed as JSON: `python -m tests.e2e.trace_driver CONFIG SCRIPT AGENT WAIT_FOR`.

The in-memory provider is made the process's global one (as the exporter's would be), so
the MCP SDK's own client spans are kept too; a process of its own keeps that global state
out of the test runner. WAIT_FOR (an exposed tool name, or `-`): turn 1 waits until the
tool is registered, so a late tool's list_changed is in the trace however slow the box.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from launcher import telemetry
from launcher.assemble import assemble_session, plan_run, run_agent
from launcher.config.discovery import load_config
from launcher.events import Event, ToolsChanged
from launcher.run_plan import ModelChoice
from launcher.session import Session
from launcher.telemetry.spans import Tracing

WAIT_LIMIT_S = 60.0
"""Bounds the wait for the late tool (the stub adds it a second after start-up)."""


def as_dict(span: ReadableSpan) -> dict[str, Any]:
    context = span.get_span_context()
    assert context is not None
    return {
        "name": span.name,
        "trace_id": f"{context.trace_id:032x}",
        "span_id": f"{context.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent is not None else "",
        "kind": span.kind.name,
        "scope": span.instrumentation_scope.name if span.instrumentation_scope else "",
        "attributes": dict(span.attributes or {}),
        "status": span.status.status_code.name,
        "description": span.status.description,
        "events": [[e.name, dict(e.attributes or {})] for e in span.events],
    }


async def main(config_dir: Path, script: Path, agent: str, wait_for: str) -> None:
    async def late_tool_registered(session: Session) -> None:
        arrived = anyio.Event()

        async def watch(event: Event) -> None:
            if isinstance(event, ToolsChanged) and wait_for in event.added:
                arrived.set()

        session.bus.subscribe(watch)
        if wait_for == "-" or wait_for in {entry.name for entry in session.active()}:
            return
        with anyio.fail_after(WAIT_LIMIT_S):
            await arrived.wait()

    workspace = Path.cwd()
    config = load_config(config_dir, cwd=workspace)
    model = ModelChoice(f"scripted:{script}")
    plan = plan_run(config, agent, workspace=workspace, model=model)
    session = assemble_session(plan)
    await run_agent(session, "go", before=late_tool_registered)


if __name__ == "__main__":
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    telemetry.install(Tracing(provider))
    config, script_path, agent_name, late = sys.argv[1:5]
    anyio.run(main, Path(config), Path(script_path), agent_name, late)
    print(json.dumps([as_dict(s) for s in exporter.get_finished_spans()], default=str))
