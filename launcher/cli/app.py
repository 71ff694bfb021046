"""The `subagent` command line: the typer app and its commands, registered in help order.

Each command is one module named for it (signature and body); nothing heavy is imported
at module level in any of them: `--help`, `agents` and `servers` must stay fast and must
never start a process (only `tools`, `spawn` and `serve` may). `--help` imports each
module for its docstring; typer turns a signature into click parameters only for the
command that runs (cli/group.py). tests/e2e/test_cli_help_imports.py holds both.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from launcher.cli.group import CommandGroup, lazy_group

app = typer.Typer(
    name="subagent",
    cls=CommandGroup,
    help="Scoped LLM sub-agents whose tools come from MCP servers.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    no_args_is_help=True,
    add_help_option=False,
)


def _show_help(ctx: typer.Context, value: bool) -> None:
    if value:
        typer.echo(ctx.get_help())
        raise typer.Exit()


def _show_version(value: bool) -> None:
    if value:
        from launcher.cli.version import version_line

        typer.echo(version_line())
        raise typer.Exit()


@app.callback()
def _group(
    _version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            is_eager=True,
            expose_value=False,
            callback=_show_version,
            help="Show the version and exit.",
        ),
    ] = False,
    _help: Annotated[
        bool,
        typer.Option(
            "--help",
            is_eager=True,
            expose_value=False,
            callback=_show_help,
            help="Show this message and exit.",
        ),
    ] = False,
) -> None:
    # The group's own --help, as a plain bool flag defaulting to False: typer's default
    # one is None when absent, and coercing that None builds a pydantic adapter — which
    # made `subagent COMMAND --help` import pydantic (~2.5x `import typer`).
    pass


from launcher.cli import (  # noqa: E402
    agents,
    batch,
    check,
    init,
    lock,
    log,
    login,
    serve,
    servers,
    spawn,
    tools,
)

for command in (
    init.init,
    agents.agents,
    servers.servers,
    tools.tools,
    spawn.spawn,
    serve.command(),
    batch.batch,
    lock.lock,
    log.command(),
    check.check,
    login.login,
    login.logout,
):
    app.command(cls=spawn.SpawnCommand if command is spawn.spawn else None)(command)


def click_command() -> Any:
    """The click group for `app`: each command built on first use, with readable placeholders."""
    return lazy_group(app)


def main() -> None:
    """Console-script entry point."""
    click_command()(prog_name="subagent")
