"""`serve --http`: serve's MCP face over the SDK's streamable-HTTP transport, with auth.

The SDK's session manager serves both eras at one path: 2025-11-25 (and older) with
`Mcp-Session-Id` sessions (each bound to the credential that opened it), 2026-07-28 one
stateless exchange per request. In front of it, the SDK's bearer middleware: every
request needs a token a verifier accepts (http_auth.py), else 401 with
`WWW-Authenticate`; as an OAuth resource server serve also publishes its RFC 9728
metadata. The token's subject is the caller (host_asks.caller_of). On loopback the SDK's
Host/Origin checks refuse DNS rebinding; beyond loopback a token is required, which a
page in a browser cannot attach to a cross-origin request. On loopback without a token,
only serve's own user may call: the kernel's socket table names the uid owning the
caller's end of the connection (SameUserOnly); anyone else, or a caller that cannot be
told, gets 403.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import socket
import sys
from collections.abc import Iterator
from typing import Any

import anyio
import uvicorn
from mcp.server.auth.middleware.auth_context import AuthContextMiddleware
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from launcher.backend.callers import (
    MCP_PATH,
    TOKEN_ENV,
    Listener,
    hand_down,
    is_loopback,
    peer_uid,
    url_host,
)
from launcher.backend.runtime import Runtime, ServeOptions, running

SHUTDOWN_GRACE_S = 2
"""After the drain, how long open HTTP connections (a host's idle GET stream) get to close
before uvicorn closes them: every run already ended, nothing is left to send."""
LISTEN_BACKLOG = 128
"""Connections queued while serve is busy: 8 hosts with a few streams each, with room."""
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def security_for(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection on a loopback listener: Host and Origin must be loopback."""
    if not is_loopback(host):
        return None  # reachable by any name; a bearer token is required instead
    names = {*LOOPBACK_HOSTS, url_host(host)}
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in sorted(names)],
        allowed_origins=[f"http://{n}:*" for n in sorted(names)],
    )


class SameUserOnly:
    """Without tokens: only connections from serve's own uid get through; others, and any
    whose owner cannot be told (no /proc/net/tcp), get 403. The client address must be the
    transport's peer, never one from a header (uvicorn runs without proxy headers)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.uid = os.geteuid()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            client, server = scope.get("client"), scope.get("server")
            uid = None
            if client and server:
                uid = peer_uid((client[0], client[1]), (server[0], server[1]))
            if uid != self.uid:
                refusal = PlainTextResponse(
                    "serve --http without a token answers only its own user; "
                    f"others need a token (serve with {TOKEN_ENV} or --token-file)\n",
                    status_code=403,
                )
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def build_app(
    runtime: Runtime,
    *,
    host: str,
    verifier: TokenVerifier | None,
    resource_url: str,
    issuer: str | None,
) -> Starlette:
    """The ASGI app: the SDK's session manager at MCP_PATH behind its bearer middleware."""
    manager = StreamableHTTPSessionManager(
        app=runtime.app.server, security_settings=security_for(host)
    )
    endpoint: Any = StreamableHTTPASGIApp(manager)
    middleware: list[Middleware] = []
    routes: list[Route] = []
    if verifier is not None:
        metadata = build_resource_metadata_url(AnyHttpUrl(resource_url)) if issuer else None
        endpoint = RequireAuthMiddleware(endpoint, [], metadata)
        middleware = [
            Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(verifier)),
            Middleware(AuthContextMiddleware),
        ]
    else:
        middleware = [Middleware(SameUserOnly)]
    if issuer is not None:
        # As strings: the metadata model keeps a path-less issuer without a trailing slash
        # (RFC 8414 compares issuers as exact strings); AnyHttpUrl() here would add one.
        routes += create_protected_resource_routes(
            resource_url=resource_url,  # type: ignore[arg-type]
            authorization_servers=[issuer],  # type: ignore[list-item]
        )
    routes.append(Route(MCP_PATH, endpoint=endpoint))
    return Starlette(routes=routes, middleware=middleware, lifespan=lambda _: manager.run())


class _Server(uvicorn.Server):
    """uvicorn without its own signal handlers: serve drains first (runtime.py), then
    tells it to exit, and the process ends with status 0 rather than re-raising."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def listen_socket(host: str, port: int) -> socket.socket:
    """A listening socket on (host, port), bound now (port 0: any free one)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    sock.listen(LISTEN_BACKLOG)
    sock.setblocking(False)
    return sock


def public_url(host: str, port: int) -> str:
    """The MCP endpoint's URL as seen from this machine."""
    return f"http://{url_host(host)}:{port}{MCP_PATH}"


async def serve_http(
    opts: ServeOptions,
    sock: socket.socket,
    *,
    verifier: TokenVerifier | None,
    resource_url: str | None = None,
    issuer: str | None = None,
) -> None:
    """Serve on `sock` until a signal drains serve; says where on stderr once listening."""
    host, port = sock.getsockname()[:2]
    url = public_url(host, port)
    async with running(opts) as runtime:
        app = build_app(
            runtime, host=host, verifier=verifier, resource_url=resource_url or url, issuer=issuer
        )
        config = uvicorn.Config(
            app,
            log_level="warning",
            lifespan="on",
            timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
            access_log=False,
            # uvicorn would otherwise rewrite the client address from X-Forwarded-For for
            # any loopback peer, and SameUserOnly would ask the kernel about a socket the
            # caller named: the client must stay the socket's own peer address.
            proxy_headers=False,
        )
        server = _Server(config)
        async with anyio.create_task_group() as tg:

            async def stop_when_drained() -> None:
                await runtime.drained.wait()
                server.should_exit = True

            tg.start_soon(stop_when_drained)
            # The socket listens already: a host that connects now waits in its backlog.
            print(f"subagent serve: listening on {url}", file=sys.stderr, flush=True)
            await server.serve(sockets=[sock])
            tg.cancel_scope.cancel()


async def serve_http_at(opts: ServeOptions, listener: Listener) -> None:
    """Listen where `listener` says, with its auth, and serve until drained."""
    from launcher.backend.http_auth import IssuerJwts, StaticTokens
    from launcher.errors import UsageError

    try:
        sock = listen_socket(listener.host, listener.port)
    except OSError as exc:
        where = f"{url_host(listener.host)}:{listener.port}"
        raise UsageError(f"--http {where}: cannot listen: {exc.strerror}") from exc
    hand_down(listener)  # done already by the command; here for any other caller
    resource = listener.public_url or public_url(listener.host, sock.getsockname()[1])
    verifier: TokenVerifier | None = None
    if listener.issuer is not None:
        verifier = IssuerJwts(listener.issuer, resource)
    elif listener.tokens:
        verifier = StaticTokens(listener.tokens)
    opts = dataclasses.replace(opts, max_per_caller=listener.per_caller_limit(opts.max_concurrent))
    await serve_http(opts, sock, verifier=verifier, resource_url=resource, issuer=listener.issuer)
