"""The SDK's `TokenStorage` over the launcher's TokenStore, for one server.

Every token and client secret it reads or writes is registered with the secret mask
(`note_secrets`) before anything else can print it. The token file also keeps the
discovered metadata (`oauth_metadata`, `resource_metadata`), so a later session can
refresh at the right token endpoint, with the right `resource`, without rediscovery.
"""

from __future__ import annotations

import time
from typing import Any

from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import ValidationError

from launcher.auth.tokens import StoredAuth, TokenStore
from launcher.secrets import note_secrets


class StoreStorage:
    """SDK `TokenStorage` for `server`, backed by one file of a TokenStore."""

    def __init__(self, store: TokenStore, server: str) -> None:
        self.store = store
        self.server = server

    def record(self) -> StoredAuth | None:
        """The stored record, its secrets registered with the mask."""
        auth = self.store.load(self.server)
        if auth is not None:
            note_secrets(auth.secrets())
        return auth

    async def get_tokens(self) -> OAuthToken | None:
        """The stored token response, if it holds an access token."""
        auth = self.record()
        if auth is None or auth.access_token is None:
            return None
        fields = {k: v for k, v in auth.tokens.items() if k != "expires_at"}
        try:
            return OAuthToken.model_validate(fields)
        except ValidationError:
            return None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        """Save a token response with its absolute expiry (`expires_at`)."""
        data: dict[str, Any] = tokens.model_dump(mode="json", exclude_none=True)
        if tokens.expires_in is not None:
            data["expires_at"] = time.time() + int(tokens.expires_in)
        auth = self.store.load(self.server) or StoredAuth(tokens={})
        auth.tokens = data
        note_secrets(auth.secrets())
        self.store.save(self.server, auth)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        """The stored client registration."""
        auth = self.record()
        if auth is None or auth.client_info is None:
            return None
        try:
            return OAuthClientInformationFull.model_validate(auth.client_info)
        except ValidationError:
            return None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        """Save the client registration (before any token exists, during a login)."""
        auth = self.store.load(self.server) or StoredAuth(tokens={})
        auth.client_info = client_info.model_dump(mode="json", exclude_none=True)
        note_secrets(auth.secrets())
        self.store.save(self.server, auth)

    def save_metadata(
        self, oauth: OAuthMetadata | None, resource: ProtectedResourceMetadata | None
    ) -> None:
        """Keep what discovery found, for refreshes in later sessions."""
        auth = self.store.load(self.server)
        if auth is None:
            return
        auth.metadata = {
            "oauth_metadata": oauth.model_dump(mode="json", exclude_none=True) if oauth else None,
            "resource_metadata": (
                resource.model_dump(mode="json", exclude_none=True) if resource else None
            ),
        }
        self.store.save(self.server, auth)


def stored_metadata(
    auth: StoredAuth,
) -> tuple[OAuthMetadata | None, ProtectedResourceMetadata | None]:
    """The discovery results a login kept (None where absent or no longer valid)."""
    oauth_raw = auth.metadata.get("oauth_metadata")
    resource_raw = auth.metadata.get("resource_metadata")
    try:
        oauth = OAuthMetadata.model_validate(oauth_raw) if isinstance(oauth_raw, dict) else None
    except ValidationError:
        oauth = None
    try:
        resource = (
            ProtectedResourceMetadata.model_validate(resource_raw)
            if isinstance(resource_raw, dict)
            else None
        )
    except ValidationError:
        resource = None
    return oauth, resource
