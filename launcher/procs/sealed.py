"""Secrets for a worker on another machine: sealed to a key the worker made, opened only there.

A local worker pulls its hidden variables over a socket pair (hidden.py). A worker that
runs as a Ray task has no socket to serve: every byte between them passes through Ray
(task arguments, an actor's mailbox, the task's output stream), which keeps, shows or
sends in the clear what it carries. So the worker, once non-dumpable, makes an X25519
key pair and writes its public half out (`Opening.offer`); serve answers with the
secrets and the Job sealed to it (`seal`: an ephemeral X25519 exchange, HKDF-SHA256,
then ChaCha20-Poly1305), and the worker opens them (`Opening.open`). Ray only ever holds
the public key and the sealed box; the secrets, the prompt and the config the run gets
exist in the clear in serve and in the worker alone.

This guards against what Ray records and whoever reads it (dashboard, state API, GCS,
logs, the network between nodes), not against someone who may run code on the cluster:
such a one could answer the worker's offer itself, or run any worker it likes.
"""

from __future__ import annotations

import base64
import json
import os
from typing import Any, NamedTuple

SEAL_KEY_OP = "seal_key"
"""The worker's line offering its public key (`{"op": "seal_key", "key": B64}`)."""
SEALED_OP = "sealed"
"""serve's answer: the secrets and the Job sealed to that key."""
INFO = b"subagent sealed hand-over v1"
"""Binds the derived key to this use: a key from another protocol never opens a box."""
NONCE_BYTES = 12


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


def seal(offer: dict[str, Any], values: dict[str, str], job: str) -> dict[str, Any]:
    """serve's answer to a worker's offer: `values` and the `job` line sealed to the key
    it offered.

    ValueError if the offer holds no X25519 public key.
    """
    from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    receiver = _unb64(offer.get("key"), "key")
    if len(receiver) != 32:
        raise ValueError("sealed hand-over: the offered key is not an X25519 public key")
    ours = X25519PrivateKey.generate()
    sender = _public_bytes(ours)
    shared = ours.exchange(X25519PublicKey.from_public_bytes(receiver))
    nonce = os.urandom(NONCE_BYTES)
    plain = json.dumps({"secret": values, "job": job}).encode()
    box = ChaCha20Poly1305(_box_key(shared, sender, receiver)).encrypt(nonce, plain, INFO)
    return {"op": SEALED_OP, "key": _b64(sender), "nonce": _b64(nonce), "box": _b64(box)}


class Opening:
    """The worker's side: a fresh key pair, its offer, and the box opened with it."""

    def __init__(self) -> None:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

        self._key = X25519PrivateKey.generate()
        self._public = _public_bytes(self._key)

    def offer(self) -> dict[str, Any]:
        """The line the worker writes out: its public key."""
        return {"op": SEAL_KEY_OP, "key": _b64(self._public)}

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
