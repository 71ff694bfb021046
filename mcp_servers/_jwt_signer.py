"""The OAuth fixture's JWT side: one RSA key, its JWKS, and JWTs minted by subject.

A resource server that trusts this issuer (`subagent serve --auth-issuer`) finds the JWKS
through `/.well-known/openid-configuration`'s `jwks_uri` and checks each token against it.
"""

from __future__ import annotations

import secrets
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm

KEY_BITS = 2048
"""RSA key size: the smallest PyJWT and the SDK accept without complaint."""
ALGORITHM = "RS256"


class JwtSigner:
    """Signs JWTs for `issuer` with a key made at start (its JWKS is public)."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.kid = secrets.token_hex(8)
        self._key = rsa.generate_private_key(public_exponent=65537, key_size=KEY_BITS)
        self.ec_kid = f"ec-{self.kid}"
        """A second key, EC, that signs nothing: a token naming it with an RSA `alg` is a
        key-type confusion the resource server must refuse."""
        self._ec_key = ec.generate_private_key(ec.SECP256R1())

    def jwks(self) -> dict[str, Any]:
        """The public key set (`/jwks`)."""
        public = RSAAlgorithm.to_jwk(self._key.public_key(), as_dict=True)
        ec_public = ECAlgorithm.to_jwk(self._ec_key.public_key(), as_dict=True)
        return {
            "keys": [
                {**public, "kid": self.kid, "alg": ALGORITHM, "use": "sig"},
                {**ec_public, "kid": self.ec_kid, "alg": "ES256", "use": "sig"},
            ]
        }

    def discovery(self, jwks_uri: str) -> dict[str, Any]:
        """What `/.well-known/openid-configuration` says: the issuer and where its keys are."""
        return {
            "issuer": self.issuer,
            "jwks_uri": jwks_uri,
            "id_token_signing_alg_values_supported": [ALGORITHM],
        }

    def mint(
        self,
        subject: str,
        audience: str,
        ttl_s: float,
        *,
        issuer: str | None = None,
        scope: str = "mcp",
        foreign_key: bool = False,
        ec_kid: bool = False,
    ) -> str:
        """A JWT for `subject` and `audience` that expires in `ttl_s` (negative: expired);
        `issuer` and `foreign_key` forge one this issuer never signed, `ec_kid` names the EC
        key in the header of an RS256 token (for refusal tests)."""
        now = int(time.time())
        claims = {
            "iss": issuer or self.issuer,
            "sub": subject,
            "aud": audience,
            "iat": now,
            "exp": now + int(ttl_s),
            "scope": scope,
            "client_id": f"client-of-{subject}",
        }
        key = rsa.generate_private_key(65537, KEY_BITS) if foreign_key else self._key
        kid = self.ec_kid if ec_kid else self.kid
        return jwt.encode(claims, key, algorithm=ALGORITHM, headers={"kid": kid})
