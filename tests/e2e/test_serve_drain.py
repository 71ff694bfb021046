"""SIGTERM drains serve, on stdio and on HTTP: no new sub-agent, every running one stopped
and recorded `stopped`, every process gone, exit status 0, within 20 s."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import IO, Any

import anyio
import pytest

from tests.e2e.conftest import assert_all_gone, cli_argv, cli_env, is_alive, read_pid, wait_until
from tests.e2e.serve_http_support import (
    LIMIT_S,
    http_client,
    http_config,
    http_serve,
    pid_written,
)

pytestmark = pytest.mark.e2e

DRAIN_LIMIT_S = 20.0
"""The contract: SIGTERM to exit, with every run stopped and recorded."""
START_LIMIT_S = 60.0
"""A sub-agent's worker and its stub server up, on a loaded box."""


def statuses(home: Path) -> list[str]:
    """The stored sessions' statuses (none while the store is still being created)."""
    try:
        with sqlite3.connect(f"file:{home / 'logs.db'}?mode=ro", uri=True) as db:
            return [row[0] for row in db.execute("SELECT status FROM sessions ORDER BY started")]
    except sqlite3.OperationalError:
        return []


def long_args(tmp_path: Path, **more: Any) -> dict[str, Any]:
    return {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'long.yaml'}", **more}


def send(stdin: IO[bytes], message: dict[str, Any]) -> None:
    stdin.write(json.dumps(message).encode() + b"\n")
    stdin.flush()


def answer(stdout: IO[bytes], request_id: int) -> dict[str, Any]:
    """The response to `request_id` (notifications before it are skipped)."""
    while True:
        line = stdout.readline()
        assert line, "serve closed stdout"
        message = json.loads(line)
        if message.get("id") == request_id:
            return dict(message)


def test_sigterm_drains_stdio_serve(tmp_path: Path) -> None:
    config = http_config(tmp_path)
    home = tmp_path / "state"
    proc = subprocess.Popen(
        cli_argv("serve", "--config-dir", str(config)),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "serve.err").open("wb"),
        env=cli_env(home),
        cwd=tmp_path,
        start_new_session=True,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}}
        init["clientInfo"] = {"name": "drain", "version": "0"}
        send(proc.stdin, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
        assert "result" in answer(proc.stdout, 1)
        send(proc.stdin, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"name": "spawn_subagent", "arguments": long_args(tmp_path, background=True)}
        send(proc.stdin, {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
        assert "agent_id" in answer(proc.stdout, 2)["result"]["structuredContent"]
        assert wait_until(lambda: pid_written(tmp_path / "lazy.pid"), START_LIMIT_S)
        server = read_pid(tmp_path / "lazy.pid")
        assert wait_until(lambda: statuses(home) == ["running"], START_LIMIT_S)

        proc.send_signal(signal.SIGTERM)  # stdin stays open: the signal alone ends serve
        assert proc.wait(DRAIN_LIMIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not is_alive(server)
    assert_all_gone([server], tmp_path)
    assert statuses(home) == ["stopped"]


@pytest.mark.anyio
async def test_sigterm_drains_http_serve_with_a_foreground_and_a_background_run(
    tmp_path: Path,
) -> None:
    with http_serve(tmp_path) as serve, anyio.fail_after(LIMIT_S):
        async with http_client(serve.url, mode="legacy") as client:
            background = await client.call_tool(
                "spawn_subagent", long_args(tmp_path, background=True)
            )
            assert not background.is_error
            assert wait_until(lambda: pid_written(tmp_path / "lazy.pid"), START_LIMIT_S)
            server = read_pid(tmp_path / "lazy.pid")
            assert wait_until(lambda: statuses(serve.home) == ["running"], START_LIMIT_S)
            async with anyio.create_task_group() as tg:
                ended: list[Any] = []

                async def foreground() -> None:
                    ended.append(await client.call_tool("spawn_subagent", long_args(tmp_path)))

                tg.start_soon(foreground)
                two = lambda: len(statuses(serve.home)) == 2  # noqa: E731
                assert await anyio.to_thread.run_sync(wait_until, two, START_LIMIT_S)
                serve.proc.send_signal(signal.SIGTERM)
            assert ended[0].structured_content["status"] == "stopped"
        code = await anyio.to_thread.run_sync(serve.proc.wait, DRAIN_LIMIT_S)
    assert code == 0
    assert_all_gone([server], tmp_path)
    assert statuses(serve.home) == ["stopped", "stopped"]
