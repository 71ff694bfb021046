"""`subagent serve`: a sub-agent's bash cannot read serve's secrets from its worker's (or any
process's) environment block; the worker still has them (its model and `${VAR}`s work)."""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.spawn_support import write_config

pytestmark = pytest.mark.e2e

LIMIT_S = 90.0
"""Bounds the test; serve and a worker each pay an SDK import on 2 cores."""
SHELL_AGENT = "---\nname: shell\ntools: [bash]\nextensions: false\n---\nRun.\n"


@pytest.mark.anyio
async def test_worker_environment_block_holds_no_secret(tmp_path: Path) -> None:
    key = f"sk-test-SECRET-{secrets.token_hex(8)}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    commands = [
        "tr '\\0' '\\n' < /proc/$PPID/environ > parent.txt",
        "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a sk-test- > all.txt; true",
    ]
    steps = [{"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands]
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"steps": [*steps, {"say": "done"}]}))
    unused = {"command": "true", "env": {"K": "${OPENAI_API_KEY}"}}
    config = write_config(tmp_path / "cfg", {"unused": unused}, {"shell": SHELL_AGENT})
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": key}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "launcher.cli",
            "serve",
            "--config-dir",
            str(config),
            "--workspace",
            str(workspace),
            "--scripted-dir",  # the script lies outside the workspace
            str(tmp_path),
        ],
        env=env,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            result = await c.call_tool(
                "spawn_subagent",
                {"prompt": "go", "agent": "shell", "model": f"scripted:{script}"},
            )
    assert result.structured_content is not None, result
    assert result.structured_content["status"] == "completed", result.structured_content
    # The confined shell holds no capability, root's neither: the worker (non-dumpable
    # while it confines) keeps even its clean block to itself.
    assert not (workspace / "parent.txt").exists()
    assert key not in (workspace / "all.txt").read_text()
