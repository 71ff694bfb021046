"""SessionAuth: stored tokens only, refresh under the store lock, a login hint instead of a browser.

The resource server and token endpoint are a small loopback HTTP server: what is under
test is the client's decisions (when to refresh, what to store, what to say), over the
real SDK provider, a real socket and the real token files.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import anyio
import httpx2
import pytest

from launcher.auth.tokens import StoredAuth, TokenStore
from launcher.bridge.auth.session import LoginRequired, SessionAuth, session_auth
from launcher.config.types import OAuthSettings, ServerSpec
from launcher.secrets import LiveMask

pytestmark = pytest.mark.anyio

URL = "http://127.0.0.1:9/mcp"
"""A server URL for the precedence test, which sends nothing."""
HTTP_TIMEOUT_S = 10.0
"""Bounds each request to the loopback test server."""


class Servers:
    """A resource server accepting `valid` bearer tokens and a token endpoint issuing them.

    Served on a real loopback socket (one thread per request, so a slow refresh does not
    hold the other session's request).
    """

    def __init__(self, *, refresh_ok: bool = True, delay_s: float = 0.0) -> None:
        self.valid = {"good-access"}
        self.refresh_ok = refresh_ok
        self.delay_s = delay_s
        self.refreshes: list[dict[str, str]] = []
        self.seen_bearers: list[str | None] = []
        self._lock = threading.Lock()

    def handle(
        self, path: str, bearer: str | None, body: bytes
    ) -> tuple[int, dict[str, str], dict]:
        if path == "/token":
            with self._lock:
                self.refreshes.append({k: v[0] for k, v in parse_qs(body.decode()).items()})
                count = len(self.refreshes)
            time.sleep(self.delay_s)
            if not self.refresh_ok:
                return 400, {}, {"error": "invalid_grant", "error_description": "revoked"}
            new = f"fresh-access-{count}"
            self.valid.add(new)
            return 200, {}, {"access_token": new, "token_type": "Bearer", "expires_in": 3600}
        with self._lock:
            self.seen_bearers.append(bearer)
        if bearer and bearer.removeprefix("Bearer ") in self.valid:
            return 200, {}, {"ok": True}
        return 401, {"WWW-Authenticate": 'Bearer error="invalid_token"'}, {}


@pytest.fixture
def servers() -> Iterator[Servers]:
    state = Servers()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            status, headers, body = state.handle(
                self.path, self.headers.get("authorization"), self.rfile.read(length)
            )
            data = json.dumps(body).encode()
            self.send_response(status)
            for key, value in {**headers, "Content-Type": "application/json"}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    state.url, state.token_url = f"{base}/mcp", f"{base}/token"  # type: ignore[attr-defined]
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


def spec_for(servers: Servers) -> ServerSpec:
    url: str = servers.url  # type: ignore[attr-defined]
    return ServerSpec(name="srv", type="http", url=url, auth="oauth", oauth=OAuthSettings())


def stored(
    servers: Servers, access: str, *, expires_at: float | None, refresh: str | None = "the-refresh"
) -> StoredAuth:
    tokens: dict[str, object] = {"access_token": access, "token_type": "Bearer", "scope": "s"}
    if refresh:
        tokens["refresh_token"] = refresh
    if expires_at is not None:
        tokens["expires_at"] = expires_at
    as_metadata = {
        "issuer": "http://as.test",
        "authorization_endpoint": "http://as.test/authorize",
        "token_endpoint": servers.token_url,  # type: ignore[attr-defined]
    }
    return StoredAuth(
        tokens=tokens,
        client_info={"client_id": "cid", "token_endpoint_auth_method": "none"},
        metadata={"oauth_metadata": as_metadata, "resource_metadata": None},
    )


async def get(auth: SessionAuth, servers: Servers) -> int:
    async with httpx2.AsyncClient(auth=auth, timeout=HTTP_TIMEOUT_S) as client:
        return (await client.get(servers.url)).status_code  # type: ignore[attr-defined]


async def test_no_login_fails_with_the_login_hint(tmp_path: Path, servers: Servers) -> None:
    auth = SessionAuth(spec_for(servers), TokenStore(tmp_path))
    with pytest.raises(LoginRequired) as info:
        await get(auth, servers)
    assert str(info.value) == "not logged in; run `subagent login srv`"
    assert auth.failure == str(info.value)
    assert servers.seen_bearers == []  # nothing was sent without a token


async def test_unreadable_stored_login_asks_for_login(tmp_path: Path, servers: Servers) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", StoredAuth(tokens={"access_token": "a", "token_type": "MAC"}))
    with pytest.raises(LoginRequired, match="unreadable; run `subagent login srv`"):
        await get(SessionAuth(spec_for(servers), store), servers)


async def test_valid_token_is_sent_without_refresh(tmp_path: Path, servers: Servers) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored(servers, "good-access", expires_at=time.time() + 3600))
    assert await get(SessionAuth(spec_for(servers), store), servers) == 200
    assert servers.seen_bearers == ["Bearer good-access"]
    assert servers.refreshes == []


async def test_expired_token_is_refreshed_and_stored(tmp_path: Path, servers: Servers) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored(servers, "expired-access", expires_at=time.time() - 10))
    assert await get(SessionAuth(spec_for(servers), store), servers) == 200
    assert [r["grant_type"] for r in servers.refreshes] == ["refresh_token"]
    assert servers.refreshes[0]["refresh_token"] == "the-refresh"
    assert servers.seen_bearers == ["Bearer fresh-access-1"]
    saved = store.load("srv")
    assert saved is not None and saved.access_token == "fresh-access-1"
    assert saved.refresh_token == "the-refresh"  # not rotated: kept
    assert saved.expires_at is not None and saved.expires_at > time.time() + 3000


async def test_revoked_refresh_token_fails_with_the_login_hint(
    tmp_path: Path, servers: Servers
) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored(servers, "expired-access", expires_at=time.time() - 10))
    servers.refresh_ok = False
    auth = SessionAuth(spec_for(servers), store)
    with pytest.raises(LoginRequired) as info:
        await get(auth, servers)
    assert str(info.value) == (
        "token refresh failed (HTTP 400 invalid_grant); run `subagent login srv`"
    )
    # Later requests fail at once, without another refresh attempt.
    with pytest.raises(LoginRequired):
        await get(auth, servers)
    assert len(servers.refreshes) == 1


async def test_short_lived_token_gets_a_proportional_margin(
    tmp_path: Path, servers: Servers
) -> None:
    # Scaled up so no test delay can matter: a 400 s token, 300 s left, a 1000 s margin.
    store = TokenStore(tmp_path)
    record = stored(servers, "good-access", expires_at=time.time() + 300)
    record.tokens["expires_in"] = 400  # a quarter of it (100 s) applies, not the 1000 s
    store.save("srv", record)
    auth = SessionAuth(spec_for(servers), store, expiry_margin_s=1000.0)
    assert await get(auth, servers) == 200
    assert servers.refreshes == []


async def test_token_inside_the_margin_is_refreshed_first(tmp_path: Path, servers: Servers) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored(servers, "good-access", expires_at=time.time() + 2))
    assert await get(SessionAuth(spec_for(servers), store), servers) == 200
    assert len(servers.refreshes) == 1
    assert servers.seen_bearers == ["Bearer fresh-access-1"]


async def test_expired_without_refresh_token_asks_for_login(
    tmp_path: Path, servers: Servers
) -> None:
    store = TokenStore(tmp_path)
    store.save("srv", stored(servers, "expired-access", expires_at=time.time() - 10, refresh=None))
    with pytest.raises(LoginRequired, match="no refresh token; run `subagent login srv`"):
        await get(SessionAuth(spec_for(servers), store), servers)


async def test_rejected_token_is_refreshed_once_then_retried(
    tmp_path: Path, servers: Servers
) -> None:
    store = TokenStore(tmp_path)
    # No expiry known: the token looks valid until the server says otherwise.
    store.save("srv", stored(servers, "revoked-access", expires_at=None))
    assert await get(SessionAuth(spec_for(servers), store), servers) == 200
    assert servers.seen_bearers == ["Bearer revoked-access", "Bearer fresh-access-1"]
    assert len(servers.refreshes) == 1


async def test_two_sessions_with_an_expired_token_refresh_once(
    tmp_path: Path, servers: Servers
) -> None:
    TokenStore(tmp_path).save("srv", stored(servers, "expired-access", expires_at=time.time() - 10))
    servers.delay_s = 0.3  # the second waits on the lock while the first refreshes
    statuses: list[int] = []

    async def one_session() -> None:
        # Each its own store object and provider: they share only the files, like processes.
        statuses.append(await get(SessionAuth(spec_for(servers), TokenStore(tmp_path)), servers))

    async with anyio.create_task_group() as tg:
        tg.start_soon(one_session)
        tg.start_soon(one_session)
    assert statuses == [200, 200]
    assert len(servers.refreshes) == 1
    assert servers.seen_bearers == ["Bearer fresh-access-1", "Bearer fresh-access-1"]


async def test_learned_tokens_are_masked(tmp_path: Path, servers: Servers) -> None:
    mask = LiveMask()  # made before any token is known, like a session's
    store = TokenStore(tmp_path)
    store.save("srv", stored(servers, "expired-access-xyz", expires_at=time.time() - 10))
    await get(SessionAuth(spec_for(servers), store), servers)
    text = "old expired-access-xyz new fresh-access-1 refresh the-refresh"
    assert mask.text(text) == "old **** new **** refresh ****"


def test_precedence_header_then_env_then_stored(tmp_path: Path) -> None:
    spec = ServerSpec(name="srv", type="http", url=URL, auth="oauth", oauth=OAuthSettings())
    store = TokenStore(tmp_path)
    with_header = ServerSpec(
        name="srv", type="http", url=URL, auth="oauth", headers={"authorization": "Bearer h"}
    )
    headers, auth = session_auth(with_header, store, {"SUBAGENT_TOKEN_SRV": "env-token"})
    assert auth is None and headers == {"authorization": "Bearer h"}
    headers, auth = session_auth(spec, store, {"SUBAGENT_TOKEN_SRV": "env-token"})
    assert auth is None and headers == {"Authorization": "Bearer env-token"}
    headers, auth = session_auth(spec, store, {})
    assert isinstance(auth, SessionAuth) and headers == {}
    plain = ServerSpec(name="srv", type="http", url=URL)
    headers, auth = session_auth(plain, store, {"SUBAGENT_TOKEN_SRV": "env-token"})
    assert auth is None and headers == {}
    assert json.dumps(headers) == "{}"
