"""The command group builds a command only when it is used, and says exactly what typer's
eager build says: the same help for the group and every command, the same usage errors."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from launcher.cli.app import app, click_command
from launcher.cli.group import LazyCommands, command_name
from launcher.cli.placeholders import make_readable

NAMES = [command_name(info) for info in app.registered_commands]


def eager() -> Any:
    """The slow twin: typer builds every command at once, each made readable."""
    group = make_readable(typer.main.get_command(app))
    for command in group.commands.values():
        make_readable(command)
    return group


def said(command: Any, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[Any, ...]:
    with pytest.raises(SystemExit) as info:
        command(args, prog_name="subagent")
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["spwan"],
        ["bogus", "--help"],
        *([name, "--help"] for name in NAMES),
        ["spawn"],
        ["log", "-n", "0"],
        ["tools", "--settle", "nan"],
    ],
)
def test_lazy_group_says_what_the_eager_build_says(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    lazy = said(click_command(), args, capsys)
    assert lazy == said(eager(), args, capsys)
    assert lazy[0] in (0, 2)


def test_the_listing_and_lookups_build_only_what_they_use() -> None:
    built: list[str] = []

    def build(info: Any) -> str:
        built.append(command_name(info))
        return f"built {command_name(info)}"

    commands = LazyCommands(app.registered_commands, build)
    assert list(commands) == NAMES and len(commands) == len(NAMES)
    assert commands.summary("spawn").help == "Run an agent on a prompt to its end."
    assert commands.get("nope") is None and "nope" not in commands and "spawn" in commands
    assert built == []
    assert commands["spawn"] == commands.get("spawn") == "built spawn"
    assert built == ["spawn"]


def test_invoking_one_command_builds_that_command_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    group = click_command()
    said(group, ["spawn", "--help"], capsys)
    assert group.commands.summary("spawn") is group.commands["spawn"]  # built by the run
    assert group.commands.summary("log").params == []  # never built: a listing stand-in
