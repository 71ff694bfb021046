"""`subagent serve` as a real MCP server over stdio, driven by a plain SDK client.

Sub-agents run as worker processes with the scripted model and the lazy stub server.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher.backend.pool import STOP_GRACE_S
from launcher.backend.spare import SPARE_NAME
from tests.e2e.conftest import (
    assert_all_gone,
    is_alive,
    parse_events,
    processes_mentioning,
    read_pid,
    wait_until,
)
from tests.e2e.spare_support import is_spare, process_name
from tests.e2e.spawn_support import stub, write_config

pytestmark = pytest.mark.e2e

LIMIT_S = 90.0
"""Bounds each test; serve, a worker and a stub each pay an SDK import on 2 cores."""

SCRIPTS = {
    "quick.yaml": "steps:\n  - call: [{tool: lazy__echo, args: {text: hi}}]\n  - say: done quick\n",
    "think.yaml": "steps:\n  - sleep: 3\n    say: first answer\n",
    "long.yaml": "steps:\n  - sleep: 60\n    say: never\n",
}


@asynccontextmanager
async def serve(
    tmp_path: Path, *extra: str, servers: dict[str, Any] | None = None
) -> AsyncIterator[Client]:
    """serve on a config of `servers` (default: the lazy stub), read once at its start."""
    for name, text in SCRIPTS.items():
        (tmp_path / name).write_text(text)
    lazy = stub(
        "lazy", "--marker", str(tmp_path / "lazy.started"), "--pidfile", str(tmp_path / "lazy.pid")
    )
    config = write_config(tmp_path / "cfg", {"lazy": lazy} if servers is None else servers)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config), *extra],
        env=env,
        cwd=str(tmp_path),
    )
    with (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            yield c


def worker_processes(tmp_path: Path) -> list[int]:
    """Live worker processes of this test's serve (found by its SUBAGENT_HOME), spares too."""
    found = []
    for pid in processes_mentioning(str(tmp_path / "state")):
        with contextlib.suppress(OSError):  # it ended meanwhile
            if b"launcher.backend.worker" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def workers(tmp_path: Path) -> list[int]:
    """Live sub-agent workers of this test's serve; the spare waiting for the next spawn is
    not one (spare_support.py checks it)."""
    return [pid for pid in worker_processes(tmp_path) if not is_spare(pid)]


def started_at(pid: int) -> int:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19])


def one_worker(tmp_path: Path) -> int:
    """The one worker running this test's session. A spare taken while still importing keeps
    its importing name a moment, and the replacement started as the spawn took it looks
    like a worker until it has named itself; the taken one is the older of the two."""
    seen: list[int] = []

    def single() -> bool:
        seen[:] = workers(tmp_path)
        if len(seen) != 1:
            return False
        waiting = set(spares_waiting(tmp_path))
        others = [p for p in worker_processes(tmp_path) if p not in waiting and p != seen[0]]
        try:
            return all(started_at(seen[0]) <= started_at(p) for p in others)
        except (OSError, IndexError, ValueError):  # one of them ended while being read
            return False

    assert wait_until(single, 30), seen
    return seen[0]


def spares_waiting(tmp_path: Path) -> list[int]:
    """This serve's spares done importing and waiting for a job (never a taken one)."""
    return [p for p in worker_processes(tmp_path) if process_name(p) == SPARE_NAME]


def structured(result: Any) -> dict[str, Any]:
    assert result.structured_content is not None, result
    return dict(result.structured_content)


@pytest.mark.anyio
async def test_foreground_spawn_returns_the_answer_and_serve_starts_no_server_itself(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path) as client:
            listed = await client.call_tool("list_agents", {})
            assert "general-purpose" in listed.content[0].text
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == {
                "spawn_subagent",
                "get_subagent_result",
                "steer_subagent",
                "stop_subagent",
                "list_agents",
            }
            assert not (tmp_path / "lazy.started").exists()

            result = await client.call_tool(
                "spawn_subagent",
                {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"},
            )
            assert not result.is_error
            assert result.content[0].text == "done quick"
            info = structured(result)
            assert info["status"] == "completed"
            assert info["turns"] == 2
            assert info["usage"]["tool_calls"] == 1
            # The worker started the server at its own session start, and ended it.
            assert (tmp_path / "lazy.started").exists()
            assert_all_gone([read_pid(tmp_path / "lazy.pid")], tmp_path / "nothing")

            bad = await client.call_tool("spawn_subagent", {"prompt": "go", "agent": "nobody"})
            assert bad.is_error
            assert "nobody" in bad.content[0].text


@pytest.mark.anyio
async def test_background_steer_adds_a_turn_and_stop_ends_worker_and_servers(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path) as client:
            spawned = await client.call_tool(
                "spawn_subagent",
                {
                    "prompt": "go",
                    "background": True,
                    "model": f"scripted:{tmp_path / 'think.yaml'}",
                },
            )
            agent_id = structured(spawned)["agent_id"]
            # Steer once turn 1 is under way (the model "thinks" for 3 s).
            for _ in range(300):
                status = await client.call_tool("get_subagent_result", {"agent_id": agent_id})
                if structured(status)["turns"] >= 1:
                    break
                await anyio.sleep(0.1)
            steer = await client.call_tool(
                "steer_subagent", {"agent_id": agent_id, "message": "Also check X."}
            )
            assert not steer.is_error
            done = structured(
                await client.call_tool("get_subagent_result", {"agent_id": agent_id, "wait": True})
            )
            assert done["status"] == "completed"
            assert done["result"] == "first answer"
            # Without the steering message the run would end after turn 1.
            assert done["turns"] == 2

            # The first sub-agent (no ext: every server) started and ended the stub too.
            (tmp_path / "lazy.pid").unlink()
            long = await client.call_tool(
                "spawn_subagent",
                {
                    "prompt": "go",
                    "ext": ["lazy"],
                    "background": True,
                    "model": f"scripted:{tmp_path / 'long.yaml'}",
                },
            )
            long_id = structured(long)["agent_id"]
            assert wait_until(lambda: (tmp_path / "lazy.pid").exists(), 30)
            server_pid = read_pid(tmp_path / "lazy.pid")
            assert wait_until(lambda: is_alive(server_pid), 5)
            running = structured(
                await client.call_tool("get_subagent_result", {"agent_id": long_id})
            )
            assert running["status"] == "running"
            # A spare just started may not have named itself yet: wait for that, not for
            # the worker.
            assert wait_until(lambda: len(workers(tmp_path)) == 1, 10)
            stopped = await client.call_tool("stop_subagent", {"agent_id": long_id})
            assert structured(stopped)["status"] == "stopped"
            assert_all_gone([server_pid], tmp_path / "nothing")
            assert wait_until(lambda: workers(tmp_path) == [], 10)


@pytest.mark.anyio
async def test_stop_while_servers_start_returns_stopped_without_waiting_for_start_up(
    tmp_path: Path,
) -> None:
    # A "server" that never speaks MCP: start-up would wait its full 60 s timeout.
    mute = {
        "command": "sh",
        "args": ["-c", f"touch {tmp_path / 'mute.started'}; exec sleep 300"],
        "startup_timeout": 60,
    }
    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path, servers={"mute": mute}) as client:
            spawned = await client.call_tool(
                "spawn_subagent",
                {
                    "prompt": "go",
                    "background": True,
                    "model": f"scripted:{tmp_path / 'quick.yaml'}",
                },
            )
            agent_id = structured(spawned)["agent_id"]
            assert wait_until(lambda: (tmp_path / "mute.started").exists(), 30)
            # The worker stops itself within the stop grace (past it, serve would kill it),
            # far under the mute server's 60 s start-up.
            with anyio.fail_after(STOP_GRACE_S):
                stopped = await client.call_tool("stop_subagent", {"agent_id": agent_id})
            info = structured(stopped)
            assert info["status"] == "stopped"
            assert info["turns"] == 0  # no turn ran, so no tool call either
            assert wait_until(lambda: workers(tmp_path) == [], 10)


@pytest.mark.anyio
async def test_a_worker_that_cannot_start_is_an_error_result_and_serve_goes_on(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with anyio.fail_after(LIMIT_S):
        # The script lies outside the workspace: a host's scripted: file needs its dir allowed.
        extra = ("--workspace", str(workspace), "--scripted-dir", str(tmp_path))
        async with serve(tmp_path, *extra) as client:
            workspace.rmdir()  # the worker's cwd is gone: its process cannot start
            failed = await client.call_tool(
                "spawn_subagent", {"prompt": "go", "model": f"scripted:{tmp_path / 'quick.yaml'}"}
            )
            assert failed.is_error
            assert structured(failed)["status"] == "error"
            assert "worker failed" in failed.content[0].text
            listed = await client.call_tool("list_agents", {})
            assert not listed.is_error


@pytest.mark.anyio
async def test_a_worker_session_writes_its_own_event_record(tmp_path: Path) -> None:
    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path) as client:
            result = await client.call_tool(
                "spawn_subagent",
                {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"},
            )
            assert not result.is_error
    records = list((tmp_path / "state" / "sessions").glob("*/events.jsonl"))
    assert len(records) == 1
    events = parse_events(records[0].read_text())
    types = [e["type"] for e in events]
    assert types[0] == "session_start"
    assert types[-1] == "session_end"
    assert "agent_end" in types
    assert any(e["type"] == "tool_result" and e["name"] == "lazy__echo" for e in events)


@pytest.mark.anyio
async def test_foreground_spawn_with_a_progress_token_reports_each_turn_and_call(
    tmp_path: Path,
) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    with anyio.fail_after(LIMIT_S):
        async with serve(tmp_path) as client:
            result = await client.call_tool(
                "spawn_subagent",
                {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"},
                progress_callback=on_progress,
            )
    assert not result.is_error
    assert [message for _, message in seen] == ["turn 1", "turn 1: lazy__echo", "turn 2"]
    assert [progress for progress, _ in seen] == [1.0, 2.0, 3.0]
