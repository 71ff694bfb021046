"""Session-side OAuth: stored tokens only, refreshed under the store lock, never a browser.

`SessionAuth` is an SDK `OAuthClientProvider` whose flow never authorizes: with no
usable token (no login, a failed refresh, a rejected token) it records why and raises
`LoginRequired`, and the connection fails the server with "run `subagent login NAME`".
Precedence (`session_auth`): an `Authorization` header in mcp.json, then
`SUBAGENT_TOKEN_<NAME>`, then the stored login.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import NoReturn

import anyio
import httpx2
from mcp.client.auth.utils import (
    extract_field_from_www_auth,
    extract_scope_from_www_auth,
    union_scopes,
)
from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import ValidationError

from launcher.auth.tokens import StoredAuth, TokenStore, env_token
from launcher.bridge.auth.flow import FailureRecording
from launcher.bridge.auth.storage import StoreStorage, stored_metadata
from launcher.config.types import ServerSpec
from launcher.errors import AuthError
from launcher.secrets import note_secrets

EXPIRY_MARGIN_S = 5.0
"""A token expiring within this is refreshed before use: it would die in flight otherwise
(at most a quarter of the token's lifetime, for short-lived tokens)."""
REFRESH_LOCK_TIMEOUT_S = 30.0
"""How long a session waits for another process's refresh of the same server's token."""
_ERROR_CODE = re.compile(r"[a-z_]{1,64}")
"""What an OAuth error code looks like; anything else in its place is not shown."""
SESSION_REDIRECT_URI = "http://127.0.0.1/callback"
"""Placeholder redirect URI of the session provider: it never authorizes, so never sends it."""


def login_hint(name: str, reason: str) -> str:
    """The failure text of a server that needs an interactive login."""
    return f"{reason}; run `subagent login {name}`"


class LoginRequired(AuthError):
    """A session found no usable token for a server: only `subagent login` can help."""


def has_authorization_header(headers: Mapping[str, str]) -> bool:
    """Whether `headers` (from mcp.json) already authenticate the server."""
    return any(key.lower() == "authorization" for key in headers)


def session_auth(
    spec: ServerSpec, store: TokenStore, env: Mapping[str, str]
) -> tuple[dict[str, str], httpx2.Auth | None]:
    """Headers and auth for a session's connection to `spec`, by precedence.

    An `Authorization` header in mcp.json wins, then `SUBAGENT_TOKEN_<NAME>`, then the
    stored login (refreshed as needed). A server without `"auth": "oauth"` gets its
    headers as written.
    """
    headers = dict(spec.headers)
    if spec.auth != "oauth" or has_authorization_header(headers):
        return headers, None
    token = env_token(spec.name, env)
    if token is not None:
        note_secrets([token])
        headers["Authorization"] = f"Bearer {token}"
        return headers, None
    if spec.oauth is not None and spec.oauth.grant_type == "client_credentials":
        from launcher.bridge.auth.machine import machine_auth

        return headers, machine_auth(spec, store)
    return headers, SessionAuth(spec, store)


class SessionAuth(FailureRecording):
    """Non-interactive OAuth for a session: stored tokens, refresh under the store lock."""

    def __init__(
        self, spec: ServerSpec, store: TokenStore, *, expiry_margin_s: float = EXPIRY_MARGIN_S
    ) -> None:
        self.name = spec.name
        self.expiry_margin_s = expiry_margin_s
        self.store = store
        self.storage = StoreStorage(store, spec.name)
        metadata = OAuthClientMetadata(redirect_uris=[SESSION_REDIRECT_URI])  # type: ignore[list-item]
        super().__init__(spec.url or "", metadata, self.storage)
        self._mutex = anyio.Lock()

    def _fail(self, reason: str) -> NoReturn:
        exc = LoginRequired(login_hint(self.name, reason))
        self._record_failure(exc)
        raise exc

    def _reload(self) -> StoredAuth | None:
        """Take the stored record as current (another session may have refreshed it)."""
        auth = self.storage.record()
        ctx = self.context
        if auth is None or auth.access_token is None:
            ctx.clear_tokens()
            return auth
        ctx.current_tokens = None
        ctx.token_expiry_time = auth.expires_at
        ctx.client_info = None
        token_fields = {k: v for k, v in auth.tokens.items() if k != "expires_at"}
        try:
            ctx.current_tokens = OAuthToken.model_validate(token_fields)
            if auth.client_info is not None:
                ctx.client_info = OAuthClientInformationFull.model_validate(auth.client_info)
        except ValidationError:
            ctx.clear_tokens()
            self._fail("the stored login is unreadable")
        oauth, resource = stored_metadata(auth)
        ctx.oauth_metadata = oauth or ctx.oauth_metadata
        ctx.protected_resource_metadata = resource or ctx.protected_resource_metadata
        return auth

    def _expiring(self) -> bool:
        ctx = self.context
        if ctx.current_tokens is None:
            return True
        expiry = ctx.token_expiry_time
        if expiry is None:
            return False
        # A short-lived token gets a proportionally short margin, or it would never be used.
        lifetime = ctx.current_tokens.expires_in
        most = self.expiry_margin_s
        margin = min(most, lifetime / 4) if lifetime else most
        return time.time() + margin >= expiry

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        """This process's refreshes one at a time, and across processes via the store's flock.

        The flock is polled from the event loop (never a blocking wait in a thread), so a
        cancelled session leaves at once and never holds the lock it was waiting for.
        """
        async with self._mutex, AsyncExitStack() as stack:
            try:
                await stack.enter_async_context(
                    self.store.lock_async(self.name, timeout_s=REFRESH_LOCK_TIMEOUT_S)
                )
            except TimeoutError:
                self._fail("another process held the token lock too long")
            yield

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        if self.failure is not None:
            raise LoginRequired(self.failure)
        if not self._initialized:
            self._reload()
            self._initialized = True
            if self.context.current_tokens is None:
                self._fail("not logged in")
        self.context.protocol_version = request.headers.get("mcp-protocol-version")
        if self._expiring():
            async with self._locked():
                self._reload()
                if self._expiring():
                    response = yield await self._refresh_request("the access token expired")
                    await self._take_refresh(response)
        sent = self._bearer()
        self._add_auth_header(request)
        response = yield request
        rejected = response.status_code == 401 or (
            response.status_code == 403
            and extract_field_from_www_auth(response, "error") == "insufficient_scope"
        )
        if not rejected:
            return
        if response.status_code == 403:
            self._fail(self._step_up(response))
        # Revoked, or expired early: refresh once (unless another session already did).
        async with self._locked():
            self._reload()
            if self._bearer() == sent:
                refresh = yield await self._refresh_request("the server rejected the stored token")
                await self._take_refresh(refresh)
        self._add_auth_header(request)
        response = yield request
        if response.status_code == 401:
            self._fail("the server rejected the refreshed token")

    def _step_up(self, response: httpx2.Response) -> str:
        """Keep the scopes a 403 asked for, so the next login requests them too."""
        tokens = self.context.current_tokens
        wanted = union_scopes(
            tokens.scope if tokens is not None else None, extract_scope_from_www_auth(response)
        )
        auth = self.store.load(self.name)
        if auth is not None and wanted:
            auth.metadata["step_up_scope"] = wanted
            self.store.save(self.name, auth)
        shown = f" ({wanted})" if wanted else ""
        return f"the server asks for more scopes{shown} than the login granted"

    def _bearer(self) -> str | None:
        tokens = self.context.current_tokens
        return tokens.access_token if tokens is not None else None

    async def _refresh_request(self, reason: str) -> httpx2.Request:
        if self.context.current_tokens is None:
            self._fail("not logged in (the stored login is gone)")
        if not self.context.can_refresh_token():
            self._fail(f"{reason} and there is no refresh token")
        return await self._refresh_token()

    async def _take_refresh(self, response: httpx2.Response) -> None:
        if not await self._handle_refresh_response(response):
            self._fail(
                f"token refresh failed (HTTP {response.status_code}{await _oauth_error(response)})"
            )


async def _oauth_error(response: httpx2.Response) -> str:
    """` invalid_grant`: the OAuth error code of a failed token response, if it names one.

    Only the code (RFC 6749 section 5.2: a short ASCII word), never the rest of the body.
    """
    try:
        body = json.loads(await response.aread())
    except (httpx2.HTTPError, ValueError):
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, str) and _ERROR_CODE.fullmatch(error):
        return f" {error}"
    return ""
