"""Our OTLP protobuf encoder against the SDK's own: the same spans give the same request.

Both outputs are decoded with `opentelemetry-proto` and compared message for message (every
field, presence included), and byte for byte; the spans are a real session's plus ones made
to reach every field (links, events, remote parents, trace state, scopes, resources, drops).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common._internal import _encode_value
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as sdk_encode
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import (
    Link,
    NonRecordingSpan,
    SpanContext,
    SpanKind,
    StatusCode,
    TraceFlags,
)
from opentelemetry.trace.span import TraceState

from launcher.assemble import assemble_session, run_agent
from launcher.config.discovery import load_config
from launcher.telemetry import otlp_wire
from tests.telemetry_support import recording, write_scripted


def assert_same_request(spans: list[ReadableSpan]) -> ExportTraceServiceRequest:
    ours = ExportTraceServiceRequest()
    ours.ParseFromString(otlp_wire.encode_spans(spans))
    theirs = sdk_encode(spans)
    assert MessageToDict(ours) == MessageToDict(theirs)  # readable on failure
    assert ours == theirs
    assert otlp_wire.encode_spans(spans) == theirs.SerializeToString()
    return ours


def _provider(resource: Resource, limits: SpanLimits | None = None) -> Any:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=resource, span_limits=limits, shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def test_every_field_of_made_spans_is_encoded_as_the_sdk_does() -> None:
    first, first_memory = _provider(
        Resource({"service.name": "one", "n": 7}, schema_url="https://schema/1")
    )
    second, second_memory = _provider(
        Resource({"service.name": "two"}),
        SpanLimits(max_span_attributes=2, max_events=1, max_links=1, max_event_attributes=1),
    )
    tracer = first.get_tracer(
        "scope.a", "1.2", schema_url="https://schema/s", attributes={"scope.attr": True}
    )
    bare = first.get_tracer("scope.b")
    remote = SpanContext(
        0xABC,
        0x123,
        is_remote=True,
        trace_flags=TraceFlags(TraceFlags.SAMPLED),  # else the parent-based sampler drops all
        trace_state=TraceState([("k", "v"), ("z", "9")]),
    )
    attributes: dict[str, Any] = {
        "text": "é ünïcode ✓",
        "empty": "",
        "yes": True,
        "no": False,
        "zero": 0,
        "negative": -(2**63),
        "big": 2**63 - 1,
        "float": -1.5e300,
        "strings": ("a", "", "c"),
        "ints": [1, -2, 3],
        "floats": [0.0, 2.5],
        "bools": [True, False],
        "empty_list": [],
    }
    with tracer.start_as_current_span(
        "root", context=trace.set_span_in_context(NonRecordingSpan(remote)), attributes=attributes
    ) as root:
        root.add_event("started", {"count": 3, "names": ["x"]}, timestamp=1)
        root.add_event("plain")
        with bare.start_as_current_span(
            "child",
            kind=SpanKind.CLIENT,
            links=[Link(remote, {"why": "batch"}), Link(root.get_span_context())],
        ) as child:
            child.set_status(StatusCode.ERROR, "it broke")
        with tracer.start_as_current_span("ok", kind=SpanKind.SERVER) as ok:
            ok.set_status(StatusCode.OK)
    limited = second.get_tracer("limited")
    for kind in SpanKind:
        with limited.start_as_current_span(
            f"kind {kind.name}",
            kind=kind,
            attributes={"a": 1, "b": 2, "c": 3},
            links=[Link(remote), Link(remote)],
        ) as span:
            span.add_event("one", {"x": 1, "y": 2})
            span.add_event("two")
    spans = [*first_memory.get_finished_spans(), *second_memory.get_finished_spans()]
    request = assert_same_request(spans)
    assert [len(r.scope_spans) for r in request.resource_spans] == [2, 1]
    dropped = request.resource_spans[1].scope_spans[0].spans[0]
    assert dropped.dropped_attributes_count and dropped.dropped_events_count
    assert dropped.dropped_links_count


@pytest.mark.anyio
async def test_a_sessions_spans_are_encoded_as_the_sdk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("SUBAGENT_STORE", "0")
    monkeypatch.setenv("SUBAGENT_SANDBOX", "off")
    script = (
        "steps:\n"
        "  - call: [{tool: ls, args: {path: .}}, {tool: no_such_tool, args: {}}]\n"
        "  - say: done\n"
    )
    config_dir, path = write_scripted(tmp_path, script)
    session = assemble_session(load_config(config_dir, cwd=tmp_path), "general-purpose",
                               workspace=tmp_path)  # fmt: skip
    with recording(content=True) as memory:
        assert str(await run_agent(session, "go", model=f"scripted:{path}")) == "completed"
    spans = list(memory.get_finished_spans())
    assert len(spans) >= 4
    assert_same_request(spans)


@pytest.mark.parametrize(
    "value",
    [
        None,
        b"\x00\xffbytes",
        {"nested": {"deeper": [1, "two", None]}, "n": 1.0},
        [[], {}],
        -1,
        2**40,
    ],
)
def test_values_outside_span_attributes_are_encoded_as_the_sdk_does(value: Any) -> None:
    assert otlp_wire._any_value(value) == _encode_value(value).SerializeToString()


def test_an_attribute_that_cannot_be_encoded_is_left_out_as_the_sdk_does() -> None:
    class Odd:
        pass

    pairs = {"good": 1, "bad": Odd(), "after": "x"}
    ours = otlp_wire._attributes(1, pairs)
    theirs = b"".join(
        b"\x0a" + bytes([len(body)]) + body
        for body in (otlp_wire._key_value("good", 1), otlp_wire._key_value("after", "x"))
    )
    assert ours == theirs
