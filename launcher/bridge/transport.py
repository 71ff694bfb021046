"""A server's transport, made in one place: a stdio server's process, or an HTTP client
with its auth (an OAuth provider, a `SUBAGENT_TOKEN_<NAME>` header or the spec's headers);
and the client connected over it.

SDK-free: a stdio server is spawned before the SDK is loaded, so the import overlaps the
server's start-up; the SDK-side pieces come in as the loaded `launcher.bridge.sdk` module.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import ByteReceiveStream

from launcher.auth.tokens import TokenStore
from launcher.bridge.process import StdioChild, server_environment, spawn_server
from launcher.bridge.seam import SdkModule
from launcher.config.types import ServerSpec
from launcher.procs.group import stop_group
from launcher.procs.watchdog import Watchdog
from launcher.state import state_home


async def spawn_stdio(
    spec: ServerSpec,
    stack: AsyncExitStack,
    child: StdioChild,
    *,
    workspace: Path,
    watchdog: Watchdog | None,
    on_stderr: Callable[[ByteReceiveStream], None],
) -> None:
    """Start the stdio server into `child`; `stack` ends its group even if the transport
    never ran. `on_stderr` gets the server's stderr pipe (the log pump)."""
    process = await spawn_server(
        spec.command or "",
        list(spec.args),
        env=server_environment(dict(spec.env), workspace),
        cwd=workspace / spec.cwd if spec.cwd else workspace,
        join=watchdog.join_argv if watchdog is not None else None,
    )
    if process.stderr is not None:
        on_stderr(process.stderr)
    child.pid = process.pid
    child.process = process
    if watchdog is not None:
        watchdog.guard(process.pid)
        stack.callback(watchdog.release, process.pid)

    async def stop() -> None:
        # The transport normally stopped the group already; then this returns at once.
        with anyio.CancelScope(shield=True):
            await stop_group(process)

    stack.push_async_callback(stop)


async def open_transport(
    sdk: SdkModule,
    spec: ServerSpec,
    stack: AsyncExitStack,
    child: StdioChild,
    auth_store: TokenStore | None,
) -> tuple[Any, Any]:
    """The SDK transport for `spec` and its OAuth provider (None but for an OAuth server).

    A stdio server must have been spawned into `child` first; an HTTP client closes with
    `stack`.
    """
    if spec.type != "http":
        return sdk.stdio_transport(child), None
    store = auth_store or TokenStore(state_home())
    headers, auth = sdk.session_auth(spec, store, os.environ)
    return await sdk.http_transport(stack, spec.url or "", headers, auth), auth


async def connect(
    sdk: SdkModule,
    spec: ServerSpec,
    stack: AsyncExitStack,
    child: StdioChild,
    auth_store: TokenStore | None,
    *,
    client: Callable[[Any], Any],
    on_auth: Callable[[Any], None],
    note: Callable[[str], None],
) -> Any:
    """The transport for `spec` and `client(transport)` entered on `stack`: the era is
    negotiated. `on_auth` gets the OAuth provider before the connect can fail.

    An HTTP server of the 2026-07-28 era only that answers its first request later than the
    SDK's discover probe waits (a cold start, a loaded machine) refuses the SDK's fallback
    `initialize`; that refusal names the era, so the probe is sent once more (on a new
    transport, within the caller's startup deadline).
    """

    async def attempt() -> Any:
        transport, auth = await open_transport(sdk, spec, stack, child, auth_store)
        on_auth(auth)
        return await stack.enter_async_context(client(transport))

    try:
        return await attempt()
    except Exception as exc:
        if spec.type != "http" or not sdk.probe_outrun(exc):
            raise
        note("server/discover was answered late (the fallback was refused); probing once more")
        return await attempt()
