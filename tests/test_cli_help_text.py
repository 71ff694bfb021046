"""Help and usage errors speak the user's words: placeholders like `--model SPEC`, never
`<list[str]>`; every option has a line of help. (The usage error and `--version` run as
processes: tests/e2e/test_cli_says_what.py.)"""

from __future__ import annotations

import pytest

from launcher.cli.app import click_command as command

COMMANDS = sorted(command().commands)


def help_text(name: str, capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as info:
        command()(["--help"] if name == "" else [name, "--help"], prog_name="subagent")
    assert info.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("name", ["", *COMMANDS])
def test_help_has_no_type_placeholders(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text(name, capsys)
    assert "<" not in text.replace("<=", ""), text
    assert "{" not in text.split("\n", 1)[0], text  # the usage line


@pytest.mark.parametrize("name", COMMANDS)
def test_every_option_has_help(name: str) -> None:
    cmd = command().commands[name]
    bare = [p.name for p in cmd.params if p.param_type_name == "option" and not p.help]
    assert bare == []


def test_spawn_help_names_agent_and_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    text = help_text("spawn", capsys)
    assert text.startswith("Usage: subagent spawn [OPTIONS] [AGENT] PROMPT\n")
    assert "--max-turns N" in text and "Stop after N model turns" in text
    assert "--model SPEC" in text and "--config-dir DIR" in text


def test_version_is_listed_in_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--version" in help_text("", capsys)


def test_an_option_no_table_names_still_gets_a_placeholder() -> None:
    # A newly added option must never break help (typer's options have no click `type`).
    from launcher.cli.placeholders import placeholder

    class Bare:
        name = "fresh_option"

    class Typed:
        name = "retries_left"

        def bare_type(self) -> str:
            return "int"

    assert placeholder(Bare()) == "FRESH-OPTION"
    assert placeholder(Typed()) == "N"
