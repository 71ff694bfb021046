"""OAuth for a machine client: the client_credentials grant, on the SDK's provider.

A server with `"grant_type": "client_credentials"` needs no login: the session itself
gets a token with the configured client_id and client_secret (discovery, token request,
`resource` indicator: all the SDK's `ClientCredentialsOAuthProvider`), and keeps it in
the TokenStore so later sessions reuse it until it expires or is rejected.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncGenerator

import httpx2
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

from launcher.auth.tokens import TokenStore
from launcher.bridge.oauth_store import StoreStorage, stored_metadata
from launcher.config.types import ServerSpec


class MachineAuth(ClientCredentialsOAuthProvider):
    """client_credentials for one server, tokens cached in the TokenStore."""

    def __init__(self, spec: ServerSpec, store: TokenStore) -> None:
        settings = spec.oauth
        assert settings is not None and settings.client_id and settings.client_secret
        self.name = spec.name
        self.storage = StoreStorage(store, spec.name)
        with warnings.catch_warnings():
            # No `issuer` binding is configured (mcp.json has no field for it); the SDK warns
            # that it will require one, which would land on the user's terminal mid-session.
            warnings.simplefilter("ignore")
            super().__init__(
                spec.url or "",
                self.storage,
                client_id=settings.client_id,
                client_secret=settings.client_secret,
                scope=" ".join(settings.scopes) or None,
            )
        self.failure: str | None = None
        """Why no token could be had, once known: the connection reports this text."""
        self.failure_exc: BaseException | None = None

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

    async def _auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = super()._auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                outgoing = await flow.asend(response)
        except StopAsyncIteration:
            return
        except Exception as exc:
            self.failure_exc = self.failure_exc or exc
            self.failure = f"client_credentials token request failed: {exc}"
            raise
        finally:
            await flow.aclose()
