"""The OTLP/HTTP (protobuf) span exporter: otlp_wire's bytes POSTed by http_post.

It reads the standard variables as the SDK's `opentelemetry-exporter-otlp-proto-http` does
(endpoint, headers, timeout, compression, certificates) and retries as it does (429, 502,
503, 504 and lost connections, backing off 1, 2, 4... s within the timeout, never past
shutdown). What it leaves to that package (setup.py's `needs_sdk_exporter`): a proxy from the
environment, a credential provider, the exporter's own metrics.
"""

from __future__ import annotations

import logging
import os
import random
import ssl
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.util.re import parse_env_headers

from launcher import __version__
from launcher.telemetry.http_post import Connection, valid_header
from launcher.telemetry.otlp_wire import encode_spans

_logger = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "http://localhost:4318"
TRACES_PATH = "v1/traces"
DEFAULT_TIMEOUT_S = 10.0
MAX_ATTEMPTS = 6
JITTER = 0.2
RETRY_STATUSES = frozenset({429, 502, 503, 504})
MAX_REQUEST_BYTES = 64 * 1024 * 1024
"""A batch bigger than this, before compression, is dropped (the SDK's exporter's limit)."""
COMPRESSIONS = ("none", "gzip", "deflate")


def _variable(env: Mapping[str, str], name: str) -> str:
    """The traces-only variable, else the general one (`OTEL_EXPORTER_OTLP_{name}`)."""
    return (
        env.get(f"OTEL_EXPORTER_OTLP_TRACES_{name}") or env.get(f"OTEL_EXPORTER_OTLP_{name}") or ""
    )


def endpoint(env: Mapping[str, str]) -> str:
    """The URL to POST to: the traces endpoint as is, or the general one + `/v1/traces`."""
    if traces := env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return traces
    base = env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or DEFAULT_ENDPOINT
    return f"{base.removesuffix('/')}/{TRACES_PATH}"


def timeout_s(env: Mapping[str, str]) -> float:
    raw = _variable(env, "TIMEOUT") or DEFAULT_TIMEOUT_S
    try:
        return float(raw)
    except ValueError:
        _logger.warning("Invalid timeout value %r, using default of %s seconds", raw, 10)
        return DEFAULT_TIMEOUT_S


def compression(env: Mapping[str, str]) -> str:
    value = (_variable(env, "COMPRESSION") or "none").strip().lower()
    if value not in COMPRESSIONS:
        _logger.warning("Unsupported compression type: %s", value)
        return "none"
    return value


def headers(env: Mapping[str, str], how: str) -> dict[str, str]:
    """Content type and agent, then the variables' headers (lower-cased, liberal parsing);
    one that would split the request (a CR or LF in it) is left out, and said."""
    out = {
        "content-type": "application/x-protobuf",
        "user-agent": f"subagent/{__version__} (OTLP exporter)",
    }
    for name, value in parse_env_headers(_variable(env, "HEADERS"), liberal=True).items():
        if valid_header(name, value):
            out[name] = value
        else:
            _logger.warning("Header %r is not valid in HTTP; it is not sent", name)
    if how != "none" and "content-encoding" not in out:
        out["content-encoding"] = how
    return out


def tls_context(env: Mapping[str, str]) -> ssl.SSLContext:
    """Verify as the SDK's exporter (through `requests`) does: against REQUESTS_CA_BUNDLE or
    CURL_CA_BUNDLE (they win there even over the certificate variable), else the
    certificate variable's CA file, else certifi's bundle, else the system's; a client
    certificate (and key) when the variables name one."""
    ca = (
        env.get("REQUESTS_CA_BUNDLE")
        or env.get("CURL_CA_BUNDLE")
        or _variable(env, "CERTIFICATE")
        or _certifi()
    )
    if ca and os.path.isdir(ca):
        context = ssl.create_default_context(capath=ca)
    else:
        context = ssl.create_default_context(cafile=ca or None)
    if cert := _variable(env, "CLIENT_CERTIFICATE"):
        context.load_cert_chain(cert, _variable(env, "CLIENT_KEY") or None)
    return context


def _certifi() -> str:
    try:
        import certifi
    except ImportError:
        return ""
    return str(certifi.where())


class _Failed(Exception):
    """One attempt's failure: its status (None: no answer), and whether to try again."""

    def __init__(self, reason: object, status: int | None, retry: bool) -> None:
        super().__init__(reason)
        self.status = status
        self.retry = retry
        self.retry_after: float | None = None


class OtlpHttpExporter(SpanExporter):
    """Sends span batches to the OTLP/HTTP endpoint the environment names, as protobuf."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        """Read the variables; ValueError for an endpoint that is no http(s) URL, OSError
        (ssl.SSLError) for certificate files that cannot be loaded."""
        env = os.environ if env is None else env
        self.url = endpoint(env)
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"the OTLP endpoint {self.url!r} is not an http(s) URL")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)  # ValueError: a bad port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._timeout = timeout_s(env)
        self._compression = compression(env)
        self.headers = headers(env, self._compression)
        self._tls = tls_context(env) if self._https else None
        self._connection: Connection | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._shutdown = False

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        """Encode and send one batch (the batch processor's thread; one at a time)."""
        if self._shutdown:
            _logger.warning("Exporter already shutdown, ignoring batch")
            return SpanExportResult.FAILURE
        try:
            data = encode_spans(spans)
        except Exception as error:
            _logger.error("Failed to encode span batch: %s", error)
            return SpanExportResult.FAILURE
        if len(data) > MAX_REQUEST_BYTES:
            _logger.warning(
                "Dropping span batch: serialized size %d bytes exceeds max_request_size %d bytes.",
                len(data),
                MAX_REQUEST_BYTES,
            )
            return SpanExportResult.FAILURE
        if self._compression == "gzip":
            import gzip  # only when asked: a millisecond of every traced run otherwise

            data = gzip.compress(data, mtime=0)
        elif self._compression == "deflate":
            import zlib

            data = zlib.compress(data)
        with self._lock:
            return self._send(data)

    def _send(self, data: bytes) -> SpanExportResult:
        """POST with the SDK exporter's retries: transient failures back off 2**n s
        (± 20 %, or the answer's Retry-After) while within the timeout and not shutting down."""
        deadline = time.monotonic() + self._timeout
        for attempt in range(MAX_ATTEMPTS):
            backoff = 2**attempt * random.uniform(1 - JITTER, 1 + JITTER)
            try:
                self._post(data, deadline)
                return SpanExportResult.SUCCESS
            except _Failed as failed:
                if not failed.retry:
                    _logger.error(
                        "Failed to export spans batch code: %s, reason: %s", failed.status, failed
                    )
                    return SpanExportResult.FAILURE
                if failed.retry_after is not None:
                    backoff = failed.retry_after
                if (
                    attempt + 1 == MAX_ATTEMPTS
                    or backoff > deadline - time.monotonic()
                    or self._stopping.is_set()
                ):
                    _logger.error(
                        "Failed to export spans batch due to timeout, max retries or shutdown."
                    )
                    return SpanExportResult.FAILURE
                _logger.warning(
                    "Transient error %s encountered while exporting spans batch, "
                    "retrying in %.2fs.",
                    failed,
                    backoff,
                )
            if self._stopping.wait(backoff):
                _logger.warning("Shutdown in progress, aborting retry.")
                break
        return SpanExportResult.FAILURE

    def _post(self, data: bytes, deadline: float) -> None:
        """One POST; a connection lost is tried once more at once (a stale keep-alive)."""
        lost: Exception = TimeoutError("timed out")
        for again in (False, True):
            remaining = deadline - time.monotonic()
            if again and remaining <= 0:
                break
            try:
                if self._connection is None:
                    self._connection = Connection(
                        self._host, self._port, self._tls, max(remaining, 0.001)
                    )
                answer = self._connection.post(
                    self._path, self.headers, data, max(deadline - time.monotonic(), 0.001)
                )
            except (OSError, ValueError) as error:  # ValueError: a malformed answer
                self._close()
                lost = error
                continue
            if answer.closes:
                self._close()
            if 200 <= answer.status < 400:
                return
            failed = _Failed(answer.reason, answer.status, answer.status in RETRY_STATUSES)
            if failed.retry:
                failed.retry_after = _retry_after(answer.headers.get("retry-after"))
            raise failed
        raise _Failed(lost, None, retry=True)

    def _close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def shutdown(self) -> None:
        """Stop: a retry that waits ends now; the connection is closed."""
        if self._shutdown:
            _logger.warning("Exporter already shutdown, ignoring call")
            return
        self._shutdown = True
        self._stopping.set()
        with self._lock:
            self._close()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered here."""
        return True


def _retry_after(value: str | None) -> float | None:
    """A Retry-After header's delay in seconds: a number, or an HTTP date from now."""
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if seconds == seconds and seconds != float("inf") else None
    from datetime import UTC
    from email.utils import parsedate_to_datetime

    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if at.tzinfo is None:
        at = at.replace(tzinfo=UTC)
    return max(at.timestamp() - time.time(), 0.0)
