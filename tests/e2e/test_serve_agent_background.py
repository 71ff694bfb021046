"""An agent file's `background` (Claude Code) / `run_in_background` (pi) is serve's default
`background` for that agent; an explicit argument still wins."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

pytestmark = pytest.mark.e2e

LIMIT_S = 90.0
"""Bounds the test; serve and a worker each pay an SDK import on 2 cores."""


@pytest.mark.anyio
async def test_agent_background_is_the_default_of_spawn_subagent(tmp_path: Path) -> None:
    (tmp_path / "say.yaml").write_text("steps:\n  - say: done\n")
    agents = tmp_path / "cfg" / "agents"
    agents.mkdir(parents=True)
    (tmp_path / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
    (agents / "bg.md").write_text(
        "---\nrun_in_background: true\nmodel: scripted:../../say.yaml\n---\nx\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "state")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(tmp_path / "cfg")],
        env=env,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            started = await c.call_tool("spawn_subagent", {"prompt": "go", "agent": "bg"})
            assert started.structured_content is not None
            assert set(started.structured_content) == {"agent_id"}  # returned at once
            agent_id = started.structured_content["agent_id"]
            done = await c.call_tool("get_subagent_result", {"agent_id": agent_id, "wait": True})
            assert done.structured_content is not None
            assert done.structured_content["status"] == "completed"
            waited = await c.call_tool(
                "spawn_subagent", {"prompt": "go", "agent": "bg", "background": False}
            )
            assert waited.content[0].text == "done"
