"""Secrets for a worker on another machine: sealed to a key the worker made, opened only there.

A local worker pulls its hidden variables over a socket pair (hidden.py). A worker that
runs as a Ray task has no socket to serve: every byte between them passes through Ray
(task arguments, an actor's mailbox, the task's output stream), which keeps, shows or
sends in the clear what it carries. So the worker, once non-dumpable, makes an X25519
key pair and writes its public half out (`Opening.offer`, with the nonce its Ray task
handed it, so the task forwards its own worker's offer only); the driver answers with
the secrets and the Job sealed to it (`DriverKey.seal`: an X25519 exchange between the
driver's key for this run and the worker's, HKDF-SHA256, then ChaCha20-Poly1305), and
the worker opens a box only when it comes from that driver key, whose public half it
was handed (`Opening.open`): a box another process sealed to the worker's public key
is refused. Ray only ever holds public keys and the sealed box; the secrets, the prompt
and the config the run gets exist in the clear in the driver and in the worker alone.

This guards against what Ray records and whoever reads it (dashboard, state API, GCS,
logs, the network between nodes) and against another process of the node's user that
sees the worker's public key (it cannot seal a Job the worker opens); not against
someone who may run code on the cluster: such a one could run any worker it likes.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
from typing import Any, NamedTuple

from launcher import settings

SEAL_KEY_OP = "seal_key"
"""The worker's line offering its public key (`{"op": "seal_key", "key": B64}`)."""
SEALED_OP = "sealed"
"""serve's answer: the secrets and the Job sealed to that key."""
INFO = b"subagent sealed hand-over v2"
"""Binds the derived key to this use: a key from another protocol never opens a box."""
NONCE_BYTES = 12
SENDER_VAR = settings.SEAL_SENDER.name
"""Handed to the worker with its pulled hand-over: the driver's public key (base64)."""
OFFER_NONCE_VAR = settings.SEAL_NONCE.name
"""Handed to the worker the same way: the nonce its offer echoes to the task that started it."""


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: object, field: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"sealed hand-over: {field} is not a string")
    try:
        return base64.b64decode(text, validate=True)
    except ValueError as exc:
        raise ValueError(f"sealed hand-over: {field} is not base64") from exc


def _box_key(shared: bytes, sender: bytes, receiver: bytes) -> bytes:
    """The symmetric key of one box, bound to both public keys."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=sender + receiver, info=INFO)
    return hkdf.derive(shared)


def _public_bytes(key: Any) -> bytes:
    """The raw public half of a private X25519 key."""
    from cryptography.hazmat.primitives import serialization

    raw = serialization.Encoding.Raw
    return bytes(key.public_key().public_bytes(raw, serialization.PublicFormat.Raw))


class Sealed(NamedTuple):
    """What a box holds: the secret variables, and the Job (its JSON line)."""

    secrets: dict[str, str]
    job: str


class DriverKey:
    """The driver's X25519 key for a run: boxes are sealed with it, so a worker handed its
    public half opens only what this driver sealed."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

        self._key = X25519PrivateKey.generate()
        self._public = _public_bytes(self._key)
        self.public = _b64(self._public)
        """The public half, base64: a plain task argument (nothing secret)."""

    def seal(self, offer: dict[str, Any], values: dict[str, str], job: str) -> dict[str, Any]:
        """The answer to a worker's offer: `values` and the `job` line sealed to the key
        it offered, from this key.

        ValueError if the offer holds no X25519 public key.
        """
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        receiver = _unb64(offer.get("key"), "key")
        if len(receiver) != 32:
            raise ValueError("sealed hand-over: the offered key is not an X25519 public key")
        shared = self._key.exchange(X25519PublicKey.from_public_bytes(receiver))
        # A fresh nonce per box: the key pair is static for the run, the receiver is not.
        nonce = os.urandom(NONCE_BYTES)
        plain = json.dumps({"secret": values, "job": job}).encode()
        key = _box_key(shared, self._public, receiver)
        box = ChaCha20Poly1305(key).encrypt(nonce, plain, INFO)
        return {"op": SEALED_OP, "key": self.public, "nonce": _b64(nonce), "box": _b64(box)}


class Opening:
    """The worker's side: a fresh key pair, its offer, and the box opened with it, when
    the driver key `sender` (base64) sealed it. `nonce`: echoed in the offer."""

    def __init__(self, sender: str, nonce: str = "") -> None:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

        self._sender = _unb64(sender, "driver key")
        if len(self._sender) != 32:
            raise ValueError("sealed hand-over: the driver key is not an X25519 public key")
        self._nonce = nonce
        self._key = X25519PrivateKey.generate()
        self._public = _public_bytes(self._key)

    def offer(self) -> dict[str, Any]:
        """The line the worker writes out: its public key (and the task's nonce)."""
        line: dict[str, Any] = {"op": SEAL_KEY_OP, "key": _b64(self._public)}
        if self._nonce:
            line["nonce"] = self._nonce
        return line

    def open(self, message: object) -> Sealed:
        """The secrets and Job of serve's answer; ValueError if it is not a box sealed to
        our key (tampered, truncated, or sealed to another)."""
        from cryptography.exceptions import InvalidTag
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PublicKey
        from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

        if not isinstance(message, dict) or message.get("op") != SEALED_OP:
            raise ValueError("sealed hand-over: expected the sealed secrets first")
        sender = _unb64(message.get("key"), "key")
        nonce = _unb64(message.get("nonce"), "nonce")
        box = _unb64(message.get("box"), "box")
        if len(sender) != 32 or len(nonce) != NONCE_BYTES:
            raise ValueError("sealed hand-over: malformed box")
        if not hmac.compare_digest(sender, self._sender):
            raise ValueError("sealed hand-over: the box is not from the driver that started us")
        shared = self._key.exchange(X25519PublicKey.from_public_bytes(sender))
        try:
            plain = ChaCha20Poly1305(_box_key(shared, sender, self._public)).decrypt(
                nonce, box, INFO
            )
        except InvalidTag as exc:
            raise ValueError("sealed hand-over: the box does not open with our key") from exc
        payload = json.loads(plain)
        secret = payload.get("secret") if isinstance(payload, dict) else None
        job = payload.get("job") if isinstance(payload, dict) else None
        if not isinstance(secret, dict) or not isinstance(job, str):
            raise ValueError("sealed hand-over: no secrets or no job in the box")
        return Sealed({str(k): str(v) for k, v in secret.items()}, job)
