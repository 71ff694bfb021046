"""Commands say what they did in the user's words: a missing argument named as the help
names it, `--version` without typer, `servers`/`agents` that found nothing say where they
looked, `log -q` shows the matching text under MATCH."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import RUN_LIMIT_S, Subagent

pytestmark = pytest.mark.e2e


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "launcher.cli", *args],
        capture_output=True,
        text=True,
        timeout=RUN_LIMIT_S,
        stdin=subprocess.DEVNULL,
    )


def test_spawn_without_arguments_names_the_missing_prompt() -> None:
    proc = run("spawn")
    assert proc.returncode == 2
    assert "Missing argument 'PROMPT'" in proc.stderr
    assert "'args'" not in proc.stderr


def test_version_is_printed_without_importing_typer() -> None:
    from launcher import __version__

    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"subagent {__version__} (Python ")
    imported = [line.split("|")[-1].strip() for line in proc.stderr.splitlines()]
    assert "typer" not in imported and "click" not in imported


def test_servers_with_nothing_configured_say_where_they_looked(
    subagent: Subagent, tmp_path: Path
) -> None:
    home = tmp_path / "user-home"
    home.mkdir()
    got = subagent.run("servers", env={"HOME": str(home)})
    assert got.code == 0, got.stderr
    assert got.stdout.startswith("no MCP servers configured; looked in ./.subagent/mcp.json")
    assert "./.mcp.json" in got.stdout and "~/.config/subagent/mcp.json" in got.stdout
    agents = subagent.run("agents", env={"HOME": str(home)})
    assert "no agent files found; looked in ./.subagent/agents/, ./.claude/agents/" in (
        agents.stdout
    )
    assert subagent.run("servers", "--json", env={"HOME": str(home)}).stdout.strip() == "{}"


def test_agents_with_no_agent_files_say_where_they_looked(
    subagent: Subagent, tmp_path: Path
) -> None:
    empty = tmp_path / "empty-config"
    empty.mkdir()
    got = subagent.run("agents", "--config-dir", str(empty))
    assert got.code == 0, got.stderr
    assert "general-purpose  (built-in)" in got.stdout
    assert f"no agent files found; looked in {empty}/agents/" in got.stdout
