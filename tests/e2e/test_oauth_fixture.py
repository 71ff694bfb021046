"""The OAuth fixture itself, driven by the SDK's own OAuth client: the e2e tests stand on it.

Dynamic registration, PKCE code grant through an auto-approving `/authorize`, a
resource-bound short-lived token, refresh on expiry, and a revoked refresh token refused.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlparse

import anyio
import httpx2
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from tests.e2e.oauth_support import oauth_fixture

ACCESS_TTL_S = 4.0
"""Short, so a test outlives it; long enough for the call right after the code grant."""
EXPIRY_WAIT_S = 5.5
"""Longer than the access token's lifetime, rounded up to whole seconds, plus a margin."""
TEST_LIMIT_S = 60.0


class MemoryStorage:
    """The SDK's TokenStorage protocol, in memory."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


def sdk_auth(mcp_url: str, storage: MemoryStorage) -> OAuthClientProvider:
    """The SDK's client auth; the 'browser' GETs the authorize URL and reads the redirect."""
    box: dict[str, AuthorizationCodeResult] = {}

    async def redirect(url: str) -> None:
        async with httpx2.AsyncClient() as http:
            reply = await http.get(url)
        assert reply.status_code == 302
        query = parse_qs(urlparse(reply.headers["location"]).query)
        box["result"] = AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])

    async def callback() -> AuthorizationCodeResult:
        return box["result"]

    metadata = OAuthClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"], client_name="t")
    return OAuthClientProvider(mcp_url, metadata, storage, redirect, callback)


async def calls(
    mcp_url: str, storage: MemoryStorage, *steps: tuple[str, dict[str, Any]], pause_s: float = 0
) -> list[str]:
    """Call each (tool, args) on one connection, pausing `pause_s` between calls."""
    texts: list[str] = []
    async with (
        create_mcp_http_client(auth=sdk_auth(mcp_url, storage)) as http,
        Client(streamable_http_client(mcp_url, http_client=http)) as client,
    ):
        for i, (tool, args) in enumerate(steps):
            if i:
                await anyio.sleep(pause_s)
            result = await client.call_tool(tool, args)
            texts.append(result.content[0].text)  # type: ignore[union-attr]
    return texts


def test_fixture_registers_authorizes_and_refreshes_an_expired_token() -> None:
    with oauth_fixture("--access-ttl", str(ACCESS_TTL_S)) as fx:
        storage = MemoryStorage()

        async def run() -> list[str]:
            with anyio.fail_after(TEST_LIMIT_S):
                steps = [("whoami", {}), ("echo", {"text": "again"})]
                return await calls(fx.mcp_url, storage, *steps, pause_s=EXPIRY_WAIT_S)

        first, second = anyio.run(run)
        stats = fx.stats()
        assert first.startswith("client=") and "scopes=mcp" in first
        assert second == "again"
        assert stats["registrations"] == 1 and stats["code_grants"] == 1
        assert stats["refresh_grants"] == 1
        # Every issued secret is on the admin list the leak tests grep for.
        assert storage.tokens.access_token in fx.issued()


def test_fixture_refuses_a_revoked_refresh_token() -> None:
    with oauth_fixture() as fx:
        storage = MemoryStorage()
        anyio.run(calls, fx.mcp_url, storage, ("whoami", {}))
        assert fx.revoke_refresh() == 1
        assert fx.expire_access() == 1
        refresh = storage.tokens.refresh_token
        reply = httpx2.post(
            f"{fx.base}/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": refresh,
                "client_id": storage.client.client_id,
                "client_secret": storage.client.client_secret or "",
            },
        )
        assert reply.status_code == 400 and reply.json()["error"] == "invalid_grant"
        assert fx.stats()["refresh_grants"] == 0


def test_fixture_rejects_calls_without_a_token() -> None:
    with oauth_fixture() as fx:
        reply = httpx2.post(fx.mcp_url, json={}, timeout=30)
        assert reply.status_code == 401
        assert "resource_metadata=" in reply.headers["www-authenticate"]
