"""Our OTLP/HTTP exporter over a real loopback socket, side by side with the SDK's own:
for the same variables both send the same request (path, headers, encoding, body) and
meet an unwell collector the same way (retry on 503, give up on 400)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import ssl
import subprocess
import sys
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from launcher.telemetry import setup
from launcher.telemetry.otlp_http import OtlpHttpExporter

SERVER_JOIN_S = 5.0
RETRY_WAIT_S = 30.0
"""Bounds the wait for a retrying export: its first back-off is about 1 s."""


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    port: int
    """The client's port: one per connection."""


@dataclass
class Collector:
    """Answers each POST with the next of `answers` (then 200), keeping what came."""

    answers: list[tuple[int, dict[str, str]]] = field(default_factory=list)
    received: list[Received] = field(default_factory=list)
    server: Any = None

    @property
    def base(self) -> str:
        host, port = self.server.server_address[:2]
        scheme = "https" if isinstance(self.server.socket, ssl.SSLSocket) else "http"
        return f"{scheme}://{host}:{port}"


@pytest.fixture
def collector() -> Iterator[Collector]:
    with _serve(None) as state:
        yield state


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made by the openssl CLI)."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl here to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@contextmanager
def _serve(tls: ssl.SSLContext | None) -> Iterator[Collector]:
    state = Collector()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            state.received.append(Received(self.path, headers, body, self.client_address[1]))
            status, extra = state.answers.pop(0) if state.answers else (200, {})
            self.send_response(status)
            chunked = extra.pop("X-Test-Chunked", None) is not None
            for name, value in extra.items():
                self.send_header(name, value)
            if chunked:  # as a proxy might answer: the body in chunks, a trailer
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.wfile.write(b"5;ext=1\r\nhello\r\n3\r\nabc\r\n0\r\nX-Trailer: t\r\n\r\n")
            else:
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    state.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        state.server.socket = tls.wrap_socket(state.server.socket, server_side=True)
    thread = threading.Thread(target=state.server.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.server.shutdown()
        state.server.server_close()
        thread.join(SERVER_JOIN_S)


def _spans() -> list[ReadableSpan]:
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "t"}), shutdown_on_exit=False)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span("outer", attributes={"k": "v" * 2000}):
        with tracer.start_as_current_span("inner"):
            pass
    return list(memory.get_finished_spans())


def _decoded(received: Received) -> bytes:
    encoding = received.headers.get("content-encoding")
    if encoding == "gzip":
        return gzip.decompress(received.body)
    if encoding == "deflate":
        return zlib.decompress(received.body)
    return received.body


def _both(
    collector: Collector, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> tuple[Received, Received]:
    """What ours, then the SDK's exporter send for the same spans under `env`."""
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    spans = _spans()
    for exporter in (OtlpHttpExporter(), OTLPSpanExporter()):
        assert exporter.export(spans) is SpanExportResult.SUCCESS
        exporter.shutdown()
    ours, theirs = collector.received
    return ours, theirs


def _same_request(ours: Received, theirs: Received) -> None:
    assert ours.path == theirs.path
    assert _decoded(ours) == _decoded(theirs)
    wire_headers = ("content-type", "content-encoding", "authorization", "x-team")
    assert {k: ours.headers.get(k) for k in wire_headers} == {
        k: theirs.headers.get(k) for k in wire_headers
    }


def test_the_base_endpoint_gets_v1_traces_and_the_headers_variable(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    ours, theirs = _both(
        collector,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector.base + "/",
            "OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20abc, x-team = infra",
        },
        monkeypatch,
    )
    _same_request(ours, theirs)
    assert ours.path == "/v1/traces"
    assert ours.headers["authorization"] == "Bearer abc" and ours.headers["x-team"] == "infra"
    assert "content-encoding" not in ours.headers


@pytest.mark.parametrize("how", ["gzip", "deflate"])
def test_the_traces_endpoint_is_used_as_is_and_compression_as_asked(
    collector: Collector, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    ours, theirs = _both(
        collector,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": collector.base + "/custom/path",
            "OTEL_EXPORTER_OTLP_COMPRESSION": how,
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=traces",
            "OTEL_EXPORTER_OTLP_HEADERS": "x-team=general",
        },
        monkeypatch,
    )
    _same_request(ours, theirs)
    assert ours.path == "/custom/path"
    assert ours.headers["content-encoding"] == how and ours.headers["x-team"] == "traces"


def test_a_busy_collector_is_retried_after_its_retry_after(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    collector.answers = [(503, {"Retry-After": "0"}), (429, {"Retry-After": "0"})]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
    exporter = OtlpHttpExporter()
    assert exporter.export(_spans()) is SpanExportResult.SUCCESS
    assert len(collector.received) == 3
    assert len({r.body for r in collector.received}) == 1


def test_a_refused_batch_is_not_retried(
    collector: Collector, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    collector.answers = [(400, {})]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
    assert OtlpHttpExporter().export(_spans()) is SpanExportResult.FAILURE
    assert len(collector.received) == 1
    assert "Failed to export spans batch code: 400" in caplog.text


def test_shutdown_ends_a_retry_that_waits(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    collector.answers = [(503, {"Retry-After": "3600"})] * 2
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "7200")
    exporter = OtlpHttpExporter()
    results: list[SpanExportResult] = []
    worker = threading.Thread(target=lambda: results.append(exporter.export(_spans())))
    worker.start()
    done = threading.Event()
    for _ in range(int(RETRY_WAIT_S / 0.05)):  # wait for the first answer to have come
        if collector.received:
            break
        done.wait(0.05)
    assert collector.received
    exporter.shutdown()
    worker.join(RETRY_WAIT_S)
    assert not worker.is_alive()
    assert results == [SpanExportResult.FAILURE]
    assert exporter.export(_spans()) is SpanExportResult.FAILURE  # after shutdown


def test_a_proxy_or_credential_provider_in_the_environment_keeps_the_sdk_exporter() -> None:
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}
    assert type(setup.exporter(base)) is OtlpHttpExporter
    for extra in (
        {"HTTPS_PROXY": "http://proxy:3128"},
        {"http_proxy": "http://proxy:3128"},
        {"OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER": "mine"},
        {"OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED": "true"},
    ):
        assert setup.needs_sdk_exporter({**base, **extra}), extra
    assert not setup.needs_sdk_exporter({**base, "OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED": ""})


def test_https_verifies_against_the_certificate_variable_as_the_sdk_does(
    tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    cert, key = tls_files
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    with _serve(context) as collector:
        for name in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")  # an unknown issuer: give up
        assert OtlpHttpExporter().export(_spans()) is SpanExportResult.FAILURE
        assert collector.received == []
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", str(cert))
        ours, theirs = _both(collector, dict(os.environ), monkeypatch)
        _same_request(ours, theirs)
        # requests lets REQUESTS_CA_BUNDLE win over the certificate variable: so do we.
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(Path(cert).parent / "elsewhere.pem"))
        with pytest.raises(OSError):
            OtlpHttpExporter()


def test_one_connection_carries_batches_whatever_the_answers_framing(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    collector.answers = [(200, {"X-Test-Chunked": "1"}), (200, {}), (200, {"X-Test-Chunked": "1"})]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
    exporter = OtlpHttpExporter()
    for _ in range(4):
        assert exporter.export(_spans()) is SpanExportResult.SUCCESS
    assert len(collector.received) == 4
    assert len({r.port for r in collector.received}) == 1  # kept alive throughout


def test_a_collector_that_closes_gets_a_new_connection(
    collector: Collector, monkeypatch: pytest.MonkeyPatch
) -> None:
    collector.answers = [(200, {"Connection": "close"}), (200, {})]
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
    exporter = OtlpHttpExporter()
    for _ in range(3):
        assert exporter.export(_spans()) is SpanExportResult.SUCCESS
    ports = [r.port for r in collector.received]
    assert len(ports) == 3 and ports[0] != ports[1] == ports[2]


def test_a_header_that_would_split_the_request_is_left_out(
    collector: Collector, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", collector.base)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-ok=1,x-bad=a%0D%0AInjected%3A%20yes")
    exporter = OtlpHttpExporter()
    assert exporter.export(_spans()) is SpanExportResult.SUCCESS
    (received,) = collector.received
    assert received.headers["x-ok"] == "1"
    assert "x-bad" not in received.headers and "injected" not in received.headers
    assert "'x-bad' is not valid in HTTP" in caplog.text


SPANS_THEN_MODULES = """
import json, sys
from types import SimpleNamespace as NS
from launcher import telemetry
t = telemetry.start()
usage = NS(input_tokens=1, output_tokens=2)
with t.chat("scripted:x") as chat:
    chat.reply(None, NS(finish_reason="stop", tool_calls=[], usage=usage))
with t.tool("call_1", "ls", None, None, {"path": "."}) as tool:
    tool.result(NS(is_error=False, content="a b"))
telemetry.shutdown(30)
lazy = ("opentelemetry.propagate", "opentelemetry.baggage", "encodings.idna")
loaded = sorted(m for m in sys.modules if m.startswith(lazy))
with t.tool("call_2", "bash", None, None, {}):
    carried = t.headers({})
print(json.dumps([t.on, loaded, sorted(carried)]))
"""


def test_a_run_that_carries_no_context_loads_no_propagators_nor_the_idna_codec(
    collector: Collector,
) -> None:
    """Spans made and sent without trace context going out of the process: the propagators
    and the IDNA codec (each a millisecond or more of start-up) are not loaded; carrying
    context afterwards still works."""
    env = {"PATH": "/usr/bin:/bin", "OTEL_EXPORTER_OTLP_ENDPOINT": collector.base}
    out = subprocess.run(
        [sys.executable, "-c", SPANS_THEN_MODULES],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    on, loaded, headers = json.loads(out.stdout)
    assert on is True
    assert loaded == []
    assert list(headers) == ["traceparent"]
    assert len(collector.received) == 1
    body = collector.received[0].body
    assert b"execute_tool ls" in body
    assert b"chat x" in body
