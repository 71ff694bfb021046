"""A serve worker's session leaves no orphan either: a server whose command line starts a
`setsid -f` sleeper before it execs the server leaked one process per sub-agent (issue 23
item 2). Without a cgroup (`SUBAGENT_CGROUP=off`, as for every unprivileged user) the
worker, child subreaper, ends it when its session ends."""

from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher.procs.cgroup import OFF_ENV
from tests.e2e.conftest import GONE_LIMIT_S, processes_mentioning, wait_until
from tests.e2e.spawn_support import write_config

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux subreaper"),
]

LIMIT_S = 120.0
"""Bounds the test: serve, two workers and their SDK stub servers on 2 cores."""
AGENT = "---\nname: gh\ntools: [ext:github]\n---\nRun.\n"


@pytest.mark.anyio
async def test_each_worker_session_ends_its_servers_escapee(tmp_path: Path) -> None:
    mark = f"3301.{secrets.randbelow(10**6):06d}"
    server = {
        "command": "sh",
        "args": ["-c", f"setsid -f sleep {mark}; exec {sys.executable} -m mcp_servers.github"],
    }
    config = write_config(tmp_path / "cfg", {"github": server}, {"gh": AGENT})
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: done\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env.update({"SUBAGENT_HOME": str(tmp_path / "state"), OFF_ENV: "off"})
    argv = ["-m", "launcher.cli", "serve", "--config-dir", str(config)]
    argv += ["--workspace", str(tmp_path)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(tmp_path))
    try:
        with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S
            ) as client:
                for _ in range(2):
                    args = {"prompt": "go", "agent": "gh", "model": f"scripted:{script}"}
                    done = await client.call_tool("spawn_subagent", args)
                    assert done.structured_content is not None, done
                    assert done.structured_content["status"] == "completed"
                    # The worker has ended its session: its escapee must be gone with it.
                    wait_until(lambda: not processes_mentioning(mark), GONE_LIMIT_S)
                    assert processes_mentioning(mark) == [], "a worker's escapee outlived it"
    finally:
        for pid in processes_mentioning(mark):
            os.kill(pid, 9)
