"""SessionAuth: stored tokens only, refresh under the store lock, a login hint instead of a browser.

The resource server and token endpoint are an in-process httpx2 transport: what is under
test is the client's decisions (when to refresh, what to store, what to say), over the
real SDK provider and the real token files.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx2
import pytest

from launcher.auth.tokens import StoredAuth, TokenStore
from launcher.bridge.oauth_session import LoginRequired, SessionAuth, session_auth
from launcher.config.types import OAuthSettings, ServerSpec
from launcher.secrets import LiveMask

pytestmark = pytest.mark.anyio

URL = "http://rs.test/mcp"
TOKEN_URL = "http://as.test/token"
SPEC = ServerSpec(name="srv", type="http", url=URL, auth="oauth", oauth=OAuthSettings())


class Servers:
    """A resource server accepting `valid` bearer tokens and a token endpoint issuing them."""

    def __init__(self, *, refresh_ok: bool = True, delay_s: float = 0.0) -> None:
        self.valid = {"good-access"}
        self.refresh_ok = refresh_ok
        self.delay_s = delay_s
        self.refreshes: list[dict[str, str]] = []
        self.seen_bearers: list[str | None] = []

    async def __call__(self, request: httpx2.Request) -> httpx2.Response:
        if str(request.url) == TOKEN_URL:
            form = dict(x.split("=", 1) for x in request.content.decode().split("&"))
            self.refreshes.append(form)
            await anyio.sleep(self.delay_s)
            if not self.refresh_ok:
                return httpx2.Response(400, json={"error": "invalid_grant"})
            new = f"fresh-access-{len(self.refreshes)}"
            self.valid.add(new)
            body = {"access_token": new, "token_type": "Bearer", "expires_in": 3600}
            return httpx2.Response(200, json=body)
        bearer = request.headers.get("authorization")
        self.seen_bearers.append(bearer)
        if bearer and bearer.removeprefix("Bearer ") in self.valid:
            return httpx2.Response(200, json={"ok": True})
        return httpx2.Response(401, headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})


def stored(
    access: str, *, expires_at: float | None, refresh: str | None = "the-refresh"
) -> StoredAuth:
    tokens: dict[str, object] = {"access_token": access, "token_type": "Bearer", "scope": "s"}
    if refresh:
        tokens["refresh_token"] = refresh
    if expires_at is not None:
        tokens["expires_at"] = expires_at
    as_metadata = {
        "issuer": "http://as.test",
        "authorization_endpoint": "http://as.test/authorize",
        "token_endpoint": TOKEN_URL,
    }
    return StoredAuth(
        tokens=tokens,
        client_info={"client_id": "cid", "token_endpoint_auth_method": "none"},
        metadata={"oauth_metadata": as_metadata, "resource_metadata": None},
    )


async def get(auth: SessionAuth, servers: Callable[..., Awaitable[httpx2.Response]]) -> int:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(servers), auth=auth) as client:
        return (await client.get(URL)).status_code


async def test_no_login_fails_with_the_login_hint(tmp_path: Path) -> None:
    auth = SessionAuth(SPEC, TokenStore(tmp_path))
    servers = Servers()
    with pytest.raises(LoginRequired) as info:
        await get(auth, servers)
    assert str(info.value) == "not logged in; run `subagent login srv`"
    assert auth.failure == str(info.value)
    assert servers.seen_bearers == []  # nothing was sent without a token


async def test_unreadable_stored_login_asks_for_login(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", StoredAuth(tokens={"access_token": "a", "token_type": "MAC"}))
    with pytest.raises(LoginRequired, match="unreadable; run `subagent login srv`"):
        await get(SessionAuth(SPEC, store), Servers())


async def test_valid_token_is_sent_without_refresh(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored("good-access", expires_at=time.time() + 3600))
    servers = Servers()
    assert await get(SessionAuth(SPEC, store), servers) == 200
    assert servers.seen_bearers == ["Bearer good-access"]
    assert servers.refreshes == []


async def test_expired_token_is_refreshed_and_stored(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored("expired-access", expires_at=time.time() - 10))
    servers = Servers()
    assert await get(SessionAuth(SPEC, store), servers) == 200
    assert [r["grant_type"] for r in servers.refreshes] == ["refresh_token"]
    assert servers.refreshes[0]["refresh_token"] == "the-refresh"
    assert servers.seen_bearers == ["Bearer fresh-access-1"]
    saved = store.load("srv")
    assert saved is not None and saved.access_token == "fresh-access-1"
    assert saved.refresh_token == "the-refresh"  # not rotated: kept
    assert saved.expires_at is not None and saved.expires_at > time.time() + 3000


async def test_revoked_refresh_token_fails_with_the_login_hint(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored("expired-access", expires_at=time.time() - 10))
    servers = Servers(refresh_ok=False)
    auth = SessionAuth(SPEC, store)
    with pytest.raises(LoginRequired) as info:
        await get(auth, servers)
    assert str(info.value) == (
        "token refresh failed (HTTP 400 invalid_grant); run `subagent login srv`"
    )
    # Later requests fail at once, without another refresh attempt.
    with pytest.raises(LoginRequired):
        await get(auth, servers)
    assert len(servers.refreshes) == 1


async def test_expired_without_refresh_token_asks_for_login(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored("expired-access", expires_at=time.time() - 10, refresh=None))
    with pytest.raises(LoginRequired, match="no refresh token; run `subagent login srv`"):
        await get(SessionAuth(SPEC, store), Servers())


async def test_rejected_token_is_refreshed_once_then_retried(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    # No expiry known: the token looks valid until the server says otherwise.
    store.save("srv", stored("revoked-access", expires_at=None))
    servers = Servers()
    assert await get(SessionAuth(SPEC, store), servers) == 200
    assert servers.seen_bearers == ["Bearer revoked-access", "Bearer fresh-access-1"]
    assert len(servers.refreshes) == 1


async def test_two_sessions_with_an_expired_token_refresh_once(tmp_path: Path) -> None:
    TokenStore(tmp_path).save("srv", stored("expired-access", expires_at=time.time() - 10))
    servers = Servers(delay_s=0.3)  # the second waits on the lock while the first refreshes
    statuses: list[int] = []

    async def one_session() -> None:
        # Each its own store object and provider: they share only the files, like processes.
        statuses.append(await get(SessionAuth(SPEC, TokenStore(tmp_path)), servers))

    async with anyio.create_task_group() as tg:
        tg.start_soon(one_session)
        tg.start_soon(one_session)
    assert statuses == [200, 200]
    assert len(servers.refreshes) == 1
    assert servers.seen_bearers == ["Bearer fresh-access-1", "Bearer fresh-access-1"]


async def test_learned_tokens_are_masked(tmp_path: Path) -> None:
    mask = LiveMask()  # made before any token is known, like a session's
    store = TokenStore(tmp_path)
    store.save("srv", stored("expired-access-xyz", expires_at=time.time() - 10))
    await get(SessionAuth(SPEC, store), Servers())
    text = "old expired-access-xyz new fresh-access-1 refresh the-refresh"
    assert mask.text(text) == "old **** new **** refresh ****"


def test_precedence_header_then_env_then_stored(tmp_path: Path) -> None:
    store = TokenStore(tmp_path)
    with_header = ServerSpec(
        name="srv", type="http", url=URL, auth="oauth", headers={"authorization": "Bearer h"}
    )
    headers, auth = session_auth(with_header, store, {"SUBAGENT_TOKEN_SRV": "env-token"})
    assert auth is None and headers == {"authorization": "Bearer h"}
    headers, auth = session_auth(SPEC, store, {"SUBAGENT_TOKEN_SRV": "env-token"})
    assert auth is None and headers == {"Authorization": "Bearer env-token"}
    headers, auth = session_auth(SPEC, store, {})
    assert isinstance(auth, SessionAuth) and headers == {}
    plain = ServerSpec(name="srv", type="http", url=URL)
    headers, auth = session_auth(plain, store, {"SUBAGENT_TOKEN_SRV": "env-token"})
    assert auth is None and headers == {}
    assert json.dumps(headers) == "{}"
