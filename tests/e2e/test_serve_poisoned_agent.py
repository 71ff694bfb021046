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


@pytest.mark.anyio
async def test_serve_skips_agent_file_names_that_are_not_printable_utf8(tmp_path: Path) -> None:
    agents = tmp_path / "cfg" / "agents"
    agents.mkdir(parents=True)
    for name in (b"bad\xff.md", b"nl\nx.md", b"esc\x1b[2J.md"):
        (agents / os.fsdecode(name)).write_bytes(b"---\ndescription: x\n---\nHi.\n")
    (agents / "good.md").write_text("---\ndescription: the good one\ntools: read\n---\nHi.\n")
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(tmp_path / "cfg")],
        env=env,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(3 * LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S
        ) as client:
            listed = await client.list_tools()
            listing = await client.call_tool("list_agents", {})
            again = await client.list_tools()  # serve still answers after listing
    spawn = next(tool for tool in listed.tools if tool.name == "spawn_subagent")
    offered = spawn.input_schema["properties"]["agent"]["enum"]
    assert "good" in offered and all(name.isascii() and name.isprintable() for name in offered)
    assert not listing.is_error and again.tools
    stderr = (tmp_path / "serve.err").read_text()
    assert "Traceback" not in stderr
    assert "bad\\xff.md" in stderr and "nl\\nx.md" in stderr and "\x1b" not in stderr
