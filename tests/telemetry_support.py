"""In-process traces for tests: a Tracing on the OTel SDK's own in-memory exporter.

Its provider is private (never the process's global one), so the suite's other tests and
the MCP SDK's spans are untouched; e2e tests that need the SDK's spans run a driver
process instead (tests/e2e/trace_driver.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from launcher import telemetry
from launcher.telemetry.spans import Tracing


@contextmanager
def recording(*, content: bool = False) -> Iterator[InMemorySpanExporter]:
    """Every span the launcher makes in the block, kept in memory (ended spans only)."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with telemetry.installed(Tracing(provider, content=content)):
        yield exporter


def named(spans: Any, prefix: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name.startswith(prefix)]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    context = span.get_span_context()
    assert context is not None
    return context.span_id


def trace_id(span: ReadableSpan) -> int:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id


def traceparent(span: ReadableSpan) -> str:
    """The W3C traceparent a child of `span` is given, without its flags (`-01`, `-03`)."""
    return f"00-{trace_id(span):032x}-{span_id(span):016x}"


def all_text(spans: Any) -> str:
    """Every name, attribute, event and status text of `spans`, as one string (leak checks)."""
    parts: list[str] = []
    for s in spans:
        parts.append(s.name)
        parts.append(json.dumps(dict(s.attributes or {}), default=str))
        parts.extend(json.dumps([e.name, dict(e.attributes or {})]) for e in s.events)
        parts.append(s.status.description or "")
    return "\n".join(parts)


def write_scripted(root: Path, script: str) -> tuple[Path, Path]:
    """A hermetic config dir (no servers) and a scripted model file."""
    config = root / "cfg"
    (config / "agents").mkdir(parents=True)
    (config / "mcp.json").write_text('{"mcpServers": {}}')
    path = root / "script.yaml"
    path.write_text(script)
    return config, path
