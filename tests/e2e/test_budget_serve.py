"""serve: a `spawn_subagent` with `timeout` ends with the `timeout` status, reported through
the Tasks of both eras (2025-11-25 and the 2026-07-28 extension) and get_subagent_result;
a worker too stuck to end its own run is killed past its timeout, never `running` for ever."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.conftest import assert_all_gone
from tests.e2e.serve_tasks_support import (
    LIMIT_S,
    CreatedTask,
    StatusLog,
    TaskObserver,
    legacy_task_call,
    request,
    serve_client,
)
from tests.e2e.test_serve import one_worker

pytestmark = pytest.mark.e2e

TIMEOUT_S = 3
"""Far below the script's 60 s of thinking: the limit, not the script, ends the run."""
POLL_S = 0.1
STUCK_TIMEOUT_S = 20
"""The stuck run's limit: its worker is stopped (SIGSTOP) within a few seconds of starting,
well before it, even on a loaded box."""


def long_spawn(tmp_path: Path) -> dict[str, Any]:
    # No server: the run's clock starts with its session, so the limit falls in the thinking.
    model = f"scripted:{tmp_path / 'long.yaml'}"
    return {"prompt": "go", "model": model, "timeout": TIMEOUT_S}


def assert_timed_out(structured: dict[str, Any]) -> None:
    assert structured["status"] == "timeout"
    assert structured["usage"]["turns"] == 1


@pytest.mark.anyio
async def test_a_spawn_with_timeout_ends_timeout_in_the_2025_11_25_era(tmp_path: Path) -> None:
    observer = TaskObserver(
        "dev.subagent.test/s", "notifications/tasks/status", StatusLog(), claim=False
    )
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="legacy", extension=observer) as client:
            assert client.protocol_version == "2025-11-25"
            created = await legacy_task_call(client, "spawn_subagent", long_spawn(tmp_path), 60_000)
            task_id = created["task"]["taskId"]
            result = await request(client, "tasks/result", {"taskId": task_id})
            assert_timed_out(result["structuredContent"])
            assert result["content"][0]["text"].startswith("[timeout: timeout: the run took 3 s]")
            polled = await request(client, "tasks/get", {"taskId": task_id})
            assert polled["status"] == "completed"  # ended, never `working` for ever
            plain = await client.call_tool("get_subagent_result", {"agent_id": task_id})
            assert plain.structured_content is not None
            assert plain.structured_content["status"] == "timeout"


@pytest.mark.anyio
async def test_a_spawn_with_timeout_ends_timeout_in_the_2026_07_28_era(tmp_path: Path) -> None:
    extension = TaskObserver(
        "io.modelcontextprotocol/tasks", "notifications/tasks", StatusLog(), claim=True
    )
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="2026-07-28", extension=extension) as client:
            assert client.protocol_version == "2026-07-28"
            created = await client.session.call_tool(
                "spawn_subagent", long_spawn(tmp_path), allow_claimed=True
            )
            assert isinstance(created, CreatedTask)
            got = await request(client, "tasks/get", {"taskId": created.task_id})
            while got["status"] == "working":  # bounded by fail_after
                await anyio.sleep(POLL_S)
                got = await request(client, "tasks/get", {"taskId": created.task_id})
            assert got["status"] == "completed"
            assert_timed_out(got["result"]["structuredContent"])


@pytest.mark.anyio
async def test_a_stuck_worker_is_killed_past_its_timeout_and_reported_timeout(
    tmp_path: Path,
) -> None:
    observer = TaskObserver(
        "dev.subagent.test/s", "notifications/tasks/status", StatusLog(), claim=False
    )
    with anyio.fail_after(LIMIT_S):
        async with serve_client(tmp_path, mode="legacy", extension=observer) as client:
            # Stopped long before its own timeout ends the run: only serve can end it then.
            args = {**long_spawn(tmp_path), "timeout": STUCK_TIMEOUT_S, "background": True}
            spawned = await client.call_tool("spawn_subagent", args)
            assert spawned.structured_content is not None
            agent_id = spawned.structured_content["agent_id"]
            worker = one_worker(tmp_path)
            os.kill(worker, signal.SIGSTOP)  # stuck: it can neither end its run nor answer
            ended = await client.call_tool(
                "get_subagent_result", {"agent_id": agent_id, "wait": True}
            )
            assert ended.structured_content is not None
            assert ended.structured_content["status"] == "timeout"
            assert "killed" in ended.structured_content["error"]
            assert_all_gone([worker], tmp_path / "nothing")
