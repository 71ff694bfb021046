"""The OAuth fields of an HTTP server in `mcp.json` (`"auth": "oauth"` and its options).

A mixin of the server parser (servers.py): it uses the parser's `error`, `string`,
`secrets` and `name`, so the errors name file, line and field like every other field's.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from launcher.config.types import OAuthSettings

if TYPE_CHECKING:
    from launcher.errors import ConfigError

OAUTH_FIELDS = frozenset(
    {
        "client_id",
        "client_secret",
        "scopes",
        "client_metadata_url",
        "grant_type",
        "private_key",
        "signing_algorithm",
    }
)
_GRANT_TYPES = ("authorization_code", "client_credentials")
_SIGNING_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""Asymmetric JWT algorithms for a `private_key_jwt` assertion (RFC 7523)."""


def _is_metadata_url(url: str) -> bool:
    """An https URL with a non-root path: what a client ID metadata document URL must be."""
    parsed = urlparse(url)
    return parsed.scheme == "https" and bool(parsed.netloc) and parsed.path not in ("", "/")


class OAuthFields:
    """Parses the OAuth fields of one server entry (mixed into the server parser)."""

    name: str
    secrets: set[str]

    if TYPE_CHECKING:  # provided by the server parser

        def error(self, message: str, *keys: str, field: str) -> ConfigError: ...

        def string(
            self, raw: dict[str, Any], key: str, *, required: bool = False
        ) -> str | None: ...

    def oauth(self, raw: dict[str, Any]) -> OAuthSettings | None:
        """The `auth` field and its options; the options alone are a mistake, not ignored."""
        kind = raw.get("auth")
        if kind is None:
            stray = next((key for key in raw if key in OAUTH_FIELDS), None)
            if stray is not None:
                raise self.error(
                    f'\'{stray}\' applies only with "auth": "oauth"',
                    stray,
                    field=f"{self.name}.{stray}",
                )
            return None
        if kind != "oauth":
            raise self.error(
                f'expected "auth": "oauth", got {json.dumps(kind)}',
                "auth",
                field=f"{self.name}.auth",
            )
        metadata_url = self.nonempty(raw, "client_metadata_url")
        if metadata_url is not None and not _is_metadata_url(metadata_url):
            raise self.error(
                "expected an https:// URL with a path (the client ID metadata document)",
                "client_metadata_url",
                field=f"{self.name}.client_metadata_url",
            )
        client_secret = self.nonempty(raw, "client_secret")
        client_id = self.nonempty(raw, "client_id")
        if client_secret is not None and client_id is None:
            raise self.error(
                "'client_secret' needs 'client_id'",
                "client_secret",
                field=f"{self.name}.client_secret",
            )
        if client_secret is not None:
            # Always a credential, even when written literally into the file.
            self.secrets.add(client_secret)
        grant = raw.get("grant_type", "authorization_code")
        if grant not in _GRANT_TYPES:
            raise self.error(
                f"expected one of {', '.join(_GRANT_TYPES)}, got {json.dumps(grant)}",
                "grant_type",
                field=f"{self.name}.grant_type",
            )
        private_key = self.nonempty(raw, "private_key")
        if private_key is not None:
            self.secrets.add(private_key)
        algorithm = self.nonempty(raw, "signing_algorithm") or "RS256"
        if algorithm not in _SIGNING_ALGORITHMS:
            raise self.error(
                f"expected one of {', '.join(_SIGNING_ALGORITHMS)}, got {json.dumps(algorithm)}",
                "signing_algorithm",
                field=f"{self.name}.signing_algorithm",
            )
        for key, given in (
            ("private_key", private_key),
            ("signing_algorithm", raw.get("signing_algorithm")),
        ):
            if given is not None and grant != "client_credentials":
                raise self.error(
                    f'\'{key}\' applies only with "grant_type": "client_credentials"',
                    key,
                    field=f"{self.name}.{key}",
                )
        if grant == "client_credentials" and (
            client_id is None or (client_secret is None) == (private_key is None)
        ):
            raise self.error(
                "the client_credentials grant needs 'client_id' and one of 'client_secret' "
                "or 'private_key'",
                "grant_type",
                field=f"{self.name}.grant_type",
            )
        return OAuthSettings(
            private_key=private_key,
            signing_algorithm=algorithm,
            grant_type=grant,
            client_id=client_id,
            client_secret=client_secret,
            scopes=self.scopes(raw),
            client_metadata_url=metadata_url,
        )

    def nonempty(self, raw: dict[str, Any], key: str) -> str | None:
        """An optional string field that, when present, must say something."""
        value = self.string(raw, key)
        if value is not None and not value.strip():
            raise self.error("expected a non-empty string", key, field=f"{self.name}.{key}")
        return value

    def scopes(self, raw: dict[str, Any]) -> tuple[str, ...]:
        """`scopes`: a list of scope strings, or one space-separated string."""
        value = raw.get("scopes", [])
        if isinstance(value, str):
            value = value.split()
        if not isinstance(value, list) or not all(
            isinstance(item, str) and item and not any(c.isspace() for c in item) for item in value
        ):
            raise self.error(
                "expected a list of scope names (strings without spaces)",
                "scopes",
                field=f"{self.name}.scopes",
            )
        return tuple(value)
