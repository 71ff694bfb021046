"""A conformance-suite client for the `auth/*` scenarios, built on the project's OAuth code.

`npx conformance client --command "python tests/e2e/conformance_auth_client.py" --scenario
auth/NAME` appends the scenario server's URL. This program logs in with
`launcher.bridge.auth.login.login` (the browser step is an HTTP client following the
authorization server's redirect to the loopback receiver), then connects through
`McpConnection` with the stored tokens and calls every tool, exactly as a session would.
At the end it fails if any token value it stored shows up in its own output (the
connection's events and results) or in any file of its SUBAGENT_HOME outside `auth/`.
The scenario's context (`MCP_CONFORMANCE_CONTEXT`: a pre-registered client) becomes the
server's mcp.json OAuth settings.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2

from launcher.auth.tokens import TokenStore
from launcher.bridge.auth.login import login
from launcher.config.types import OAuthSettings, ServerSpec
from tests.e2e import conformance_client

LOGIN_TIMEOUT_S = 20.0
"""Bounds the wait for the redirect; the suite's authorization server answers at once."""
BROWSER_TIMEOUT_S = 20.0
"""Bounds the stand-in browser's walk through the redirects."""
CALL_TIMEOUT_S = 20.0
"""Bounds one tool call against the suite's local server."""
STARTUP_TIMEOUT_S = 20.0
"""Bounds connect plus the first tools/list."""
LOGIN_ROUNDS = 2
"""Logins per run: the first, and one more when a session asks for it (scope step-up)."""
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""The client ID metadata document the suite's CIMD scenario expects to see."""


def follow_redirects(url: str) -> None:
    """The browser step: GET the authorization URL and follow redirects to the loopback."""
    with httpx2.Client(follow_redirects=True, timeout=BROWSER_TIMEOUT_S) as client:
        response = client.get(url)
    log({"browser": response.status_code})


def settings_from_context(context: dict[str, Any]) -> OAuthSettings:
    """mcp.json's OAuth options for the scenario: a pre-registered client if it names one.

    The client_credentials scenarios are configured as a user would for a machine client.
    """
    scenario = context.get("name") or os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario.startswith("auth/client-credentials"):
        return OAuthSettings(
            client_id=context.get("client_id"),
            client_secret=context.get("client_secret"),
            private_key=context.get("private_key_pem"),
            signing_algorithm=context.get("signing_algorithm") or "RS256",
            grant_type="client_credentials",
        )
    return OAuthSettings(
        client_id=context.get("client_id"),
        client_secret=context.get("client_secret"),
        client_metadata_url=CLIENT_METADATA_URL,
    )


OUTPUT: list[str] = []
"""Every line this client wrote: checked for token values at the end."""


def log(record: dict[str, Any]) -> None:
    """One JSON line on stderr (see conformance_client.log), also kept in OUTPUT."""
    OUTPUT.append(json.dumps(record, default=str))
    conformance_client.log(record)


def leaks(home: Path, seen: set[str]) -> list[str]:
    """Where a token value shows up: this client's output, or any file of `home` but auth/."""
    found = [f"output line {i}" for i, line in enumerate(OUTPUT) if any(t in line for t in seen)]
    for path in home.rglob("*"):
        if path.is_file() and "auth" not in path.relative_to(home).parts:
            text = path.read_text(errors="replace")
            found += [f"file {path.name}" for t in seen if t in text]
    return found


async def run(url: str, home: Path, context: dict[str, Any]) -> int:
    """Log in, connect, call every tool, check that no token leaked; 0 when all held."""
    seen: set[str] = set()
    status = await login_and_call(url, home, context, seen)
    found = leaks(home, seen)
    log({"tokens_checked": len(seen)})
    if found:
        log({"token_leaks": found})
        return 1
    return status


async def login_and_call(url: str, home: Path, context: dict[str, Any], seen: set[str]) -> int:
    """Log in (unless a machine client), then connect and call every tool."""
    spec = ServerSpec(
        name="conformance",
        type="http",
        url=url,
        auth="oauth",
        oauth=settings_from_context(context),
        startup_timeout=STARTUP_TIMEOUT_S,
        tool_timeout=CALL_TIMEOUT_S,
    )
    store = TokenStore(home)
    if spec.oauth is not None and spec.oauth.grant_type == "client_credentials":
        # A machine client needs no login: the session gets its own token.
        failed, _ = await session(spec, store, home, seen)
        return 1 if failed else 0
    for _ in range(LOGIN_ROUNDS):
        try:
            await login(spec, store, open_url=follow_redirects, timeout_s=LOGIN_TIMEOUT_S)
        except Exception as exc:
            log({"login_error": str(exc)})
            return 1
        failed, hint = await session(spec, store, home, seen)
        if not hint:
            return 1 if failed else 0
        # The session asked for a login (e.g. a step-up to more scopes): do what a user would.
    return 1


async def session(
    spec: ServerSpec, store: TokenStore, home: Path, seen: set[str]
) -> tuple[int, bool]:
    """One session: connect with the stored tokens, call every tool; tokens go to `seen`.

    Returns the number of failures and whether the server asked for `subagent login`.
    """
    failures, error = await conformance_client.call_every_tool(spec, home, store, log)
    for auth in (store.load(spec.name),):
        seen |= auth.secrets() if auth is not None else set()
    return failures, "subagent login" in (error or "")


def main(argv: list[str]) -> int:
    """Entry point: the server URL is the last argument."""
    if len(argv) < 2:
        sys.stderr.write("usage: conformance_auth_client.py URL\n")
        return 2
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    log({"context_keys": sorted(context)})
    with tempfile.TemporaryDirectory(prefix="subagent-conformance-auth-") as home:
        return anyio.run(run, argv[-1], Path(home), context)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
