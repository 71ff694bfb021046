"""`subagent --help` stays fast: it imports neither the MCP SDK, httpx, nor the bridge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_LIMIT_S, Subagent, write_config

pytestmark = pytest.mark.e2e

HEAVY = ("mcp", "mcp_types", "httpx", "httpx2", "launcher.bridge", "launcher.session")


def _imported(args: list[str], subagent: Subagent) -> set[str]:
    """Top-level and dotted module names `python -X importtime -m launcher.cli ARGS` imported."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "launcher.cli", *args],
        capture_output=True,
        text=True,
        env=subagent.env(),
        cwd=subagent.cwd,
        timeout=RUN_LIMIT_S,
    )
    assert proc.returncode == 0, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert lines, "no -X importtime output"
    return {line.rsplit("|", 1)[1].strip() for line in lines}


def _heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_help_imports_no_sdk_httpx_or_bridge(tmp_path: Path, subagent: Subagent) -> None:
    # An OAuth server: `servers` reads its login state from the token store, still light.
    remote = {"type": "http", "url": "http://127.0.0.1:9/mcp", "auth": "oauth"}
    config = str(write_config(tmp_path / "cfg", {"remote": remote}))
    for args in (
        ["--help"],
        ["tools", "--help"],
        ["login", "--help"],
        ["logout", "--help"],
        ["servers", "--config-dir", config],
        ["logout", "remote", "--config-dir", config],
    ):
        modules = _imported(args, subagent)
        assert "typer" in modules  # the parse sees real imports
        assert _heavy(modules) == set(), args
    # `servers` really loaded the config code and the token store, yet nothing heavy came.
    modules = _imported(["servers", "--config-dir", config], subagent)
    assert {"launcher.config.discovery", "launcher.auth.tokens"} <= modules


def test_command_help_imports_no_pydantic(subagent: Subagent) -> None:
    # typer coerces an unset --help (None) of the group through a pydantic adapter; the
    # group's own bool flag avoids that import on every `subagent COMMAND --help`.
    for args in (
        ["--help"],
        ["spawn", "--help"],
        ["tools", "--help"],
        ["serve", "--help"],
        ["login", "--help"],
    ):
        modules = _imported(args, subagent)
        assert "typer" in modules
        assert {m for m in modules if m.split(".")[0] == "pydantic"} == set(), args
