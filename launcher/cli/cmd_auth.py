"""`login` and `logout`: OAuth for remote servers; they start no MCP server process."""

from __future__ import annotations

from typing import Annotated

import typer

from launcher.cli.options import ConfigDir, exit_with

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
        from launcher.cli.authcmd import run_login

        return run_login(server, config_dir, no_browser=no_browser, timeout_s=timeout)

    exit_with(body)


def logout(server: ServerName, config_dir: ConfigDir = None) -> None:
    """Forget the tokens stored for a server."""

    def body() -> int:
        from launcher.cli.authcmd import run_logout

        return run_logout(server, config_dir)

    exit_with(body)
