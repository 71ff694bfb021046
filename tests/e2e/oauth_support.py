"""The OAuth fixture (`mcp_servers.oauth_protected`) as a test resource, and the leak search."""

from __future__ import annotations

import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2

from tests.e2e.conftest import Subagent, scripted_spawn

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
        return httpx2.get(f"{self.base}/admin/stats", timeout=ADMIN_TIMEOUT_S).json()

    def issued(self) -> list[str]:
        """Every token, code and client secret the fixture ever issued."""
        return httpx2.get(f"{self.base}/admin/issued", timeout=ADMIN_TIMEOUT_S).json()["secrets"]

    def revoke_refresh(self) -> int:
        return httpx2.post(f"{self.base}/admin/revoke-refresh", timeout=ADMIN_TIMEOUT_S).json()[
            "revoked"
        ]

    def mint(self, client_id: str) -> str:
        """An access token for `client_id` issued out of band (a CI job's secret)."""
        reply = httpx2.post(
            f"{self.base}/admin/mint", params={"client_id": client_id}, timeout=ADMIN_TIMEOUT_S
        )
        return reply.json()["access_token"]

    def mint_jwt(self, subject: str, audience: str, **more: str | float) -> str:
        """A JWT the fixture signs for `subject` and `audience` (`ttl`, `issuer`, `foreign`)."""
        reply = httpx2.post(
            f"{self.base}/admin/mint-jwt",
            params={"sub": subject, "aud": audience, **more},
            timeout=ADMIN_TIMEOUT_S,
        )
        return str(reply.json()["access_token"])

    def set(self, **values: float) -> dict[str, float]:
        """Change `access_ttl` (tokens issued from now on) and `refresh_delay` (seconds)."""
        return httpx2.post(f"{self.base}/admin/set", params=values, timeout=ADMIN_TIMEOUT_S).json()

    def expire_access(self) -> int:
        return httpx2.post(f"{self.base}/admin/expire-access", timeout=ADMIN_TIMEOUT_S).json()[
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


LOGIN_LIMIT_S = 90.0
"""Bounds a whole `subagent login` run in these tests (the flow itself takes a second)."""
BROWSER_TIMEOUT_S = 30.0
"""The "browser" request: the authorization server's redirect lands on the CLI's receiver."""


@dataclass
class Login:
    """A finished `subagent login --no-browser` whose URL an HTTP client followed."""

    code: int
    stdout: str
    stderr: str
    page: httpx2.Response | None
    """What the browser showed after following the redirects (None: no URL was printed)."""


def login(
    subagent: Subagent,
    config: Path,
    server: str,
    *,
    follow: bool = True,
    env: dict[str, str] | None = None,
    before_follow: Callable[[str], None] | None = None,
) -> Login:
    """Run `subagent login SERVER --no-browser`, read the URL it prints and GET it, following
    the redirect to the CLI's loopback receiver, as a browser would; wait for the CLI to end.
    `before_follow` gets the URL first (a forger racing the browser)."""
    argv = ("login", server, "--no-browser", "--config-dir", str(config))
    proc = subagent.start(*argv, env=env)
    lines: queue.Queue[str | None] = queue.Queue()
    threading.Thread(target=_pump, args=(proc, lines), daemon=True).start()
    seen: list[str] = []
    page = None
    deadline = time.monotonic() + LOGIN_LIMIT_S
    try:
        while (line := lines.get(timeout=max(0.1, deadline - time.monotonic()))) is not None:
            seen.append(line)
            url = line.strip()
            if follow and url.startswith("http://") and page is None:
                if before_follow is not None:
                    before_follow(url)
                page = httpx2.get(url, follow_redirects=True, timeout=BROWSER_TIMEOUT_S)
        code = proc.wait(timeout=max(0.1, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    return Login(code, "".join(seen), proc.stderr.read(), page)


def _pump(proc: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.put(line)
    lines.put(None)


def assert_no_leak(fx: OAuthFixture, home: Path, *texts: str) -> None:
    """No secret the fixture ever issued appears in `texts` or under `home` (bar auth/)."""
    issued = fx.issued()
    assert issued, "the fixture issued nothing: the leak search would prove nothing"
    assert leaks(issued, *texts, home=home) == []


def write_script(path: Path, text: str) -> Path:
    """A `scripted:` model file."""
    path.write_text(text)
    return path


def spawn_args(config: Path, script: Path, *extra: str) -> list[str]:
    """`spawn --json` of `script` with the fixture's server selected."""
    return scripted_spawn(config, script, "--ext", "remote", *extra, "go")


def tool_texts(events: list[dict[str, Any]]) -> list[tuple[bool, str]]:
    """(is_error, content) of every tool result, in order."""
    return [(e["is_error"], e["content"]) for e in events if e["type"] == "tool_result"]


def grant_of(whoami: str) -> int:
    """The fixture's grant serial in a `whoami` answer (`... grant=N`)."""
    return int(whoami.rsplit("grant=", 1)[1])
