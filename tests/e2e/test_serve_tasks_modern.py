"""MCP Tasks, 2026-07-28 era: the `io.modelcontextprotocol/tasks` extension (SEP-2663).

The SDK client is forced into 2026-07-28 and declares the extension; `spawn_subagent`
answers with a CreateTaskResult, `tasks/get` carries the result inline, `tasks/cancel`
ends the worker and its servers, and status changes arrive on a `subscriptions/listen`
stream that asked for the tasks' ids.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import MCPError
from mcp_types import INVALID_PARAMS, METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY

from tests.e2e.conftest import assert_all_gone, is_alive, read_pid, wait_until
from tests.e2e.serve_tasks_support import (
    LIMIT_S,
    CreatedTask,
    StatusLog,
    TaskObserver,
    request,
    serve_client,
)
from tests.e2e.test_serve import one_worker

pytestmark = pytest.mark.e2e

TASKS = "io.modelcontextprotocol/tasks"


@pytest.mark.anyio
async def test_extension_task_settles_inline_and_cancel_ends_worker_and_servers(
    tmp_path: Path,
) -> None:
    log = StatusLog()
    acked: list[dict[str, Any]] = []
    ack_seen = anyio.Event()

    async def on_message(message: Any) -> None:
        if isinstance(message, types.SubscriptionsAcknowledgedNotification):
            acked.append(message.params.notifications.model_dump(by_alias=True))
            ack_seen.set()

    extension = TaskObserver(TASKS, "notifications/tasks", log, claim=True)
    with anyio.fail_after(LIMIT_S):
        # One sub-agent at a time: the second task waits (working) until the first ends,
        # so the listen stream below is open before either changes.
        async with serve_client(
            tmp_path,
            "--max-concurrent",
            "1",
            mode="2026-07-28",
            extension=extension,
            message_handler=on_message,
        ) as client:
            assert client.protocol_version == "2026-07-28"
            # Adopting the version directly skips discovery: ask for the capabilities.
            discovered = await request(client, "server/discover", {})
            assert discovered["capabilities"]["extensions"][TASKS] == {}

            long = {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'long.yaml'}"}
            first = await client.session.call_tool("spawn_subagent", long, allow_claimed=True)
            assert isinstance(first, CreatedTask)
            assert first.status == "working"
            assert first.ttl_ms is not None and first.ttl_ms > 0
            assert first.poll_interval_ms is not None and first.poll_interval_ms > 0
            quick = {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}"}
            second = await client.session.call_tool("spawn_subagent", quick, allow_claimed=True)
            assert isinstance(second, CreatedTask)
            ids = [first.task_id, second.task_id]

            async with anyio.create_task_group() as tg:
                listen = {"notifications": {"taskIds": ids}}
                tg.start_soon(request, client, "subscriptions/listen", listen)
                await ack_seen.wait()
                assert sorted(acked[0]["taskIds"]) == sorted(ids)

                assert wait_until(lambda: (tmp_path / "lazy.pid").exists(), 30)
                server_pid = read_pid(tmp_path / "lazy.pid")
                assert wait_until(lambda: is_alive(server_pid), 5)
                worker_pid = one_worker(tmp_path)
                polled = await request(client, "tasks/get", {"taskId": first.task_id})
                assert polled["status"] == "working"
                assert polled["resultType"] == "complete"
                assert await request(client, "tasks/cancel", {"taskId": first.task_id}) == {
                    "resultType": "complete",
                    "_meta": polled["_meta"],
                }
                assert_all_gone([server_pid, worker_pid], tmp_path / "nothing")
                cancelled = await log.wait_for(first.task_id, "cancelled")
                assert cancelled["_meta"]["io.modelcontextprotocol/subscriptionId"] is not None

                # The queued task runs now; its end arrives on the same stream.
                completed = await log.wait_for(second.task_id, "completed")
                assert completed["result"]["content"][0]["text"] == "done quick"
                tg.cancel_scope.cancel()

            got = await request(client, "tasks/get", {"taskId": second.task_id})
            assert got["status"] == "completed"
            assert got["result"]["resultType"] == "complete"
            assert got["result"]["content"][0]["text"] == "done quick"
            assert got["result"]["structuredContent"]["agent_id"] == second.task_id
            assert (await request(client, "tasks/get", {"taskId": first.task_id}))[
                "status"
            ] == "cancelled"
            # Nothing waits for input: tasks/update is an empty ack that changes nothing.
            update = {"taskId": second.task_id, "inputResponses": {"k": {"action": "accept"}}}
            assert (await request(client, "tasks/update", update))["resultType"] == "complete"
            assert (await request(client, "tasks/get", {"taskId": second.task_id}))[
                "status"
            ] == "completed"
            with pytest.raises(MCPError) as unknown_update:
                await request(client, "tasks/update", {"taskId": "sa-00000000"})
            assert unknown_update.value.code == INVALID_PARAMS
            # An ended task: cancel is still acknowledged (empty) and changes nothing.
            for ended in (first.task_id, second.task_id):
                assert await request(client, "tasks/cancel", {"taskId": ended}) == {
                    "resultType": "complete",
                    "_meta": polled["_meta"],
                }
            got = await request(client, "tasks/get", {"taskId": second.task_id})
            assert got["status"] == "completed"
            with pytest.raises(MCPError, match="dropped after its ttl") as unknown:
                await request(client, "tasks/cancel", {"taskId": "sa-00000000"})
            assert unknown.value.code == INVALID_PARAMS
            # The extension has no tasks/list or tasks/result (the 2025-11-25 era's): -32601.
            for method in ("tasks/list", "tasks/result"):
                with pytest.raises(MCPError, match="Method not found") as missing:
                    await request(client, method, {"taskId": second.task_id})
                assert missing.value.code == METHOD_NOT_FOUND
            plain = await client.call_tool("get_subagent_result", {"agent_id": second.task_id})
            assert plain.structured_content is not None
            assert plain.structured_content["status"] == "completed"


@pytest.mark.anyio
async def test_an_ended_task_is_dropped_after_the_serve_ttl(tmp_path: Path) -> None:
    extension = TaskObserver(TASKS, "notifications/tasks", StatusLog(), claim=True)
    with anyio.fail_after(LIMIT_S):
        # The extension lets the server choose the ttl: here `serve --task-ttl`.
        async with serve_client(
            tmp_path, "--task-ttl", "1", mode="2026-07-28", extension=extension
        ) as client:
            quick = {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}"}
            task = await client.session.call_tool("spawn_subagent", quick, allow_claimed=True)
            assert isinstance(task, CreatedTask)
            assert task.ttl_ms == 1_000
            while True:  # poll as a host would, until the task is gone
                try:
                    got = await request(client, "tasks/get", {"taskId": task.task_id})
                except MCPError as exc:
                    assert "dropped after its ttl" in str(exc)
                    break
                assert got["status"] in ("working", "completed")
                await anyio.sleep(0.1)
            gone = await client.call_tool("get_subagent_result", {"agent_id": task.task_id})
            assert gone.is_error
            assert "expired" in gone.content[0].text


@pytest.mark.anyio
async def test_a_client_without_the_extension_gets_plain_results_and_no_task_stream(
    tmp_path: Path,
) -> None:
    # Declares some other extension, not the tasks one.
    other = TaskObserver("dev.subagent.test/other", "notifications/tasks", StatusLog(), claim=False)
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="2026-07-28", extension=other) as client:
            quick = {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}"}
            plain = await client.call_tool("spawn_subagent", quick)
            assert isinstance(plain, types.CallToolResult)
            assert plain.content[0].text == "done quick"
            assert plain.structured_content is not None
            agent_id = plain.structured_content["agent_id"]
            listen = {"notifications": {"taskIds": [agent_id]}}
            with pytest.raises(MCPError) as refused:
                await request(client, "subscriptions/listen", listen)
            assert refused.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY
            assert refused.value.data["requiredCapabilities"] == {"extensions": {TASKS: {}}}
            # The extension's methods too, whether or not the id is known (SEP-2663: -32021).
            for method, params in (
                ("tasks/get", {"taskId": agent_id}),
                ("tasks/update", {"taskId": agent_id, "inputResponses": {}}),
                ("tasks/cancel", {"taskId": "sa-00000000"}),
            ):
                with pytest.raises(MCPError) as gated:
                    await request(client, method, params)
                assert gated.value.code == MISSING_REQUIRED_CLIENT_CAPABILITY, method
