"""TokenStore: one 0600 JSON file per OAuth server under `SUBAGENT_HOME/auth/`, plus its lock.

Stdlib only (a leaf room): the CLI's `servers`/`logout` read it without the MCP SDK. Writes
are atomic (temp file + rename in the same directory), so a reader never sees half a file;
`lock(server)` is an `fcntl.flock` on a per-server lock file, so two sessions that find the
same expired token refresh it once (the second re-reads what the first saved).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from launcher import settings
from launcher.flock import await_lock, wait_lock
from launcher.state import PRIVATE_FILE_MODE, private_dir, private_opener

FORMAT_VERSION = 1
"""The token file's layout; a file of another version reads as 'not logged in'."""
LOCK_POLL_S = 0.05
"""How often a waiting `lock` retries: the holder only refreshes one token (one HTTP round trip)."""
DEFAULT_LOCK_TIMEOUT_S = 60.0
"""A lock held longer than this is a stuck process; the waiter gives up rather than hang."""


@dataclass
class StoredAuth:
    """What a login leaves for later sessions: tokens, the registered client, where to refresh.

    `tokens` is the OAuth token response plus `expires_at` (epoch seconds, absent when the
    server gave no `expires_in`); `client_info` the registered (or pre-configured) client;
    `metadata` what a later session needs to refresh without rediscovery (`token_endpoint`,
    `issuer`, `resource`).
    """

    tokens: dict[str, Any]
    client_info: dict[str, Any] | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def access_token(self) -> str | None:
        """The bearer token, if any."""
        value = self.tokens.get("access_token")
        return value if isinstance(value, str) and value else None

    @property
    def refresh_token(self) -> str | None:
        """The refresh token, if the server issued one."""
        value = self.tokens.get("refresh_token")
        return value if isinstance(value, str) and value else None

    @property
    def expires_at(self) -> float | None:
        """When the access token expires (epoch seconds), or None when unknown."""
        value = self.tokens.get("expires_at")
        return (
            float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
        )

    def expired(self, *, margin_s: float = 0.0, now: float | None = None) -> bool:
        """Whether the access token is gone or expires within `margin_s`."""
        if self.access_token is None:
            return True
        expires = self.expires_at
        return expires is not None and (time.time() if now is None else now) + margin_s >= expires

    def secrets(self) -> set[str]:
        """Every credential value in this record (tokens, client secret): for the secret mask."""
        found = {self.tokens.get(k) for k in ("access_token", "refresh_token", "id_token")}
        if self.client_info is not None:
            found.add(self.client_info.get("client_secret"))
        return {v for v in found if isinstance(v, str) and v}


def _token_suffix(server: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", server).upper()


def token_env_name(server: str) -> str:
    """`SUBAGENT_TOKEN_` + the server name upper-cased, every non-alphanumeric as `_`.

    `my-api.v2` reads `SUBAGENT_TOKEN_MY_API_V2`.
    """
    return settings.TOKEN.key(_token_suffix(server))


def env_token(server: str, env: Mapping[str, str]) -> str | None:
    """The pre-provisioned token for `server` from `env`, if set and non-empty."""
    value = settings.TOKEN.text(env, _token_suffix(server)).strip()
    return value or None


def token_file_stem(server: str) -> str:
    """The file name stem for a server: its name with anything unsafe percent-encoded."""
    return quote(server, safe="-_.@+=")


class TokenStore:
    """The per-server token files under `home/auth` (a 0700 directory)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.dir = home / "auth"

    def path(self, server: str) -> Path:
        """Where `server`'s tokens are kept."""
        return self.dir / f"{token_file_stem(server)}.json"

    def load(self, server: str) -> StoredAuth | None:
        """The stored record, or None when there is none (or it is unreadable or malformed)."""
        try:
            data = json.loads(self.path(server).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            return None
        if not isinstance(data, dict) or data.get("version") != FORMAT_VERSION:
            return None
        tokens, client_info, metadata = (
            data.get("tokens"),
            data.get("client_info"),
            data.get("metadata"),
        )
        if not isinstance(tokens, dict):
            return None
        return StoredAuth(
            tokens=tokens,
            client_info=client_info if isinstance(client_info, dict) else None,
            metadata=metadata if isinstance(metadata, dict) else {},
        )

    def save(self, server: str, auth: StoredAuth) -> None:
        """Write `server`'s record atomically with mode 0600 (temp file, fsync, rename)."""
        private_dir(self.dir, self.home)
        body = json.dumps(
            {
                "version": FORMAT_VERSION,
                "tokens": auth.tokens,
                "client_info": auth.client_info,
                "metadata": auth.metadata,
            },
            indent=2,
            sort_keys=True,
        )
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=self.dir)
        try:
            os.fchmod(fd, PRIVATE_FILE_MODE)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(body)
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.path(server))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def delete(self, server: str) -> bool:
        """Forget `server`'s tokens; True when there were any."""
        try:
            self.path(server).unlink()
        except FileNotFoundError:
            return False
        return True

    @contextlib.contextmanager
    def lock(self, server: str, *, timeout_s: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold `server`'s refresh lock (flock, across processes); TimeoutError after `timeout_s`.

        Blocking: from async code use `lock_async`.
        """
        fd = self._lock_fd(server)
        try:
            if not wait_lock(fd, timeout_s, poll_s=LOCK_POLL_S):
                raise TimeoutError(self._held(server))
            yield
        finally:
            os.close(fd)  # closing the only descriptor drops the flock

    @contextlib.asynccontextmanager
    async def lock_async(self, server: str, *, timeout_s: float) -> AsyncIterator[None]:
        """`lock` from the event loop: the wait polls, so a cancelled caller leaves at once."""
        fd = self._lock_fd(server)
        try:
            if not await await_lock(fd, timeout_s, poll_s=LOCK_POLL_S):
                raise TimeoutError(self._held(server))
            yield
        finally:
            os.close(fd)

    def _lock_fd(self, server: str) -> int:
        private_dir(self.dir, self.home)
        return private_opener(
            str(self.dir / f"{token_file_stem(server)}.lock"), os.O_RDWR | os.O_CREAT
        )

    @staticmethod
    def _held(server: str) -> str:
        return f"the token lock of server '{server}' is held by another process"

    def status(self, server: str) -> dict[str, Any]:
        """`{"logged_in", "expires_at", "scopes"}` for display; never a token."""
        auth = self.load(server)
        if auth is None or (auth.access_token is None and auth.refresh_token is None):
            return {"logged_in": False, "expires_at": None, "scopes": []}
        scope = auth.tokens.get("scope")
        return {
            "logged_in": True,
            "expires_at": auth.expires_at,
            "scopes": scope.split() if isinstance(scope, str) else [],
        }
