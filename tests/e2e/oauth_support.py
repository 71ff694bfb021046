"""The OAuth fixture (`mcp_servers.oauth_protected`) as a test resource, and the leak search."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

FIXTURE_START_LIMIT_S = 30.0
"""Bounds the wait for the fixture's `PORT` line (it prints it before importing the SDK)."""
ADMIN_TIMEOUT_S = 30.0
"""An admin request may wait while the fixture finishes its SDK import under load."""
FIXTURE_STOP_LIMIT_S = 15.0
"""The fixture exits on stdin EOF; this only bounds a hung one."""


@dataclass
class OAuthFixture:
    """A running fixture: its base URL and its admin endpoints."""

    proc: subprocess.Popen[str]
    base: str

    @property
    def mcp_url(self) -> str:
        return f"{self.base}/mcp"

    def stats(self) -> dict[str, int]:
        """The token endpoint's counters (`refresh_grants`, `code_grants`, ...)."""
        return httpx.get(f"{self.base}/admin/stats", timeout=ADMIN_TIMEOUT_S).json()

    def issued(self) -> list[str]:
        """Every token, code and client secret the fixture ever issued."""
        return httpx.get(f"{self.base}/admin/issued", timeout=ADMIN_TIMEOUT_S).json()["secrets"]

    def revoke_refresh(self) -> int:
        return httpx.post(f"{self.base}/admin/revoke-refresh", timeout=ADMIN_TIMEOUT_S).json()[
            "revoked"
        ]

    def mint(self, client_id: str) -> str:
        """An access token for `client_id` issued out of band (a CI job's secret)."""
        reply = httpx.post(
            f"{self.base}/admin/mint", params={"client_id": client_id}, timeout=ADMIN_TIMEOUT_S
        )
        return reply.json()["access_token"]

    def expire_access(self) -> int:
        return httpx.post(f"{self.base}/admin/expire-access", timeout=ADMIN_TIMEOUT_S).json()[
            "expired"
        ]


@contextmanager
def oauth_fixture(*args: str) -> Iterator[OAuthFixture]:
    """Start the fixture on an ephemeral loopback port; stop it (stdin EOF) on exit."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcp_servers.oauth_protected", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = _read_line(proc, FIXTURE_START_LIMIT_S)
        assert line.startswith("PORT "), f"fixture said {line!r}"
        yield OAuthFixture(proc, f"http://127.0.0.1:{int(line.split()[1])}")
    finally:
        if proc.stdin:
            proc.stdin.close()
        try:
            proc.wait(FIXTURE_STOP_LIMIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _read_line(proc: subprocess.Popen[str], limit_s: float) -> str:
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stdout, selectors.EVENT_READ)
        if not sel.select(limit_s):
            raise TimeoutError(f"no line from the fixture within {limit_s} s")
    return proc.stdout.readline().strip()


def oauth_server(url: str, **fields: Any) -> dict[str, Any]:
    """An mcp.json entry for the fixture's MCP endpoint with `"auth": "oauth"`."""
    return {"type": "http", "url": url, "auth": "oauth", **fields}


def leaks(secrets: list[str], *texts: str, home: Path | None = None) -> list[str]:
    """Where any of `secrets` shows up: in `texts`, or in a file under `home` outside the
    token store (`home/auth/`, the one place tokens belong)."""
    found = [f"text #{i}" for i, text in enumerate(texts) for s in secrets if s and s in text]
    if home is not None:
        store = home / "auth"
        files = (p for p in home.rglob("*") if p.is_file() and store not in p.parents)
        for path in sorted(files):
            data = path.read_bytes()
            found += [str(path) for s in secrets if s and s.encode() in data]
    return found
