"""`scripted:` in an agent's `model:` is relative to the agent file: the shipped `triage`
agent runs from any directory with `--config-dir`, under spawn and serve alike."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
CONFIGS = REPO / "configs"
LIMIT_S = 90.0
"""Bounds each run; a worker and the stub server each pay an SDK import on 2 cores."""


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "state")
    env["HOME"] = str(tmp_path / "home")
    # The shipped config runs its stub servers as `python -m mcp_servers...`.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def elsewhere(tmp_path: Path) -> Path:
    cwd = tmp_path / "somewhere" / "else"
    cwd.mkdir(parents=True)
    (tmp_path / "home").mkdir()
    return cwd


def test_triage_spawns_from_another_directory(tmp_path: Path) -> None:
    cwd = elsewhere(tmp_path)
    argv = ["spawn", "--json", "--config-dir", str(CONFIGS), "triage", "Triage the open issues"]
    proc = subprocess.run(
        [sys.executable, "-m", "launcher.cli", *argv],
        cwd=cwd,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 0, proc.stderr
    (end,) = [e for e in map(json.loads, proc.stdout.splitlines()) if e["type"] == "agent_end"]
    assert end["status"] == "completed" and "acme/widgets#1" in end["result"]


@pytest.mark.anyio
async def test_triage_runs_under_serve_from_another_directory(tmp_path: Path) -> None:
    cwd = elsewhere(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(CONFIGS)],
        env=environment(tmp_path),
        cwd=str(cwd),
    )
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            result = await c.call_tool(
                "spawn_subagent", {"prompt": "Triage the open issues", "agent": "triage"}
            )
    assert not result.is_error, result.content
    assert result.structured_content is not None
    assert result.structured_content["status"] == "completed"
    assert "acme/widgets#1" in result.content[0].text
