"""`subagent serve --project DIR`: a project's agents of every dialect, served as a host
starts serve (from anywhere), one of them run with the scripted model."""

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

SERVE = [sys.executable, "-m", "launcher.cli", "serve"]
LIMIT_S = 90.0
"""Bounds the test; serve and a worker each pay an SDK import on 2 cores."""

CLAUDE_AGENT = """---
name: notes-reader
description: Reads the project's notes.
tools: Read
model: scripted:notes.yaml
---
Read NOTES.md and say what it says.
"""
SCRIPT = """steps:
  - call: [{tool: Read, args: {path: NOTES.md}}]
  - say: notes read
"""


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    agents = root / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "notes-reader.md").write_text(CLAUDE_AGENT)
    (agents / "notes.yaml").write_text(SCRIPT)
    (root / ".subagent" / "agents").mkdir(parents=True)
    (root / ".subagent" / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: Helps.\n---\nHelp.\n"
    )
    (root / ".codex" / "agents").mkdir(parents=True)
    (root / ".codex" / "agents" / "rev.toml").write_text(
        'name = "codex-reviewer"\ndescription = "Reviews."\nsandbox_mode = "read-only"\n'
        'developer_instructions = "Review."\n'
    )
    (root / "NOTES.md").write_text("the notes\n")
    return root


@pytest.mark.anyio
async def test_serve_project_lists_and_runs_the_projects_agents(tmp_path: Path) -> None:
    root = project(tmp_path)
    elsewhere = tmp_path / "host-cwd"
    elsewhere.mkdir()
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--project", str(root)],
        env=env,
        cwd=str(elsewhere),
    )
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            tools = (await c.list_tools()).tools
            spawn = next(t for t in tools if t.name == "spawn_subagent")
            agents = spawn.input_schema["properties"]["agent"]["enum"]
            assert {"notes-reader", "helper", "codex-reviewer"} <= set(agents)
            result = await c.call_tool(
                "spawn_subagent", {"agent": "notes-reader", "prompt": "Read the notes."}
            )
    assert not result.is_error, result
    answer = json.dumps(result.structured_content) + result.content[0].text  # type: ignore[union-attr]
    assert "notes read" in answer


def test_serve_project_with_a_config_dir_is_a_usage_error(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    done = subprocess.run(
        [*SERVE, "--project", str(root), "--config-dir", str(root / ".subagent")],
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2, done.stderr
    assert "--project" in done.stderr and "Traceback" not in done.stderr
