"""`login` and `logout`: OAuth for remote servers; they start no MCP server process.

`login` is not a session command (cli/entry.py): it runs no model and no tool, so no
process that could read its environment block runs while it lives, and it is not
re-executed to hide secrets. Nothing here prints a token: only the authorization URL
(which carries a client id, a PKCE challenge and a state, never a credential) and the
token store's status (logged in, expiry, scopes).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from launcher.cli.options import ConfigDir, exit_with, load

if TYPE_CHECKING:
    from launcher.config.types import Config, ServerSpec

LOGIN_TIMEOUT_S = 300.0
"""How long `login` waits for the browser's redirect: a person signs in within five minutes."""

ServerName = Annotated[str, typer.Argument(help="The server's name in mcp.json.")]


def login(
    server: ServerName,
    config_dir: ConfigDir = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Print the URL instead of opening a browser.")
    ] = False,
    timeout: Annotated[
        float,
        typer.Option("--timeout", min=1.0, help="Seconds to wait for the browser's redirect."),
    ] = LOGIN_TIMEOUT_S,
) -> None:
    """Log in to an `"auth": "oauth"` server once; later sessions use the stored tokens."""

    def body() -> int:
        return run_login(server, config_dir, no_browser=no_browser, timeout_s=timeout)

    exit_with(body)


def logout(server: ServerName, config_dir: ConfigDir = None) -> None:
    """Forget the tokens stored for a server."""

    def body() -> int:
        return run_logout(server, config_dir)

    exit_with(body)


def oauth_server(config: Config, name: str) -> ServerSpec:
    """The configured server `name`, which must say `"auth": "oauth"` (else bad usage)."""
    from launcher.errors import ConfigError, UsageError

    spec = config.servers.get(name)
    if spec is None:
        known = ", ".join(sorted(config.servers)) or "none"
        raise UsageError(f"unknown server '{name}' (configured: {known})")
    if spec.auth != "oauth":
        raise ConfigError(
            f'server \'{name}\' does not use OAuth: add "auth": "oauth" to its entry '
            "(only an http server can)",
            path=spec.source,
            field=f"mcpServers.{name}.auth",
        )
    return spec


def graphical_browser_likely(env: Mapping[str, str], platform: str | None = None) -> bool:
    """Whether `webbrowser` would open a window rather than a console browser.

    On Linux without a display, `webbrowser` falls back to lynx or w3m in this terminal,
    which would take it over mid-login; then the URL is printed instead. `BROWSER` set by
    the user is their explicit choice and is honoured.
    """
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux") or env.get("BROWSER"):
        return True
    return bool(env.get("DISPLAY") or env.get("WAYLAND_DISPLAY"))


def url_opener(no_browser: bool, out: Any = sys.stdout) -> Callable[[str], None]:
    """Open the authorization URL in a browser; print it when asked to or when none opens."""

    def show(url: str) -> None:
        out.write(f"Open this URL in a browser to log in:\n\n    {url}\n\n")
        out.write("Waiting for the redirect...\n")
        out.flush()

    def open_url(url: str) -> None:
        import webbrowser

        opened = False
        if graphical_browser_likely(os.environ):
            try:
                opened = webbrowser.get().open(url)
            except webbrowser.Error:
                opened = False
        if not opened:
            show(url)
            return
        out.write(f"Opened a browser to log in. If nothing opened, visit:\n\n    {url}\n\n")
        out.flush()

    return show if no_browser else open_url


def run_login(server: str, config_dir: Path | None, *, no_browser: bool, timeout_s: float) -> int:
    """The interactive flow, then a one-line status."""
    import anyio

    from launcher.auth.tokens import TokenStore, env_token, token_env_name
    from launcher.bridge.auth.login import login
    from launcher.cli.render import describe_oauth
    from launcher.state import state_home

    spec = oauth_server(load(config_dir), server)
    store = TokenStore(state_home())
    quiet_sdk_logging()
    anyio.run(lambda: login(spec, store, open_url=url_opener(no_browser), timeout_s=timeout_s))
    detail = describe_oauth(store.status(server)).removeprefix("logged in").lstrip(", ")
    print(f"Logged in to {server}" + (f": {detail}." if detail else "."))
    # Sessions prefer these over the login (CI precedence): say so rather than surprise.
    if any(key.lower() == "authorization" for key in spec.headers):
        sys.stderr.write(f"subagent: note: '{server}' has an Authorization header in mcp.json; ")
        sys.stderr.write("sessions send it instead of this login\n")
    elif env_token(server, os.environ):
        sys.stderr.write(f"subagent: note: {token_env_name(server)} is set; ")
        sys.stderr.write("sessions use it instead of this login\n")
    return 0


def quiet_sdk_logging() -> None:
    """The SDK logs its flow's failures with tracebacks (a request may quote a code or a
    token); the login's error message carries the reason, so its log goes nowhere."""
    import logging

    logger = logging.getLogger("mcp")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False


def run_logout(server: str, config_dir: Path | None) -> int:
    """Delete the server's stored tokens (a removed server's too)."""
    from launcher.auth.tokens import TokenStore
    from launcher.errors import UsageError
    from launcher.state import state_home

    store = TokenStore(state_home())
    if store.delete(server):
        print(f"Logged out of {server}.")
        return 0
    config = load(config_dir)
    if server not in config.servers:
        raise UsageError(f"unknown server '{server}' (no stored login either)")
    print(f"{server}: not logged in.")
    return 0
