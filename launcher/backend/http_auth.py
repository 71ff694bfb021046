"""Bearer-token verifiers for `serve --http`, as the SDK's TokenVerifier: static tokens by
caller, or JWTs from one OAuth issuer (serve as a resource server).

A JWT is accepted when its signature checks against a key of the issuer's JWKS (an
asymmetric algorithm: never `none`, never an HMAC secret anyone could guess from the
JWKS), its `iss` is the issuer, its `aud` names serve's resource URL, it has not
expired, and it has a `sub`: the caller. The JWKS comes from the issuer's metadata
(RFC 8414, else OpenID discovery) on first use, and again when a token names a key id
it lacks (at most once every JWKS_REFRESH_MIN_S).
"""

from __future__ import annotations

import logging
import time
from typing import Any

import anyio
from mcp.server.auth.provider import AccessToken

from launcher.backend.callers import Tokens, hand_down_token

log = logging.getLogger(__name__)

JWT_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA")
"""Signature algorithms accepted: asymmetric only, whatever a token's header claims."""
KEY_TYPES = {"RS": "RSA", "PS": "RSA", "ES": "EC", "Ed": "OKP"}
"""The JWK key type each algorithm family needs: a token whose header names a key of
another type is refused before PyJWT sees the pair (it raises TypeError for some)."""
JWKS_REFRESH_MIN_S = 30.0
"""A token naming an unknown key fetches the JWKS again at most this often (a flood of
forged key ids must not become a flood of requests to the issuer)."""
ISSUER_FETCH_TIMEOUT_S = 10.0
"""Bounds one metadata or JWKS fetch: a token's check waits for it."""
CLOCK_SKEW_S = 30
"""Leeway on `exp`/`nbf`/`iat` for clocks a little apart."""
METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")


class StaticTokens:
    """TokenVerifier over a token table: the caller is the token's line in it."""

    def __init__(self, tokens: Tokens) -> None:
        self._tokens = tokens

    async def verify_token(self, token: str) -> AccessToken | None:
        caller = self._tokens.caller(token)
        if caller is None:
            return None
        return AccessToken(token=token, client_id=caller, scopes=[], subject=caller)


class IssuerJwts:
    """TokenVerifier of JWTs one issuer signs for `audience` (serve's resource URL)."""

    def __init__(self, issuer: str, audience: str) -> None:
        self.issuer = issuer
        self.audience = audience
        self._keys: Any = None  # jwt.PyJWKSet
        self._fetched_at = -float("inf")
        self._lock = anyio.Lock()

    async def verify_token(self, token: str) -> AccessToken | None:
        import jwt

        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            return None
        key = await self._key(str(header.get("kid") or ""))
        if key is None:
            return None
        if KEY_TYPES.get(str(header.get("alg") or "")[:2]) != getattr(key, "key_type", None):
            log.info("refused a JWT: its alg does not fit the key its kid names")
            return None
        try:
            claims = jwt.decode(
                token,
                key=key.key,
                algorithms=list(JWT_ALGORITHMS),
                audience=self.audience,
                issuer=self.issuer,
                leeway=CLOCK_SKEW_S,
                options={"require": ["exp", "sub", "iss", "aud"]},
            )
        except Exception as exc:  # PyJWT raises more than PyJWTError for a hostile token
            log.info("refused a JWT: %s", exc if isinstance(exc, jwt.PyJWTError) else type(exc))
            return None
        subject = claims["sub"]
        if not isinstance(subject, str) or not subject:
            log.info("refused a JWT: no subject")  # never a caller named by client_id/azp
            return None
        scopes = str(claims.get("scope") or "").split()
        # A caller's token is masked like the token file's: in serve's answers and in
        # every worker started from now on (a model may echo what a host put in a prompt).
        hand_down_token(token, float(claims["exp"]))
        return AccessToken(
            token=token,
            client_id=subject,
            scopes=scopes,
            expires_at=int(claims["exp"]),
            resource=self.audience,
            subject=subject,
            claims={"iss": self.issuer},
        )

    async def _key(self, kid: str) -> Any:
        async with self._lock:
            if self._keys is None or (
                not _has(self._keys, kid)
                and time.monotonic() - self._fetched_at >= JWKS_REFRESH_MIN_S
            ):
                try:
                    self._keys = await self._fetch_keys()
                except Exception as exc:  # the issuer is down or says nonsense: refuse, say why
                    log.warning("cannot read the JWKS of %s: %s", self.issuer, exc)
                finally:
                    self._fetched_at = time.monotonic()
        if self._keys is None:
            return None
        keys = [k for k in self._keys.keys if not kid or k.key_id == kid]
        return keys[0] if len(keys) == 1 or (keys and kid) else None

    async def _fetch_keys(self) -> Any:
        import httpx2
        import jwt

        base = self.issuer.rstrip("/")
        async with httpx2.AsyncClient(timeout=ISSUER_FETCH_TIMEOUT_S) as http:
            jwks_uri = None
            for path in METADATA_PATHS:
                answer = await http.get(base + path)
                if answer.status_code == 200:
                    jwks_uri = answer.json().get("jwks_uri")
                    if jwks_uri:
                        break
            if not jwks_uri:
                raise ValueError("its metadata names no jwks_uri")
            answer = await http.get(str(jwks_uri))
            answer.raise_for_status()
            return jwt.PyJWKSet.from_dict(answer.json())


def _has(keys: Any, kid: str) -> bool:
    return any(k.key_id == kid for k in keys.keys) if kid else True
