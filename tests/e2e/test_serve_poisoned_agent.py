"""`serve` answers `initialize` and `tools/list` whatever agent files it finds: a file it
cannot read is skipped, named in a warning, and the other agents are served."""

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
"""Bounds each request; serve pays an SDK import on a busy 2-core machine."""

POISON = {
    "keys.md": "---\non: push\nyes: 1\n---\n",
    "bomb.md": "---\na: &a [x, x]\nb: &b [*a, *a]\ndescription: *b\n---\n",
    "displaced.md": "\n---\nname: wide\ntools: read\n---\n",
    "deep.md": "---\ndescription: " + "[" * 5000 + "\n---\n",
    "binary.md": "---\ndescription: \x00\x01\n---\n",
}


@pytest.mark.anyio
async def test_serve_with_poisoned_agent_files_still_answers(tmp_path: Path) -> None:
    agents = tmp_path / "cfg" / "agents"
    agents.mkdir(parents=True)
    for name, text in POISON.items():
        (agents / name).write_text(text, encoding="utf-8")
    (agents / "good.md").write_text("---\ndescription: the good one\ntools: read\n---\nHi.\n")
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(tmp_path / "cfg")],
        env=env,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(2 * LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S
        ) as client:
            listed = await client.list_tools()
    spawn = next(tool for tool in listed.tools if tool.name == "spawn_subagent")
    offered = spawn.input_schema["properties"]["agent"]["enum"]
    assert "good" in offered
    assert not {"keys", "bomb", "displaced", "deep", "binary", "wide"} & set(offered)
    stderr = (tmp_path / "serve.err").read_text()
    assert "Traceback" not in stderr
    for name in POISON:
        assert str(agents / name) in stderr
