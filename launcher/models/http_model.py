"""What every HTTP provider shares: model name, base URL, key check, client, retries."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

import httpx2

from launcher.models.base import ModelResponse
from launcher.models.credentials import require_key
from launcher.models.retry import RetryPolicy, post_stream
from launcher.telemetry import traces
from launcher.toolset.types import ToolDef


class HttpModel:
    """Base of the streaming HTTP providers; subclasses build the body and read the stream."""

    provider: ClassVar[str]
    key_env: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(
        self,
        model: str,
        *,
        http: httpx2.AsyncClient,
        api_key: str | None,
        base_url: str | None = None,
        retry: RetryPolicy | None = None,
        owns_http: bool = False,
    ) -> None:
        self.spec = f"{self.provider}:{model}"
        self.model = model
        self.base_url = (base_url or self.default_base_url).rstrip("/")
        self._api_key = require_key(self.provider, api_key, self.key_env, self.base_url)
        self._http = http
        self._owns_http = owns_http
        self._retry = retry or RetryPolicy()
        self._wire: tuple[Sequence[ToolDef], list[dict[str, Any]]] | None = None

    def _tools_wire(
        self, tools: Sequence[ToolDef], convert: Callable[[Sequence[ToolDef]], list[dict[str, Any]]]
    ) -> list[dict[str, Any]]:
        """`tools` in the provider's shape, converted once per offer (a turn's offer is the
        same object as the last turn's until the tools change)."""
        if self._wire is None or self._wire[0] is not tools:
            self._wire = (tools, convert(tools))
        return self._wire[1]

    def stall_after(self, seconds: float) -> None:
        """A stream silent this long (the run's idle_timeout) is cut and asked again under
        the retry rules; never longer than the default read timeout."""
        timeout = self._retry.timeout
        read = min(seconds, timeout.read if timeout.read is not None else seconds)
        self._retry = dataclasses.replace(
            self._retry,
            timeout=httpx2.Timeout(
                connect=timeout.connect, read=read, write=timeout.write, pool=timeout.pool
            ),
        )

    async def aclose(self) -> None:
        """Close the HTTP client if this model created it."""
        if self._owns_http:
            await self._http.aclose()

    async def _post(
        self,
        path: str,
        *,
        headers: dict[str, str],
        body: dict[str, Any],
        handle: Callable[[httpx2.Response], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """POST a streaming request with the retry policy; `handle` reads the stream."""
        return await post_stream(
            self._http,
            self.provider,
            f"{self.base_url}{path}",
            headers=traces().headers(headers),  # traceparent: the chat span is current
            body=body,
            handle=handle,
            policy=self._retry,
        )
