"""MCP Tasks, 2025-11-25 era: `subagent serve` driven by the SDK client in legacy mode.

A task-augmented `spawn_subagent` is answered with a task at once; `tasks/get`,
`tasks/result`, `tasks/list`, `tasks/cancel` and `notifications/tasks/status` follow
the sub-agent (the task id is its agent_id), and an ended task is dropped after its ttl.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND

from tests.e2e.conftest import assert_all_gone, is_alive, read_pid, wait_until
from tests.e2e.serve_tasks_support import (
    LIMIT_S,
    StatusLog,
    TaskObserver,
    legacy_task_call,
    request,
    serve_client,
    serve_config,
)
from tests.e2e.test_serve import one_worker, workers

pytestmark = pytest.mark.e2e

STATUS = "notifications/tasks/status"
TTL_MS = 60_000


def observer(log: StatusLog) -> TaskObserver:
    return TaskObserver("dev.subagent.test/task-status", STATUS, log, claim=False)


@pytest.mark.anyio
async def test_task_spawn_settles_with_the_answer_and_cancel_ends_worker_and_servers(
    tmp_path: Path,
) -> None:
    log = StatusLog()
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="legacy", extension=observer(log)) as client:
            assert client.protocol_version == "2025-11-25"
            tasks = client.server_capabilities.tasks
            assert tasks is not None and tasks.list is not None and tasks.cancel is not None
            assert tasks.requests is not None and tasks.requests.tools is not None
            assert tasks.requests.tools.call is not None
            spawn = next(t for t in (await client.list_tools()).tools if t.name == "spawn_subagent")
            assert spawn.execution is not None and spawn.execution.task_support == "optional"
            # A tool without taskSupport may not run as a task: -32601, and it does not run.
            with pytest.raises(MCPError) as refused:
                await legacy_task_call(client, "stop_subagent", {"agent_id": "sa-x"}, TTL_MS)
            assert refused.value.code == METHOD_NOT_FOUND

            script = f"scripted:{tmp_path / 'quick.yaml'}"
            quick = {"prompt": "go", "ext": ["lazy"], "model": script}
            created = (await legacy_task_call(client, "spawn_subagent", quick, TTL_MS))["task"]
            task_id = created["taskId"]
            assert created["status"] == "working"
            assert created["ttl"] == TTL_MS
            assert created["pollInterval"] > 0
            polled = await request(client, "tasks/get", {"taskId": task_id})
            assert polled["taskId"] == task_id
            assert polled["status"] in ("working", "completed")

            result = await request(client, "tasks/result", {"taskId": task_id})
            assert result["content"][0]["text"] == "done quick"
            assert result["structuredContent"]["status"] == "completed"
            assert result["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": task_id}
            note = await log.wait_for(task_id, "completed")
            assert note["ttl"] == TTL_MS
            listed = await request(client, "tasks/list", {})
            assert {t["taskId"]: t["status"] for t in listed["tasks"]} == {task_id: "completed"}
            # The task IS the sub-agent: the plain tools see it too.
            plain = await client.call_tool("get_subagent_result", {"agent_id": task_id})
            assert plain.structured_content is not None
            assert plain.structured_content["result"] == "done quick"

            (tmp_path / "lazy.pid").unlink()
            long = {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'long.yaml'}"}
            long_id = (await legacy_task_call(client, "spawn_subagent", long, TTL_MS))["task"][
                "taskId"
            ]
            assert wait_until(lambda: (tmp_path / "lazy.pid").exists(), 30)
            server_pid = read_pid(tmp_path / "lazy.pid")
            assert wait_until(lambda: is_alive(server_pid), 5)
            one_worker(tmp_path)
            cancelled = await request(client, "tasks/cancel", {"taskId": long_id})
            assert cancelled["status"] == "cancelled"
            assert_all_gone([server_pid], tmp_path / "nothing")
            assert workers(tmp_path) == []
            await log.wait_for(long_id, "cancelled")
            with pytest.raises(MCPError, match="has ended") as ended:
                await request(client, "tasks/cancel", {"taskId": long_id})
            assert ended.value.code == INVALID_PARAMS
            # tasks/update is the 2026-07-28 extension's; this era has none.
            with pytest.raises(MCPError) as no_update:
                await request(client, "tasks/update", {"taskId": long_id})
            assert no_update.value.code == METHOD_NOT_FOUND
            listed = await request(client, "tasks/list", {})
            statuses = {t["taskId"]: t["status"] for t in listed["tasks"]}
            assert statuses == {task_id: "completed", long_id: "cancelled"}


@pytest.mark.anyio
async def test_an_ended_task_is_dropped_after_its_ttl(tmp_path: Path) -> None:
    log = StatusLog()
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="legacy", extension=observer(log)) as client:
            quick = {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}"}
            short = (await legacy_task_call(client, "spawn_subagent", quick, 1_500))["task"]
            kept = (await legacy_task_call(client, "spawn_subagent", quick, TTL_MS))["task"]
            # The end is announced before the ttl wait starts, so this never misses it.
            for task in (short, kept):
                await log.wait_for(task["taskId"], "completed")

            # Poll until the short task is gone (its ttl is 1.5 s from creation).
            while True:
                listed = await request(client, "tasks/list", {})
                if short["taskId"] not in {t["taskId"] for t in listed["tasks"]}:
                    break
                await anyio.sleep(0.2)
            assert [t["taskId"] for t in listed["tasks"]] == [kept["taskId"]]
            with pytest.raises(MCPError, match="dropped after its ttl"):
                await request(client, "tasks/get", {"taskId": short["taskId"]})
            with pytest.raises(MCPError, match="dropped after its ttl"):
                await request(client, "tasks/result", {"taskId": short["taskId"]})
            gone = await client.call_tool("get_subagent_result", {"agent_id": short["taskId"]})
            assert gone.is_error
            assert "expired" in gone.content[0].text
            still = await request(client, "tasks/get", {"taskId": kept["taskId"]})
            assert still["status"] == "completed"


class _Wire:
    """Newline-delimited JSON-RPC over a process's pipes: the host side, by hand, so the
    test decides exactly when the host goes away (an SDK client would signal serve itself)."""

    def __init__(self, process: anyio.abc.Process) -> None:
        assert process.stdin is not None and process.stdout is not None
        self.stdin = process.stdin
        self.stdout = BufferedByteReceiveStream(process.stdout)

    async def send(self, message: dict[str, Any]) -> None:
        await self.stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")

    async def answer(self, request_id: int) -> dict[str, Any]:
        """The response to `request_id` (notifications before it are skipped)."""
        while True:
            line = await self.stdout.receive_until(b"\n", 1 << 20)
            message = json.loads(line)
            if message.get("id") == request_id:
                return dict(message)


@pytest.mark.anyio
async def test_host_leaving_mid_task_ends_serve_worker_and_servers(tmp_path: Path) -> None:
    config = serve_config(tmp_path)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    command = [sys.executable, "-m", "launcher.cli", "serve", "--config-dir", str(config)]
    # Longer than LIMIT_S: only the host's leaving can end this run within the test.
    (tmp_path / "forever.yaml").write_text("steps:\n  - sleep: 600\n    say: never\n")
    long = {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'forever.yaml'}"}
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        process = await anyio.open_process(command, env=env, cwd=tmp_path, stderr=errlog)
        try:
            wire = _Wire(process)
            hello = {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "host", "version": "0"},
            }
            await wire.send({"id": 1, "method": "initialize", "params": hello})
            assert (await wire.answer(1))["result"]["capabilities"]["tasks"]
            await wire.send({"method": "notifications/initialized"})
            call = {"name": "spawn_subagent", "arguments": long, "task": {"ttl": TTL_MS}}
            await wire.send({"id": 2, "method": "tools/call", "params": call})
            task_id = (await wire.answer(2))["result"]["task"]["taskId"]
            # The host waits on the result, then goes away while the run is mid-way.
            await wire.send({"id": 3, "method": "tasks/result", "params": {"taskId": task_id}})
            assert wait_until(lambda: (tmp_path / "lazy.pid").exists(), 30)
            server_pid = read_pid(tmp_path / "lazy.pid")
            assert wait_until(lambda: is_alive(server_pid), 5)
            worker_pid = one_worker(tmp_path)
            await wire.stdin.aclose()
            # serve ends by itself (nobody signals it) and leaves nothing behind.
            assert await process.wait() == 0
        finally:
            if process.returncode is None:
                process.kill()
            await process.aclose()
    assert_all_gone([server_pid, worker_pid], tmp_path / "nothing")
