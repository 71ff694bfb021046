"""Export, set up from the standard OTEL_* variables: a tracer provider sending OTLP batches.

The exporter (otlp_http.py; the SDK's own where only it will do, and for gRPC) reads the
endpoint, headers, timeout, compression and certificates; here: the protocol
(`http/protobuf` by default, `grpc` where its package is installed), the resource
(`service.name` defaults to `subagent`), and the process's end: whatever way it ends
(normal, SIGINT, SIGTERM), what is left is sent within FLUSH_LIMIT_S. Imported only when
an endpoint is set; without the `otel` extra it says so once and traces stay off.
"""

from __future__ import annotations

import atexit
import logging
import os
import signal
import sys
from collections.abc import Mapping
from typing import Any

from launcher import __version__
from launcher.secrets import LiveMask, process_secrets
from launcher.telemetry.content import capture_wanted
from launcher.telemetry.spans import Tracing, from_environment
from launcher.telemetry.switch import FLUSH_LIMIT_S, endpoint_variable

PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
DEFAULT_SERVICE = "subagent"
INSTALL_HINT = "pip install 'subagent[otel]'"


def say(text: str) -> None:
    """One line on stderr: the process's only word about its traces."""
    sys.stderr.write(f"subagent: traces: {text}\n")
    sys.stderr.flush()


class FirstTrouble(logging.Handler):
    """The OTel SDK's own warnings (an endpoint that refuses, retries, drops): the first
    one is said, the rest are not; a collector that is down must not flood the terminal."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.said = False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.said:
            self.said = True
            say(f"{record.getMessage()} (later trouble exporting is not shown)")


SDK_ONLY_VARIABLES = (
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER",
    "OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER",
)
"""Variables only the SDK's exporter acts on (its plug-ins and its own metrics)."""
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy")


def needs_sdk_exporter(env: Mapping[str, str]) -> bool:
    """Whether `env` asks for what only the SDK's OTLP/HTTP exporter does: proxies (its
    `requests` honours the proxy variables), credential providers, its own metrics."""
    if any(env.get(name) for name in SDK_ONLY_VARIABLES):
        return True
    if env.get("OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED", "").strip().lower() == "true":
        return True
    return any(env.get(name) or env.get(name.upper()) for name in PROXY_VARIABLES)


def protocol(env: Mapping[str, str]) -> str:
    """The OTLP protocol asked for (the traces-only variable wins), default http/protobuf."""
    for name in PROTOCOL_VARIABLES:
        value = env.get(name, "").strip().lower()
        if value:
            return value
    return "http/protobuf"


def exporter(env: Mapping[str, str]) -> Any:
    """The span exporter for the protocol asked for; None (having said why) if it cannot be."""
    asked = protocol(env)
    endpoint = endpoint_variable(env)
    if asked == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
                OTLPSpanExporter as GrpcExporter,
            )
        except ImportError:
            say(
                f"{endpoint} is set with protocol grpc, which needs "
                "opentelemetry-exporter-otlp-proto-grpc; traces are not exported"
            )
            return None
        return GrpcExporter()
    if asked not in ("http/protobuf", "http/json"):
        say(f"unknown OTLP protocol {asked!r} (grpc, http/protobuf); traces are not exported")
        return None
    if asked == "http/json":
        say("protocol http/json is not supported; sending http/protobuf")
    if needs_sdk_exporter(env):
        try:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        except ImportError:
            say(f"{endpoint} is set, but exporting needs the OpenTelemetry SDK: {INSTALL_HINT}")
            return None
        return OTLPSpanExporter()
    try:
        from launcher.telemetry.otlp_http import OtlpHttpExporter
    except ImportError:
        say(f"{endpoint} is set, but exporting needs the OpenTelemetry SDK: {INSTALL_HINT}")
        return None
    try:
        return OtlpHttpExporter(env)
    except (ValueError, OSError) as error:  # a malformed endpoint, an unreadable certificate
        say(f"{endpoint} is set, but traces cannot be exported: {error}")
        return None


def resource(env: Mapping[str, str]) -> Any:
    """`service.name` subagent (OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES win).

    Built from the variables alone: `Resource.create` would also scan every installed
    package's entry points for resource detectors, ~20 ms of start-up.
    """
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource

    base = Resource(
        {
            "service.name": DEFAULT_SERVICE,
            "service.version": __version__,
            "telemetry.sdk.language": "python",
            "telemetry.sdk.name": "opentelemetry",
        }
    )
    return base.merge(OTELResourceDetector().detect())


def build(env: Mapping[str, str], *, parent_from_env: bool) -> Tracing | None:
    """The process's Tracing (its provider made global, for the MCP SDK's spans too), or None
    when export cannot be set up (said once on stderr). `env` is the process's environment:
    the exporter and the resource detector read os.environ themselves."""
    try:
        from opentelemetry import context, trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        from launcher.telemetry.scrub import MaskingProcessor
    except ImportError:
        endpoint = endpoint_variable(env)
        say(f"{endpoint} is set, but exporting needs the OpenTelemetry SDK: {INSTALL_HINT}")
        return None
    spans = exporter(env)
    if spans is None:
        return None
    sdk_log = logging.getLogger("opentelemetry")
    trouble = FirstTrouble()  # one for both: the first trouble of either is said, once
    sdk_log.addHandler(trouble)
    sdk_log.propagate = False
    own_log = logging.getLogger("launcher.telemetry.otlp_http")
    own_log.addHandler(trouble)
    own_log.propagate = False
    provider = TracerProvider(resource=resource(env), shutdown_on_exit=False)
    # Masked before the batch keeps it: the MCP SDK's spans name the tools it calls.
    provider.add_span_processor(
        MaskingProcessor(BatchSpanProcessor(spans), LiveMask(process_secrets()))
    )
    trace.set_tracer_provider(provider)
    tracing = Tracing(provider, content=capture_wanted(env))
    if parent_from_env and (parent := from_environment(env)) is not None:
        # Attached before the event loop starts: every task of the run inherits it.
        context.attach(parent)
    atexit.register(tracing.shutdown)
    _flush_on_sigterm(tracing)
    return tracing


def _flush_on_sigterm(tracing: Tracing) -> None:
    """Where nothing else handles SIGTERM (serve, a worker): flush, then die of it as before.

    The CLI's runner handles it itself while a command runs, and flushes on its way out.
    """
    if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return

    def flush_and_die(signum: int, frame: Any) -> None:
        tracing.shutdown(FLUSH_LIMIT_S)
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    try:
        signal.signal(signal.SIGTERM, flush_and_die)
    except ValueError:
        pass  # not the main thread: the process's owner decides about signals
