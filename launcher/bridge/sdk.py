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
    "session_auth",
    "stdio_transport",
]

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
