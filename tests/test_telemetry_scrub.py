"""Spans masked on their way out: our execute_tool span, and any span the processor sees.

The MCP SDK's own client span is e2e (tests/e2e/test_traces_export.py); here the processor
is fed spans made by a tracer of an in-memory provider, as the SDK's would be.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from launcher.secrets import SecretMask, secret_forms
from launcher.telemetry.content import MASK
from launcher.telemetry.scrub import MaskingProcessor
from launcher.telemetry.spans import Tracing
from tests.telemetry_support import all_text

SESSION_SECRET = "Sess10nToolWord4xQ"
PROCESS_SECRET = "Pr0cessWideWord7zK"


def _leaks(text: str, *secrets: str) -> list[str]:
    return sorted(form for s in secrets for form in secret_forms(s) if form in text)


@pytest.fixture
def session_mask() -> Iterator[None]:
    token = MASK.set(SecretMask({SESSION_SECRET}))
    try:
        yield
    finally:
        MASK.reset(token)


def _provider(exporter: InMemorySpanExporter, *, masking: bool) -> TracerProvider:
    provider = TracerProvider(shutdown_on_exit=False)
    inner = SimpleSpanProcessor(exporter)
    if masking:
        provider.add_span_processor(MaskingProcessor(inner, SecretMask({PROCESS_SECRET})))
    else:
        provider.add_span_processor(inner)
    return provider


@pytest.mark.usefixtures("session_mask")
def test_execute_tool_masks_a_tool_named_after_a_secret() -> None:
    exporter = InMemorySpanExporter()
    tracing = Tracing(_provider(exporter, masking=False))  # our own attributes, no processor
    with tracing.tool("c1", f"srv__t{SESSION_SECRET}", "srv", f"t{SESSION_SECRET}", {}):
        pass
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool srv__t****"
    assert _leaks(all_text([span]), SESSION_SECRET) == []


def test_the_processor_masks_every_text_of_a_span_with_the_session_or_process_mask() -> None:
    exporter = InMemorySpanExporter()
    tracer = _provider(exporter, masking=True).get_tracer("mcp-like")
    token = MASK.set(SecretMask({SESSION_SECRET}))
    try:
        with tracer.start_as_current_span(
            f"MCP send tools/call t{SESSION_SECRET}",
            attributes={
                "mcp.tool": f"t{SESSION_SECRET}",
                "list": ["a", SESSION_SECRET],
                "n": 3,
                "gen_ai.tool.call.result": SESSION_SECRET,  # ours are masked when set, not this
            },
        ) as span:
            span.add_event(f"sent {SESSION_SECRET}", {"what": SESSION_SECRET})
    finally:
        MASK.reset(token)
    with tracer.start_as_current_span(f"outside {PROCESS_SECRET}"):
        pass  # no session current: the process's mask
    with tracer.start_as_current_span("plain", attributes={"k": "v"}):
        pass
    spans = exporter.get_finished_spans()
    assert [s.name for s in spans] == ["MCP send tools/call t****", "outside ****", "plain"]
    assert dict(spans[0].attributes or {}) == {
        "mcp.tool": "t****",
        "list": ("a", "****"),
        "n": 3,
        "gen_ai.tool.call.result": "****",
    }
    assert _leaks(all_text(spans), SESSION_SECRET, PROCESS_SECRET) == []
    assert spans[0].get_span_context().span_id != spans[1].get_span_context().span_id
