"""An in-memory OAuth 2.1 authorization server that approves every request at once.

It implements the SDK's `OAuthAuthorizationServerProvider`: dynamic client registration,
PKCE codes, access tokens bound to one resource (RFC 8707) with a short lifetime, rotating
refresh tokens. There is no consent page: `/authorize` redirects straight back to the
client's loopback `redirect_uri`, so an HTTP client following redirects plays the browser.
Tests read its counters and every secret it ever issued, to grep for leaks.
"""

from __future__ import annotations

import math
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

CODE_TTL_S = 300.0
"""An authorization code outlives the slowest test's redirect hop by far."""


def _secret(prefix: str) -> str:
    # A recognisable prefix lets a leak search tell the kinds apart; 32 random bytes each.
    return f"{prefix}_{secrets.token_urlsafe(32)}"


@dataclass
class Counters:
    """What the token endpoint did, for tests that prove who refreshed how often."""

    registrations: int = 0
    grants: int = 0
    """Every access token issued (code, refresh or minted); numbers each token."""
    code_grants: int = 0
    refresh_grants: int = 0
    refresh_refused: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


@dataclass
class AutoApproveProvider:
    """The provider: every authorization is granted, every secret is remembered."""

    access_ttl_s: float
    resource: str
    refresh_delay_s: float = 0.0
    """The token endpoint sits on each refresh this long: overlapping refreshes overlap."""
    counters: Counters = field(default_factory=Counters)
    issued: list[str] = field(default_factory=list)
    """Every token, code and client secret handed out, in order."""
    clients: dict[str, OAuthClientInformationFull] = field(default_factory=dict)
    codes: dict[str, AuthorizationCode] = field(default_factory=dict)
    access: dict[str, AccessToken] = field(default_factory=dict)
    refresh: dict[str, RefreshToken] = field(default_factory=dict)

    def _issue(self, prefix: str) -> str:
        value = _secret(prefix)
        self.issued.append(value)
        return value

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        if client_info.client_secret:
            self.issued.append(client_info.client_secret)
        self.clients[str(client_info.client_id)] = client_info
        self.counters.registrations += 1

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = self._issue("code")
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + CODE_TTL_S,
            client_id=str(client.client_id),
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="tester",
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        found = self.codes.get(authorization_code)
        return found if found and found.client_id == client.client_id else None

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(authorization_code.code, None)
        self.counters.code_grants += 1
        return self._grant(
            str(client.client_id), authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        found = self.refresh.get(refresh_token)
        if found is None or found.client_id != client.client_id:
            self.counters.refresh_refused += 1
            return None
        return found

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if self.refresh_delay_s > 0:
            await anyio.sleep(self.refresh_delay_s)
        if self.refresh.pop(refresh_token.token, None) is None:
            self.counters.refresh_refused += 1
            raise TokenError(error="invalid_grant", error_description="refresh token revoked")
        self.counters.refresh_grants += 1
        # Rotation (OAuth 2.1): the old refresh token is spent, a new pair is issued.
        return self._grant(
            str(client.client_id), scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at <= time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    async def exchange_identity_assertion(self, client: Any, params: Any) -> OAuthToken:
        raise TokenError(error="unsupported_grant_type", error_description="not supported")

    def _grant(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = self._issue("at"), self._issue("rt")
        expires_at = time.time() + self.access_ttl_s
        self.counters.grants += 1
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            # Rounded up: the token lives at least its lifetime, never a moment less.
            expires_at=math.ceil(expires_at),
            resource=resource,
            subject="tester",
            # Its serial number: `whoami` shows it, so a test sees which grant a call used.
            claims={"grant": self.counters.grants},
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh,
            client_id=client_id,
            scopes=scopes,
            resource=resource,
            subject="tester",
        )
        return OAuthToken(
            access_token=access,
            expires_in=max(1, int(self.access_ttl_s)),
            scope=" ".join(scopes) or None,
            refresh_token=refresh,
        )

    def mint(self, client_id: str, scopes: list[str]) -> str:
        """An access token issued out of band (a CI secret), for `client_id`, bound to the
        resource; it lives `access_ttl_s` like any other."""
        return self._grant(client_id, scopes, self.resource).access_token

    def revoke_refresh_tokens(self) -> int:
        """Forget every live refresh token (the test's "the user revoked access"); how many."""
        count = len(self.refresh)
        self.refresh.clear()
        return count

    def expire_access_tokens(self) -> int:
        """Make every live access token expired now; how many."""
        for token in self.access.values():
            token.expires_at = int(time.time()) - 1
        return len(self.access)
