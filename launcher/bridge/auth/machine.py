"""OAuth for a machine client: the client_credentials grant, on the SDK's providers.

A server with `"grant_type": "client_credentials"` needs no login: the session itself
gets a token with the configured client — authenticated by `client_secret`, or by a JWT
assertion signed with `private_key` (RFC 7523 `private_key_jwt`) — through the SDK's
`ClientCredentialsOAuthProvider` / `PrivateKeyJWTOAuthProvider` (discovery, token
request, `resource` indicator), and keeps it in the TokenStore so later sessions reuse
it until it expires or is rejected.
"""

from __future__ import annotations

import warnings

from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)

from launcher.auth.tokens import TokenStore
from launcher.bridge.auth.flow import FailureRecording
from launcher.bridge.auth.storage import StoreStorage, stored_metadata
from launcher.config.types import ServerSpec


class _Machine(FailureRecording):
    """What both machine providers add: the stored expiry, and the first failure kept."""

    name: str
    storage: StoreStorage

    async def _initialize(self) -> None:
        await super()._initialize()
        auth = self.storage.record()
        if auth is not None:
            # The SDK does not keep the expiry: without it an expired token is sent once more.
            self.context.token_expiry_time = auth.expires_at
            oauth, resource = stored_metadata(auth)
            self.context.oauth_metadata = self.context.oauth_metadata or oauth
            if self.context.protected_resource_metadata is None:
                self.context.protected_resource_metadata = resource

    def _describe_failure(self, exc: BaseException) -> str:
        return f"client_credentials token request failed: {exc}"


class SecretMachineAuth(_Machine, ClientCredentialsOAuthProvider):
    """client_credentials with client_id + client_secret (HTTP Basic at the token endpoint)."""


class JwtMachineAuth(_Machine, PrivateKeyJWTOAuthProvider):
    """client_credentials authenticated by a JWT assertion signed with the client's key."""


MachineAuth = SecretMachineAuth | JwtMachineAuth


def machine_auth(spec: ServerSpec, store: TokenStore) -> MachineAuth:
    """The machine provider for `spec` (a client_credentials server), tokens in `store`."""
    settings = spec.oauth
    assert settings is not None and settings.client_id is not None
    scope = " ".join(settings.scopes) or None
    storage = StoreStorage(store, spec.name)
    provider: MachineAuth
    with warnings.catch_warnings():
        # No `issuer` binding is configured (mcp.json has no field for it); the SDK warns
        # that it will require one, which would land on the user's terminal mid-session.
        warnings.simplefilter("ignore")
        if settings.private_key is not None:
            signer = SignedJWTParameters(
                issuer=settings.client_id,
                subject=settings.client_id,
                signing_key=settings.private_key,
                signing_algorithm=settings.signing_algorithm,
            )
            provider = JwtMachineAuth(
                spec.url or "",
                storage,
                client_id=settings.client_id,
                assertion_provider=signer.create_assertion_provider(),
                scope=scope,
            )
        else:
            assert settings.client_secret is not None
            provider = SecretMachineAuth(
                spec.url or "",
                storage,
                client_id=settings.client_id,
                client_secret=settings.client_secret,
                scope=scope,
            )
    provider.name = spec.name
    provider.storage = storage
    return provider
