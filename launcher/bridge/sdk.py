"""Everything a connection takes from the MCP SDK, in one module, loaded after its server spawned.

Importing the SDK costs more than half a second; a connection spawns its server first
and then loads this module (in a worker thread, see `loader.load_sdk`), so the
import overlaps the server's own start-up instead of delaying it.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost, ToolsListChanged
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import ToolListChangedNotification
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from launcher.bridge.auth.session import session_auth
from launcher.bridge.elicitation import accept_with_defaults
from launcher.bridge.results import describe_startup_error, from_call_result, from_exception
from launcher.bridge.stdio import stdio_transport

__all__ = [
    "LISTEN_FAILURES",
    "LISTEN_LOSSES",
    "MODERN_PROTOCOL_VERSIONS",
    "Client",
    "ToolListChangedNotification",
    "ToolsListChanged",
    "accept_with_defaults",
    "describe_startup_error",
    "from_call_result",
    "from_exception",
    "http_transport",
    "implementation",
    "probe_outrun",
    "session_auth",
    "stdio_transport",
]

MISSING_PROTOCOL_HEADER = -32020
"""A 2026-07-28 HTTP server's answer to a request without `MCP-Protocol-Version`."""

LISTEN_FAILURES = (MCPError, ListenNotSupportedError)
"""The listen stream could not be opened (or re-opened)."""
LISTEN_LOSSES = (SubscriptionLost, anyio.ClosedResourceError, anyio.EndOfStream)
"""An open listen stream went away."""


async def http_transport(
    stack: AsyncExitStack, url: str, headers: dict[str, str], auth: Any = None
) -> Any:
    """The SDK's streamable-HTTP transport; its httpx client closes with `stack`.

    `auth` is an httpx2 auth (auth.session.SessionAuth) or None.
    """
    http = await stack.enter_async_context(create_mcp_http_client(headers=headers, auth=auth))
    return streamable_http_client(url, http_client=http)


def probe_outrun(exc: BaseException) -> bool:
    """Whether a connect failed because the server outran the SDK's discover probe.

    `auto` gives up on `server/discover` after the SDK's fixed 10 s and falls back to a
    headerless `initialize`; a server of the 2026-07-28 era only refuses that with -32020.
    That refusal is the era's answer (only that era requires the header), as the SDK takes
    -32022: the probe is worth one more try within the startup timeout.
    """
    if isinstance(exc, BaseExceptionGroup):
        return any(probe_outrun(inner) for inner in exc.exceptions)
    return isinstance(exc, MCPError) and exc.code == MISSING_PROTOCOL_HEADER


def implementation(info: Any) -> dict[str, str | None] | None:
    """The server's `serverInfo` (name, version) as plain data; SDK types end here."""
    if info is None:
        return None
    return {"name": getattr(info, "name", None), "version": getattr(info, "version", None)}
