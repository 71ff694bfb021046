"""The `subagent` command group: typer builds a command's click parameters on first use.

typer turns every registered command into click parameters before it parses anything
(a signature and the type hints of each parameter, some 15 ms for twelve commands).
`subagent --help` needs only their names and first lines, and `subagent spawn ...` only
spawn's, so the group keeps typer's CommandInfo records and builds one on lookup.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, MutableMapping
from typing import Any

import typer
from typer.core import TyperCommand, TyperGroup
from typer.models import CommandInfo

from launcher.cli.placeholders import make_readable

Command = Any
"""A click command (typer vendors click in newer releases: its class is not named here)."""


def command_name(info: CommandInfo) -> str:
    """The name typer gives a registered command: its own, else the function's."""
    assert info.callback is not None
    return info.name or typer.main.get_command_name(info.callback.__name__)


class LazyCommands(MutableMapping[str, Command]):
    """A group's commands by name, in registration (help) order; each built on first lookup."""

    def __init__(self, infos: list[CommandInfo], build: Callable[[CommandInfo], Command]):
        self._infos = {command_name(info): info for info in infos}
        self._built: dict[str, Command] = {}
        self._build = build

    def __getitem__(self, name: str) -> Command:
        if name not in self._built:
            self._built[name] = self._build(self._infos[name])
        return self._built[name]

    def __setitem__(self, name: str, command: Command) -> None:
        self._built[name] = command
        self._infos.setdefault(name, CommandInfo(name, callback=command.callback))

    def __delitem__(self, name: str) -> None:
        del self._infos[name]
        self._built.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self._infos  # Mapping's default would build the command to say so

    def __iter__(self) -> Iterator[str]:
        return iter(self._infos)

    def __len__(self) -> int:
        return len(self._infos)

    def summary(self, name: str) -> Command:
        """A parameterless command with `name`'s help, as typer would derive it: the listing."""
        if name in self._built:
            return self._built[name]
        info = self._infos[name]
        doc = inspect.getdoc(info.callback) if info.help is None else inspect.cleandoc(info.help)
        return TyperCommand(
            name=name,
            help=doc,
            short_help=info.short_help,
            hidden=info.hidden,
            deprecated=info.deprecated,
        )


class CommandGroup(TyperGroup):
    """typer's group, listing and resolving commands without building the others."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # names only: `.items()` would build every command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        commands = self.commands
        if not isinstance(commands, LazyCommands):
            return super().format_commands(ctx, formatter)
        listing = TyperGroup(name=self.name, commands=[commands.summary(n) for n in commands])
        listing.format_commands(ctx, formatter)


def lazy_group(app: typer.Typer) -> CommandGroup:
    """`app` (created with `cls=CommandGroup`) as a click group whose commands build on use."""
    shell = copy.copy(app)  # the group's own options and callback, without the commands
    shell.registered_commands = []
    group = typer.main.get_command(shell)
    assert isinstance(group, CommandGroup), "create the app with cls=CommandGroup"

    def build(info: CommandInfo) -> Command:
        command = typer.main.get_command_from_info(
            info,
            pretty_exceptions_short=app.pretty_exceptions_short,
            rich_markup_mode=app.rich_markup_mode,
        )
        return make_readable(command)

    group.commands = LazyCommands(app.registered_commands, build)
    readable: CommandGroup = make_readable(group)
    return readable
