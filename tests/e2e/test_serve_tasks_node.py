"""MCP Tasks with the official TypeScript client and Tasks requester, in both eras, on
stdio and on streamable HTTP.

tests/e2e/tasks_client.mjs (Node 22 from .interop, packages pinned by
.ci/install-interop.sh) spawns `subagent serve` over stdio (or talks to a running
`serve --http` with a bearer token), lists the tools, spawns in the foreground, calls
`spawn_subagent` preferring a task, settles it, then cancels a long one. While serve
still runs, this side checks that the cancelled run's worker and server are gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import assert_all_gone, is_alive, processes_mentioning
from tests.e2e.real_servers import INTEROP, NODE_MODULES, REPO, node22, unavailable
from tests.e2e.serve_http_support import http_serve
from tests.e2e.serve_tasks_support import LIMIT_S, serve_config
from tests.e2e.test_serve import workers

pytestmark = pytest.mark.e2e

SCRIPT = Path(__file__).with_name("tasks_client.mjs")
PACKAGES = ("@modelcontextprotocol/client", "@modelcontextprotocol/ext-tasks")
TOKEN = "node-client-token"


def serve_pids(tmp_path: Path) -> list[int]:
    """The live `subagent serve` of this test (found by its SUBAGENT_HOME)."""
    return [
        pid
        for pid in processes_mentioning(str(tmp_path / "state"))
        if b"serve" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    ]


async def _line(stdout: Any, buffer: bytearray) -> dict[str, Any]:
    while b"\n" not in buffer:
        chunk = await stdout.receive()
        buffer.extend(chunk)
    line, _, rest = bytes(buffer).partition(b"\n")
    buffer[:] = rest
    return dict(json.loads(line))


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_ext_tasks_spawn_settles_as_a_task_and_cancel_ends_worker_and_servers(
    tmp_path: Path, era: str
) -> None:
    config = serve_config(tmp_path)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    where = {
        "command": sys.executable,
        "args": ["-m", "launcher.cli", "serve", "--config-dir", str(config)],
        "env": env,
    }
    await drive_node_client(tmp_path, era, where, env)


@pytest.mark.anyio
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_ext_tasks_over_http_with_a_token_lists_spawns_and_cancels(
    tmp_path: Path, era: str
) -> None:
    with http_serve(tmp_path, env={"SUBAGENT_SERVE_TOKEN": TOKEN}) as serve:
        env = {**os.environ, "SUBAGENT_HOME": str(serve.home)}
        await drive_node_client(tmp_path, era, {"url": serve.url, "token": TOKEN}, env)
        assert "Traceback" not in serve.stderr()


async def drive_node_client(
    tmp_path: Path, era: str, where: dict[str, Any], env: dict[str, str]
) -> None:
    """Run tasks_client.mjs against serve (`where`: stdio command or HTTP url) and check
    what it saw: tools, a foreground answer, a settled task, a cancel that ended its run."""
    node = node22()
    for package in PACKAGES:
        if not (NODE_MODULES / package / "package.json").is_file():
            unavailable(f"npm package {package} is not installed under {INTEROP}")
    spec = {
        "interop": str(INTEROP),
        "era": era,
        **where,
        "cwd": str(tmp_path),
        "quick": f"scripted:{tmp_path / 'quick.yaml'}",
        "long": f"scripted:{tmp_path / 'long.yaml'}",
        "pidfile": str(tmp_path / "lazy.pid"),
    }
    with (tmp_path / "node.err").open("w") as errlog, anyio.fail_after(LIMIT_S * 2):
        async with await anyio.open_process(
            [str(node), str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            cwd=str(tmp_path),
            env={**env, "TASKS_E2E": json.dumps(spec), "PYTHONPATH": str(REPO)},
        ) as client:
            assert client.stdin is not None and client.stdout is not None
            buffer = bytearray()
            try:
                cancelled = await _line(client.stdout, buffer)
            except (anyio.EndOfStream, ValueError):
                await client.wait()
                pytest.fail(f"node client failed:\n{(tmp_path / 'node.err').read_text()}")
            print(json.dumps(cancelled))
            assert cancelled["phase"] == "cancelled"
            assert cancelled["kind"] == "task"
            assert cancelled["outcome"] == "cancelled"
            # serve is still up: what is gone went with the cancel, not with serve's end.
            assert len(serve_pids(tmp_path)) == 1
            assert_all_gone([cancelled["serverPid"]], tmp_path / "nothing")
            assert workers(tmp_path) == []
            assert all(is_alive(pid) for pid in serve_pids(tmp_path))
            await client.stdin.send(b"go on\n")
            done = await _line(client.stdout, buffer)
            assert await client.wait() == 0
    print(json.dumps(done))
    assert done["era"] == era
    assert "spawn_subagent" in done["tools"]
    assert done["foreground"] == {"text": "done quick", "isError": False}
    first = done["first"]
    assert first["kind"] == "task"
    assert first["taskId"].startswith("sa-")
    assert first["outcome"] == "completed"
    assert first["text"] == "done quick"
    assert first["lastTask"]["status"] == "completed"
    assert done["second"]["taskId"] != first["taskId"]
    if era == "legacy":
        assert done["serverTasks"]["requests"] == {"tools": {"call": {}}}
        assert first["lastTask"]["ttl"] == 600_000  # the requested retention, honoured
        statuses = {t["taskId"]: t["status"] for t in done["listed"]}
        assert statuses == {first["taskId"]: "completed", done["second"]["taskId"]: "cancelled"}
    else:
        assert done["serverExtensions"] == {"io.modelcontextprotocol/tasks": {}}
        assert first["lastTask"]["ttlMs"] > 0
