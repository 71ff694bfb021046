"""A loopback OAuth 2.1 authorization server and the MCP server it protects, in one process.

    python -m mcp_servers.oauth_protected [--access-ttl 2] [--port-file F] [--lifetime 600]

Built on the SDK's server auth pieces (its auth routes, bearer middleware and RFC 9728
protected-resource metadata) over the auto-approving provider in `_oauth_provider.py`.
It binds 127.0.0.1 on an ephemeral port (or `--port`), prints `PORT <n>` on stdout (and
writes it to `--port-file`), serves the MCP endpoint at `/mcp` with the tools `whoami`
and `echo`, and stops on stdin EOF or after `--lifetime` seconds.

Admin endpoints (no auth; a loopback test fixture only):
- `GET /admin/stats`: counters (`registrations`, `grants`, `code_grants`, `refresh_grants`,
  `refresh_refused`) and how many tokens are live;
- `GET /admin/issued`: every secret it issued (a leak search greps for each);
- `POST /admin/revoke-refresh`: forget every refresh token;
- `POST /admin/expire-access`: expire every access token now;
- `POST /admin/set?access_ttl=S&refresh_delay=S`: the lifetime of tokens issued from now on,
  and how long each refresh takes (so overlapping refreshes overlap);
- `POST /admin/mint?client_id=C`: an access token issued out of band (a CI job's secret);
- `POST /admin/mint-jwt?sub=S&aud=A[&ttl=S][&issuer=I][&foreign=1]`: a JWT for subject S and
  audience A, signed with the key `/jwks` publishes (found through
  `/.well-known/openid-configuration`); `issuer` and `foreign` forge one, `ec_kid=1` names
  the EC key in an RS256 token's header (refusal tests).
"""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path
from typing import Any

import anyio

DEFAULT_LIFETIME_S = 600.0
"""A forgotten fixture never outlives a test session by much."""
DEFAULT_ACCESS_TTL_S = 3600.0
"""Long enough to never expire unless a test asks for a short one."""
SCOPES = ("mcp", "read", "write")
"""Scopes a client may ask for; `mcp` is required to call the MCP endpoint."""
REQUIRED_SCOPE = "mcp"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m mcp_servers.oauth_protected")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default: ephemeral)")
    parser.add_argument("--port-file", help="also write the bound port to this file")
    parser.add_argument(
        "--access-ttl", type=float, default=DEFAULT_ACCESS_TTL_S, help="access token lifetime (s)"
    )
    parser.add_argument(
        "--lifetime", type=float, default=DEFAULT_LIFETIME_S, help="exit after this many seconds"
    )
    return parser.parse_args(argv)


def bind_loopback(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1: bound before the app, whose URLs carry the port."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    sock.setblocking(False)
    return sock


def build_app(base: str, access_ttl_s: float) -> tuple[Any, Any]:
    """The Starlette app serving both roles, and its provider (for the admin routes)."""
    from mcp.server import MCPServer
    from mcp.server.auth.middleware.auth_context import get_access_token
    from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
    from starlette.requests import Request
    from starlette.responses import JSONResponse

    from mcp_servers._jwt_signer import JwtSigner
    from mcp_servers._oauth_provider import AutoApproveProvider

    resource = f"{base}/mcp"
    provider = AutoApproveProvider(access_ttl_s=access_ttl_s, resource=resource)
    auth = AuthSettings(
        issuer_url=base,
        resource_server_url=resource,
        validate_token_resource=True,
        required_scopes=[REQUIRED_SCOPE],
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=list(SCOPES), default_scopes=[REQUIRED_SCOPE]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )
    server = MCPServer(
        "oauth-protected", auth_server_provider=provider, auth=auth, log_level="WARNING"
    )

    @server.tool()
    def whoami() -> str:
        """Who the bearer token says the caller is: client id, scopes and the serial number of
        the grant that issued the token (never the token)."""
        token = get_access_token()
        if token is None:
            return "anonymous"
        grant = (token.claims or {}).get("grant")
        return f"client={token.client_id} scopes={','.join(token.scopes)} grant={grant}"

    @server.tool()
    def echo(text: str) -> str:
        """Return `text` unchanged."""
        return text

    @server.custom_route("/admin/stats", methods=["GET"])
    async def stats(request: Request) -> JSONResponse:
        live = {"live_access": len(provider.access), "live_refresh": len(provider.refresh)}
        return JSONResponse({**provider.counters.as_dict(), **live})

    @server.custom_route("/admin/issued", methods=["GET"])
    async def issued(request: Request) -> JSONResponse:
        return JSONResponse({"secrets": list(provider.issued)})

    @server.custom_route("/admin/revoke-refresh", methods=["POST"])
    async def revoke_refresh(request: Request) -> JSONResponse:
        return JSONResponse({"revoked": provider.revoke_refresh_tokens()})

    @server.custom_route("/admin/expire-access", methods=["POST"])
    async def expire_access(request: Request) -> JSONResponse:
        return JSONResponse({"expired": provider.expire_access_tokens()})

    @server.custom_route("/admin/set", methods=["POST"])
    async def settings(request: Request) -> JSONResponse:
        query = request.query_params
        if "access_ttl" in query:
            provider.access_ttl_s = float(query["access_ttl"])
        if "refresh_delay" in query:
            provider.refresh_delay_s = float(query["refresh_delay"])
        return JSONResponse(
            {"access_ttl": provider.access_ttl_s, "refresh_delay": provider.refresh_delay_s}
        )

    signer = JwtSigner(base)

    @server.custom_route("/jwks", methods=["GET"])
    async def jwks(request: Request) -> JSONResponse:
        return JSONResponse(signer.jwks())

    @server.custom_route("/.well-known/openid-configuration", methods=["GET"])
    async def discovery(request: Request) -> JSONResponse:
        return JSONResponse(signer.discovery(f"{base}/jwks"))

    @server.custom_route("/admin/mint-jwt", methods=["POST"])
    async def mint_jwt(request: Request) -> JSONResponse:
        query = request.query_params
        token = signer.mint(
            query["sub"],
            query["aud"],
            float(query.get("ttl", "600")),
            issuer=query.get("issuer"),
            foreign_key=query.get("foreign") == "1",
            ec_kid=query.get("ec_kid") == "1",
        )
        return JSONResponse({"access_token": token})

    @server.custom_route("/admin/mint", methods=["POST"])
    async def mint(request: Request) -> JSONResponse:
        client_id = request.query_params.get("client_id", "ci")
        return JSONResponse({"access_token": provider.mint(client_id, [REQUIRED_SCOPE])})

    return server.streamable_http_app(host="127.0.0.1"), provider


async def serve(sock: socket.socket, args: argparse.Namespace) -> None:
    """Serve on `sock` until stdin reaches EOF or the lifetime runs out."""
    import uvicorn

    port = sock.getsockname()[1]
    app, _ = build_app(f"http://127.0.0.1:{port}", args.access_ttl)
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def stop_on_eof() -> None:
        # A thread blocked in read() cannot be cancelled: abandoned when the lifetime ends.
        await anyio.to_thread.run_sync(sys.stdin.buffer.read, abandon_on_cancel=True)
        uv.should_exit = True

    async def stop_after_lifetime() -> None:
        await anyio.sleep(args.lifetime)
        uv.should_exit = True

    async with anyio.create_task_group() as tg:
        tg.start_soon(stop_on_eof)
        tg.start_soon(stop_after_lifetime)
        await uv.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def main(argv: list[str] | None = None) -> None:
    """Entry point."""
    import warnings

    warnings.simplefilter("ignore")  # the SDK's deprecation notes are noise on a fixture's stderr
    args = parse_args(argv)
    sock = bind_loopback(args.port)
    port = sock.getsockname()[1]
    if args.port_file:
        Path(args.port_file).write_text(f"{port}\n")
    # Printed before the slow SDK import: the port is already bound, connections queue.
    print(f"PORT {port}", flush=True)
    anyio.run(serve, sock, args)


if __name__ == "__main__":
    main()
