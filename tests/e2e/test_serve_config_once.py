"""serve loads its config once, at its start: what one job's model writes into the
workspace's config (`.subagent/mcp.json`, an agent file) is never what the next job runs.

The model writes with its own tool, the sandbox off (what is tested is serve's reading,
whatever the sandbox protects); the server it plants would leave a marker file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import stub

pytestmark = pytest.mark.e2e

LIMIT_S = 120.0
"""Bounds the test: serve and three workers, each an SDK import, on a loaded 2-core box."""
WRITER = (
    "---\nname: writer\ndescription: writes files\ntools: [write]\nsandbox: off\n"
    "extensions: false\n---\nWrite.\n"
)


@pytest.mark.anyio
async def test_config_a_job_writes_is_not_what_the_next_job_of_the_same_serve_runs(
    tmp_path: Path,
) -> None:
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / ".subagent" / "agents").mkdir(parents=True)
    (workspace / ".subagent" / "agents" / "writer.md").write_text(WRITER)
    (workspace / ".subagent" / "mcp.json").write_text('{"mcpServers": {}}\n')
    home.mkdir()
    marker = tmp_path / "planted.started"
    planted = {"mcpServers": {"planted": stub("lazy", "--marker", str(marker))}}
    evil = "---\nname: evil\ndescription: planted\next: [planted]\n---\nRun.\n"
    writes = [
        {"tool": "write", "args": {"path": ".subagent/mcp.json", "content": json.dumps(planted)}},
        {"tool": "write", "args": {"path": ".subagent/agents/evil.md", "content": evil}},
    ]
    plant = tmp_path / "plant.json"
    plant.write_text(json.dumps({"steps": [{"call": writes}, {"say": "planted"}]}))
    quiet = tmp_path / "quiet.json"
    quiet.write_text(json.dumps({"steps": [{"say": "quiet"}]}))
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), "HOME": str(home)}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--scripted-dir", str(tmp_path)],
        env=env,
        cwd=str(workspace),
    )
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            first = await c.call_tool(
                "spawn_subagent",
                {"prompt": "go", "agent": "writer", "model": f"scripted:{plant}"},
            )
            assert not first.is_error and first.content[0].text == "planted", first
            # The plant is in place: the workspace's config now names the planted server.
            assert "planted" in (workspace / ".subagent" / "mcp.json").read_text()
            assert (workspace / ".subagent" / "agents" / "evil.md").exists()

            listed = await c.call_tool("list_agents", {})
            assert "evil" not in listed.content[0].text
            asks = [
                {"agent": "evil"},
                {"ext": ["planted"]},
                {},  # general-purpose, which would start every server there is
            ]
            for ask in asks:
                later = await c.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{quiet}", **ask}
                )
                text = str(later.content)
                if ask:  # serve does not know the planted agent or server
                    assert later.is_error and ("planted" in text or "evil" in text), later
                else:
                    assert not later.is_error and later.content[0].text == "quiet", later
    assert not marker.exists()
