"""A small OTLP/HTTP trace receiver on loopback: what a collector would get, decoded.

It answers `POST /v1/traces` (protobuf, gzip or not) as a collector does and keeps every
span with its service name, so a test can run `subagent` with
`OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint` and read the tree back:

    with OtlpReceiver() as receiver:
        run(..., env={"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint})
        spans = receiver.wait_for(lambda s: any(x.name.startswith("invoke_agent") for x in s))

Decoding uses `opentelemetry-proto` (the protobuf definitions collectors are built from).
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

RECEIVER_SHUTDOWN_S = 5.0
"""Join timeout for the server thread; a request in flight finishes well within it."""
POLL_INTERVAL_S = 0.02
"""How often the serve loop checks for shutdown (the default 0.5 s slows every test)."""
WAIT_POLL_S = 0.05
"""How often `wait_for` looks at what has arrived."""
STATUS_ERROR = 2
"""`Status.STATUS_CODE_ERROR` in the OTLP protobuf."""


def _value(any_value: Any) -> Any:
    kind = any_value.WhichOneof("value")
    if kind is None:
        return None
    raw = getattr(any_value, kind)
    if kind == "array_value":
        return [_value(v) for v in raw.values]
    if kind == "kvlist_value":
        return {kv.key: _value(kv.value) for kv in raw.values}
    return raw


def _attributes(pairs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in pairs}


@dataclass
class Span:
    """One received span, ids as lowercase hex (empty parent: a root)."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    status_code: int
    status_message: str
    events: list[tuple[str, dict[str, Any]]]
    links: list[tuple[str, str]]
    service: str
    scope: str

    @property
    def failed(self) -> bool:
        return self.status_code == STATUS_ERROR


@dataclass
class OtlpReceiver:
    """Collects spans posted to `endpoint` (pass it as OTEL_EXPORTER_OTLP_ENDPOINT)."""

    spans: list[Span] = field(default_factory=list)
    posts: int = 0
    api_keys: list[str] = field(default_factory=list)
    """Each post's `x-api-key` header ("" when it had none)."""
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> OtlpReceiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver.api_keys.append(self.headers.get("x-api-key") or "")
                receiver._keep(request)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(POLL_INTERVAL_S,), daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(RECEIVER_SHUTDOWN_S)

    def _keep(self, request: ExportTraceServiceRequest) -> None:
        received: list[Span] = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for s in scope_spans.spans:
                    received.append(
                        Span(
                            name=s.name,
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_id=s.parent_span_id.hex(),
                            kind=s.kind,
                            attributes=_attributes(s.attributes),
                            status_code=s.status.code,
                            status_message=s.status.message,
                            events=[(e.name, _attributes(e.attributes)) for e in s.events],
                            links=[(li.trace_id.hex(), li.span_id.hex()) for li in s.links],
                            service=str(resource.get("service.name", "")),
                            scope=scope_spans.scope.name,
                        )
                    )
        with self._lock:
            self.spans.extend(received)
            self.posts += 1

    def snapshot(self) -> list[Span]:
        """Every span received so far."""
        with self._lock:
            return list(self.spans)

    def wait_for(self, done: Callable[[list[Span]], bool], limit_s: float) -> list[Span]:
        """The spans, once `done(spans)` holds; AssertionError after `limit_s` seconds."""
        deadline = time.monotonic() + limit_s
        while True:
            spans = self.snapshot()
            if done(spans):
                return spans
            if time.monotonic() > deadline:
                names = sorted(s.name for s in spans)
                raise AssertionError(f"spans not there after {limit_s} s; got {names}")
            time.sleep(WAIT_POLL_S)


def named(spans: list[Span], prefix: str) -> list[Span]:
    """The spans whose name starts with `prefix`."""
    return [s for s in spans if s.name.startswith(prefix)]


def by_id(spans: list[Span]) -> dict[str, Span]:
    return {s.span_id: s for s in spans}


def ancestors(span: Span, spans: list[Span]) -> list[Span]:
    """`span`'s parent, its parent's parent, ... as far as the received spans go."""
    index = by_id(spans)
    chain: list[Span] = []
    parent = index.get(span.parent_id)
    while parent is not None and parent not in chain:
        chain.append(parent)
        parent = index.get(parent.parent_id)
    return chain


@dataclass
class GrpcOtlpReceiver(OtlpReceiver):
    """The same receiver over OTLP/gRPC: a grpcio server on loopback implementing
    `TraceService/Export` from opentelemetry-proto (pass `endpoint` with protocol grpc)."""

    _grpc_server: Any = None
    _port: int = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._port}"  # http: the exporter's plaintext channel

    def __enter__(self) -> GrpcOtlpReceiver:
        from concurrent import futures

        import grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        class Service(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> ExportTraceServiceResponse:
                receiver._keep(request)
                return ExportTraceServiceResponse()

        self._grpc_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Service(), self._grpc_server)
        self._port = self._grpc_server.add_insecure_port("127.0.0.1:0")
        self._grpc_server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._grpc_server is not None
        self._grpc_server.stop(RECEIVER_SHUTDOWN_S).wait(RECEIVER_SHUTDOWN_S)
