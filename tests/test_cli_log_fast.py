"""`subagent log` parses its plain arguments without typer, exactly as the typer command does."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from launcher.cli import log as log_command
from launcher.cli.app import app

SAME = [
    [],
    ["last"],
    ["20260101T000000-abc"],
    ["-n", "5"],
    ["-n5", "--json"],
    ["-q", "two words", "-n", "3"],
    ["--query", "-dash"],
    ["--query=x=y", "--json"],
    ["--usage", "--json"],
    ["prune", "--older-than", "30d"],
    ["--older-than=12h", "prune"],
    ["--json", "ID", "-q", "w"],
]
"""Argument lists the fast parser takes: it must agree with typer on every keyword."""
FALLBACK = [
    ["-n", "0"],
    ["-n", "x"],
    ["-n"],
    ["a", "b"],
    ["--unknown"],
    ["--json=1"],
    ["--", "x"],
    ["-q"],
]
"""Unusual input the fast parser leaves to typer (and typer's error messages)."""


def typer_keywords(args: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def record(ref: str | None, **keywords: Any) -> int:
        seen.update(ref=ref, **keywords)
        return 0

    monkeypatch.setattr(log_command, "run_log", record)
    result = CliRunner().invoke(app, ["log", *args])
    assert result.exit_code == 0, result.output
    return seen


@pytest.mark.parametrize("args", SAME, ids=" ".join)
def test_fast_parse_agrees_with_typer(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert log_command.parse_fast(args) == typer_keywords(args, monkeypatch)


@pytest.mark.parametrize("args", FALLBACK, ids=" ".join)
def test_unusual_arguments_are_left_to_typer(args: list[str]) -> None:
    assert log_command.parse_fast(args) is None
