"""Secrets cannot be read from a starting worker's descriptors: a probe in a sub-agent's bash
opens every /proc/*/fd/* it can (all of them, as root) while 20 serve workers start, and
finds no secret.

The hand-over used to be a memfd: between `execve` and `restore()` a new worker is dumpable
again, and /proc/PID/fd/N of its memfd gave anyone of the same user the JSON of every key
(issue 23 item 11). It is a socket now, which /proc cannot open.
"""

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

LIMIT_S = 300.0
"""Bounds the test: serve, the probe and 20 workers, each an interpreter, on 2 cores."""
WORKERS = 20
PROBE_LIMIT_S = 280
"""The probe stops itself by then if the stop file never comes."""
PREFIX = "sk-test-HANDOVER-"
SHELL_AGENT = "---\nname: shell\ntools: [bash]\nextensions: false\nsandbox: off\n---\nRun.\n"
"""Unconfined: the probe must see every process (a sandbox hiding them is another layer)."""
QUIET_AGENT = "---\nname: quiet\ntools: []\nextensions: false\n---\nSay done.\n"

PROBE = f"""
import os, stat, sys, time
prefix = {PREFIX!r}.encode()
skip = ("socket:", "pipe:", "anon_inode:", "/dev/")  # pipes: reading would steal data
me, found, opened, passes = os.getpid(), set(), 0, 0
deadline = time.monotonic() + {PROBE_LIMIT_S}
while not os.path.exists("stop") and time.monotonic() < deadline:
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            fds = os.listdir(f"/proc/{{pid}}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{{pid}}/fd/{{fd}}"
            try:
                if os.readlink(path).startswith(skip):
                    continue
                # Files only (a memfd is one): another process's FIFO would block the open.
                if not stat.S_ISREG(os.stat(path).st_mode):
                    continue
                with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
                    data = f.read(1 << 20)
            except OSError:
                continue
            opened += 1
            if prefix in data:
                found.add(os.readlink(path) if os.path.exists(path) else "gone")
    passes += 1
    if passes == 1:
        open("started", "w").close()
open("report.json", "w").write(
    __import__("json").dumps({{"found": sorted(found), "opened": opened, "passes": passes}})
)
"""


@pytest.mark.anyio
async def test_no_secret_in_any_fd_while_workers_start(tmp_path: Path) -> None:
    key = f"{PREFIX}{secrets.token_hex(12)}"
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "probe.py").write_text(PROBE)
    probe_script = tmp_path / "probe.json"
    command = f"{sys.executable} probe.py"
    call = {"tool": "bash", "args": {"command": command, "timeout": PROBE_LIMIT_S + 10}}
    probe_script.write_text(json.dumps({"steps": [{"call": [call]}, {"say": "probed"}]}))
    quiet_script = tmp_path / "quiet.json"
    quiet_script.write_text(json.dumps({"steps": [{"say": "done"}]}))
    config = write_config(tmp_path / "cfg", {}, {"shell": SHELL_AGENT, "quiet": QUIET_AGENT})
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), "OPENAI_API_KEY": key}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    argv = ["-m", "launcher.cli", "serve", "--config-dir", str(config)]
    argv += ["--workspace", str(workspace), "--max-concurrent", "6"]
    argv += ["--scripted-dir", str(tmp_path)]  # the scripts lie outside the workspace
    params = StdioServerParameters(command=sys.executable, args=argv, env=env, cwd=str(tmp_path))
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:

            async def spawn(agent: str, script: Path) -> str:
                args = {"prompt": "go", "agent": agent, "model": f"scripted:{script}"}
                started = await c.call_tool("spawn_subagent", {**args, "background": True})
                assert started.structured_content is not None, started
                return str(started.structured_content["agent_id"])

            async def result(agent_id: str) -> dict:
                args = {"agent_id": agent_id, "wait": True}
                got = await c.call_tool("get_subagent_result", args)
                assert got.structured_content is not None, got
                return dict(got.structured_content)

            prober = await spawn("shell", probe_script)
            while not (workspace / "started").exists():  # noqa: ASYNC110 (a file, no event)
                await anyio.sleep(0.05)
            quiet = [await spawn("quiet", quiet_script) for _ in range(WORKERS)]
            for agent_id in quiet:
                assert (await result(agent_id))["status"] == "completed"
            (workspace / "stop").touch()
            assert (await result(prober))["status"] == "completed"
    report = json.loads((workspace / "report.json").read_text())
    assert report["passes"] > 1 and report["opened"] > 0, report  # the probe did look
    assert report["found"] == [], f"a secret was readable through {report['found']}"
