"""Send one streaming model request with timeouts, retries and backoff.

The one place where httpx failures become `ModelError`s.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import httpx2

from launcher.errors import ModelError, StreamStalled
from launcher.telemetry import traces

T = TypeVar("T")

RETRYABLE_STATUS: frozenset[int] = frozenset({429, 500, 502, 503, 504, 529})
"""Rate limits and transient server trouble (529 is Anthropic's "overloaded")."""

MAX_ATTEMPTS = 4
"""One try plus three retries: rides out a short rate limit or a server restart."""

BASE_DELAY_S = 1.0
"""First backoff; doubles on every retry."""

MAX_DELAY_S = 20.0
"""Cap on the computed backoff, so a run never stalls long on its own guess."""

RETRY_AFTER_CAP_S = 60.0
"""Cap on a server's `Retry-After`, so a hostile or confused header cannot hang a run."""

CONNECT_TIMEOUT_S = 10.0
"""Establishing a connection; longer means the endpoint is down or wrong."""

READ_TIMEOUT_S = 300.0
"""Silence between stream chunks; reasoning models may think minutes before a token."""

WRITE_TIMEOUT_S = 30.0
"""Sending the request body (long histories are a few MB at most)."""

DEFAULT_TIMEOUT = httpx2.Timeout(
    connect=CONNECT_TIMEOUT_S, read=READ_TIMEOUT_S, write=WRITE_TIMEOUT_S, pool=CONNECT_TIMEOUT_S
)

ERROR_BODY_LIMIT = 500
"""Characters of a non-JSON error body worth showing the user."""

Sleep = Callable[[float], Awaitable[None]]


def parse_retry_after(value: str | None) -> float | None:
    """Seconds a `Retry-After` header asks for (delta-seconds or HTTP date), or None."""
    if not value:
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry; `sleep` and `jitter` are injectable for tests."""

    max_attempts: int = MAX_ATTEMPTS
    base_delay: float = BASE_DELAY_S
    max_delay: float = MAX_DELAY_S
    retry_after_cap: float = RETRY_AFTER_CAP_S
    timeout: httpx2.Timeout = field(default_factory=lambda: DEFAULT_TIMEOUT)
    sleep: Sleep = field(default=anyio.sleep, compare=False)
    jitter: Callable[[], float] = field(default=random.random, compare=False)

    def delay(self, attempt: int, retry_after: str | None = None) -> float:
        """Seconds to wait after failed attempt number `attempt` (1-based)."""
        asked = parse_retry_after(retry_after)
        if asked is not None:
            return min(asked, self.retry_after_cap)
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        # "Equal jitter": keeps at least half the backoff, spreads the rest so
        # parallel sub-agents hitting one rate limit do not retry in lockstep.
        return backoff / 2 + backoff / 2 * self.jitter()


def server_message(body: bytes) -> str:
    """The error text a provider put in its response body (`error.message` when present)."""
    text = body.decode("utf-8", "replace").strip()
    try:
        data: Any = json.loads(text)
    except ValueError:
        return text[:ERROR_BODY_LIMIT] or "(empty response body)"
    if isinstance(data, dict):
        error = data.get("error", data)
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if isinstance(data.get("message"), str):
            return str(data["message"])
    return text[:ERROR_BODY_LIMIT]


def status_message(provider: str, status: int, body: bytes) -> str:
    """An error text naming the provider, the HTTP status and the server's message."""
    return f"{provider}: HTTP {status}: {server_message(body)}"


async def post_stream(
    http: httpx2.AsyncClient,
    provider: str,
    url: str,
    *,
    headers: dict[str, str],
    body: dict[str, Any],
    handle: Callable[[httpx2.Response], Awaitable[T]],
    policy: RetryPolicy,
) -> T:
    """POST `body` and pass a 2xx streaming response to `handle`, retrying transient failures.

    Failures before the response starts are retried, and a stream that stalls (no byte
    for the read timeout: the run's idle time) is asked again from the start; a stream
    that broke otherwise is not, since its text already reached the user. A stall on the
    last attempt is StreamStalled.
    """
    for attempt in range(1, policy.max_attempts + 1):
        retry_after: str | None = None
        cause: Exception | None = None
        request = http.build_request(
            "POST", url, headers=headers, json=body, timeout=policy.timeout
        )
        try:
            response = await http.send(request, stream=True)
        except httpx2.TransportError as exc:
            message, cause = f"{provider}: cannot reach {url}: {_describe(exc)}", exc
        else:
            try:
                if response.is_success:
                    try:
                        return await handle(response)
                    except httpx2.ReadTimeout as exc:
                        message, cause = f"{provider}: response stream stalled: {url}", exc
                    except httpx2.TransportError as exc:
                        raise ModelError(
                            f"{provider}: response stream broke: {_describe(exc)}"
                        ) from exc
                else:
                    error_body = await _read_quietly(response)
                    message = status_message(provider, response.status_code, error_body)
                    if response.status_code not in RETRYABLE_STATUS:
                        raise ModelError(message)
                    retry_after = response.headers.get("retry-after")
            finally:
                await response.aclose()
        if attempt == policy.max_attempts:
            if attempt > 1:
                message += f" (gave up after {attempt} attempts)"
            if isinstance(cause, httpx2.ReadTimeout):
                raise StreamStalled(message) from cause
            raise ModelError(message) from cause
        delay = policy.delay(attempt, retry_after)
        traces().retry(attempt, message, delay)
        await policy.sleep(delay)
    raise AssertionError("unreachable: the loop returns or raises")


async def _read_quietly(response: httpx2.Response) -> bytes:
    # The status already says what went wrong; a body cut short only loses detail.
    try:
        return await response.aread()
    except httpx2.TransportError:
        return b""


def _describe(exc: Exception) -> str:
    return str(exc) or type(exc).__name__
