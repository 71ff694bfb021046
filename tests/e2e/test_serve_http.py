"""`serve --http` with the SDK's streamable-HTTP client, in both eras: the same tools, Tasks,
progress and cancels as on stdio, several hosts at once, each run in the worker pool."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from tests.e2e.conftest import assert_all_gone, is_alive, read_pid, wait_until
from tests.e2e.serve_http_support import LIMIT_S, http_client, http_serve, pid_written, task_until
from tests.e2e.serve_tasks_support import (
    CreatedTask,
    StatusLog,
    TaskObserver,
    legacy_task_call,
    request,
)
from tests.e2e.test_serve import workers

pytestmark = pytest.mark.e2e

TASKS = "io.modelcontextprotocol/tasks"
TOOLS = ["spawn_subagent", "get_subagent_result", "steer_subagent", "stop_subagent", "list_agents"]


def spawn_args(tmp_path: Path, script: str, **more: Any) -> dict[str, Any]:
    return {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / script}", **more}


async def until_status(client: Any, agent_id: str, status: str) -> dict[str, Any]:
    """Poll get_subagent_result as a host would (the caller bounds the wait)."""
    while True:
        got = await client.call_tool("get_subagent_result", {"agent_id": agent_id})
        if got.structured_content["status"] == status:
            return dict(got.structured_content)
        await anyio.sleep(0.1)


@pytest.mark.anyio
async def test_legacy_era_lists_spawns_polls_runs_a_task_and_cancels(tmp_path: Path) -> None:
    progress: list[str] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(str(message))

    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(serve.url, mode="legacy") as client:
            assert client.protocol_version == "2025-11-25"
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == TOOLS
            spawn = next(t for t in listed.tools if t.name == "spawn_subagent")
            assert spawn.execution is not None and spawn.execution.task_support == "optional"

            quick = spawn_args(tmp_path, "quick.yaml")
            done = await client.call_tool("spawn_subagent", quick, progress_callback=on_progress)
            assert done.content[0].text == "done quick"
            assert done.structured_content["status"] == "completed"
            assert "turn 1: lazy__echo" in progress

            created = await legacy_task_call(client, "spawn_subagent", quick, 60_000)
            task_id = created["task"]["taskId"]
            result = await request(client, "tasks/result", {"taskId": task_id})
            assert result["content"][0]["text"] == "done quick"
            assert (await request(client, "tasks/get", {"taskId": task_id}))["status"] == (
                "completed"
            )

            # A long run in the background: polled, then stopped; its processes go with it.
            bg = await client.call_tool(
                "spawn_subagent", spawn_args(tmp_path, "long.yaml", background=True)
            )
            agent_id = bg.structured_content["agent_id"]
            assert wait_until(lambda: pid_written(tmp_path / "lazy.pid"), 60)
            await until_status(client, agent_id, "running")
            stopped = await client.call_tool("stop_subagent", {"agent_id": agent_id})
            assert stopped.content[0].text == "stopped"

            long_task = await legacy_task_call(
                client, "spawn_subagent", spawn_args(tmp_path, "long.yaml"), 60_000
            )
            long_id = long_task["task"]["taskId"]
            cancelled = await request(client, "tasks/cancel", {"taskId": long_id})
            assert cancelled["status"] == "cancelled"
            assert wait_until(lambda: workers(tmp_path) == [], 30), workers(tmp_path)


@pytest.mark.anyio
async def test_modern_era_lists_spawns_runs_a_task_and_cancels_it(tmp_path: Path) -> None:
    extension = TaskObserver(TASKS, "notifications/tasks", StatusLog(), claim=True)
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(serve.url, mode="2026-07-28") as plain_client:
            assert plain_client.protocol_version == "2026-07-28"
            discovered = await request(plain_client, "server/discover", {})
            assert discovered["capabilities"]["extensions"][TASKS] == {}
            assert "tasks" not in discovered["capabilities"]
            assert "2026-07-28" in discovered["supportedVersions"]
            # serve serves subscriptions/listen (task notices) but never changes its tools:
            # discover must not promise tools/list_changed.
            assert discovered["capabilities"]["tools"].get("listChanged") is False
            listed = await plain_client.list_tools()
            assert [t.name for t in listed.tools] == TOOLS
            done = await plain_client.call_tool(
                "spawn_subagent", spawn_args(tmp_path, "quick.yaml")
            )
            assert isinstance(done, types.CallToolResult)
            assert done.content[0].text == "done quick"

        async with http_client(serve.url, mode="2026-07-28", extensions=[extension]) as client:
            quick = spawn_args(tmp_path, "quick.yaml")
            task = await client.session.call_tool("spawn_subagent", quick, allow_claimed=True)
            assert isinstance(task, CreatedTask)
            got = await task_until(client, task.task_id, "completed")
            assert got["result"]["content"][0]["text"] == "done quick"

            (tmp_path / "lazy.pid").unlink(missing_ok=True)
            long = spawn_args(tmp_path, "long.yaml")
            running = await client.session.call_tool("spawn_subagent", long, allow_claimed=True)
            assert isinstance(running, CreatedTask)
            assert wait_until(lambda: pid_written(tmp_path / "lazy.pid"), 60)
            server_pid = read_pid(tmp_path / "lazy.pid")
            assert wait_until(lambda: is_alive(server_pid), 10)
            ack = await request(client, "tasks/cancel", {"taskId": running.task_id})
            assert ack["resultType"] == "complete"
            assert_all_gone([server_pid], tmp_path / "nothing")
            got = await request(client, "tasks/get", {"taskId": running.task_id})
            assert got["status"] == "cancelled"


@pytest.mark.anyio
async def test_eight_hosts_at_once_each_get_their_own_answer(tmp_path: Path) -> None:
    answers: dict[int, str] = {}
    with http_serve(tmp_path, "--max-concurrent", "4") as serve, anyio.fail_after(LIMIT_S * 2):

        async def host(number: int) -> None:
            mode = "legacy" if number % 2 else "2026-07-28"
            script = tmp_path / f"host{number}.yaml"
            script.write_text(f"steps:\n  - say: answer {number}\n")
            async with http_client(serve.url, mode=mode) as client:
                model = f"scripted:{script}"
                got = await client.call_tool("spawn_subagent", {"prompt": "go", "model": model})
                answers[number] = got.content[0].text

        async with anyio.create_task_group() as tg:
            for number in range(8):
                tg.start_soon(host, number)
    assert answers == {n: f"answer {n}" for n in range(8)}
