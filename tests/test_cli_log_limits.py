"""`subagent log -n` beyond what SQLite can count is bad usage (exit 2), never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from launcher.cli.app import app
from launcher.store import db

HUGE = "99999999999999999999"
"""Past SQLite's 64-bit integers: binding it as a LIMIT raised OverflowError."""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    conn = db.connect(tmp_path)  # a store exists, so the limit reaches a query
    assert conn is not None
    conn.close()
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path))
    return tmp_path


@pytest.mark.parametrize("extra", [[], ["-q", "word"]], ids=["list", "search"])
def test_a_huge_n_on_the_fast_path_exits_2_naming_it(home: Path, extra: list[str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "launcher.cli", "log", "-n", HUGE, *extra],
        capture_output=True,
        text=True,
        env={**os.environ, "SUBAGENT_HOME": str(home)},
        timeout=60,
    )

    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"-n {HUGE}" in proc.stderr


def test_a_huge_n_through_typer_exits_2_naming_it(home: Path) -> None:
    result = CliRunner().invoke(app, ["log", "-n", HUGE])

    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
