"""`subagent serve` parses its plain arguments without typer, exactly as the typer command does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from launcher.cli import run
from launcher.cli import serve as serve_command
from launcher.cli.app import app

SAME = [
    [],
    ["--config-dir", "cfg"],
    ["--config-dir=cfg", "--no-lock"],
    ["--model", "scripted:x.yaml", "--max-concurrent", "2"],
    ["--task-ttl", "0.5", "--workspace", "."],
    ["--scripted-dir", ".", "--scripted-dir=/tmp"],
    ["--max-concurrent=7", "--task-ttl=86400"],
    ["--spares", "8", "--max-concurrent=16"],
]
"""Argument lists the fast parser takes: it must agree with typer on every keyword."""
FALLBACK = [
    ["--max-concurrent", "0"],
    ["--max-concurrent", "x"],
    ["--spares", "0"],
    ["--spares", "two"],
    ["--task-ttl", "0"],
    ["--task-ttl", "nan"],
    ["--workspace", "/nonexistent/dir"],
    ["--scripted-dir", "/nonexistent/dir"],
    ["--model"],
    ["extra"],
    ["--unknown"],
    ["--no-lock=1"],
]
"""Unusual input the fast parser leaves to typer (and typer's error messages)."""


def typer_keywords(args: list[str], monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def record(**keywords: Any) -> int:
        seen.update(keywords)
        return 0

    monkeypatch.setattr(serve_command, "run_serve", record)
    monkeypatch.setattr(run, "finish", lambda code: None)  # the command leaves by os._exit
    result = CliRunner().invoke(app, ["serve", *args])
    assert result.exit_code == 0, result.output
    return seen


@pytest.mark.parametrize("args", SAME, ids=" ".join)
def test_fast_parse_agrees_with_typer(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SUBAGENT_CONFIG_DIR", raising=False)
    assert serve_command.parse_fast(args) == typer_keywords(args, monkeypatch)


def test_the_config_dir_variable_is_read_as_typer_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SUBAGENT_CONFIG_DIR", "from-env")
    fast = serve_command.parse_fast([])
    assert fast is not None and fast["config_dir"] == Path("from-env")
    assert fast == typer_keywords([], monkeypatch)


@pytest.mark.parametrize("args", FALLBACK, ids=" ".join)
def test_unusual_arguments_are_left_to_typer(args: list[str]) -> None:
    assert serve_command.parse_fast(args) is None
