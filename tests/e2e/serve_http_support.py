"""`subagent serve --http` as a real process, and the SDK's streamable-HTTP client for it.

serve binds port 0 and says where it listens on stderr; `http_serve` waits for that line
(a condition, bounded) and ends serve with SIGTERM, as a service manager does.
"""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.e2e.conftest import cli_argv, cli_env, stub, wait_until, write_config
from tests.e2e.serve_tasks_support import SCRIPTS

LIMIT_S = 120.0
"""Bounds each test; serve, workers and stubs each pay an SDK import on 2 cores."""
LISTEN_LIMIT_S = 60.0
"""serve's config load and SDK import before it listens, on a loaded box."""
STOP_LIMIT_S = 30.0
"""SIGTERM drains within 20 s (the contract); more only on a machine stalled by others."""
POLL_S = 0.1
"""A host's polling interval in these tests (serve suggests 1 s; tests wait less)."""
LISTENING = re.compile(r"listening on (http://\S+)")

ASK_SCRIPT = (
    "steps:\n"
    "  - call: [{tool: asker__ask, args: {question: 'What is your name?'}}]\n"
    "  - say: asked\n"
)


@dataclass
class HttpServe:
    """A running `serve --http`: its process, its URL and where it writes."""

    proc: subprocess.Popen[bytes]
    url: str
    home: Path
    err: Path

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def terminate(self, limit_s: float = STOP_LIMIT_S) -> int:
        """SIGTERM, then its exit status (killed if it outlives `limit_s`)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(limit_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(limit_s)
            raise


def http_config(tmp_path: Path) -> Path:
    """The scripts, and a config with the lazy stub and the asker stub."""
    for name, text in {**SCRIPTS, "ask.yaml": ASK_SCRIPT}.items():
        (tmp_path / name).write_text(text)
    servers = {
        "lazy": stub("lazy", "--pidfile", str(tmp_path / "lazy.pid")),
        "asker": stub("asker", "--pidfile", str(tmp_path / "asker.pid")),
    }
    return write_config(tmp_path / "cfg", servers)


@contextmanager
def http_serve(
    tmp_path: Path,
    *args: str,
    listen: str = "127.0.0.1:0",
    env: Mapping[str, str | None] | None = None,
    prefix: Sequence[str] = (),
) -> Iterator[HttpServe]:
    """`subagent serve --config-dir CFG --http LISTEN ARGS...`, up until the block ends
    (`prefix`: an argv that runs it as another user)."""
    config = http_config(tmp_path)
    home = tmp_path / "state"
    err = tmp_path / "serve.err"
    argv = cli_argv("serve", "--config-dir", str(config), "--http", listen, *args)
    with err.open("wb") as errlog:
        proc = subprocess.Popen(
            [*prefix, *argv],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errlog,
            env=cli_env(home, env),
            cwd=tmp_path,
            start_new_session=True,
        )
    try:
        found: list[str] = []

        def listening() -> bool:
            found[:] = LISTENING.findall(err.read_text(errors="replace"))
            return bool(found) or proc.poll() is not None

        assert wait_until(listening, LISTEN_LIMIT_S), err.read_text()
        assert found, f"serve ended ({proc.returncode}) before listening:\n{err.read_text()}"
        yield HttpServe(proc, found[0], home, err)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_LIMIT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(STOP_LIMIT_S)


@asynccontextmanager
async def http_client(
    url: str, *, token: str | None = None, mode: str = "legacy", **kwargs: Any
) -> AsyncIterator[Client]:
    """The SDK's Client over streamable HTTP (`mode`: legacy, 2026-07-28 or auto)."""
    headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client(headers=headers))
        transport = streamable_http_client(url, http_client=http)
        client = Client(transport, mode=mode, read_timeout_seconds=LIMIT_S, **kwargs)  # type: ignore[arg-type]
        yield await stack.enter_async_context(client)


def pid_written(path: Path) -> bool:
    """Whether a stub's pid file holds its whole pid (it may exist, still empty, a moment)."""
    try:
        return path.read_text().strip().isdigit()
    except FileNotFoundError:
        return False


def session_events(home: Path, session_id: str) -> list[dict[str, Any]]:
    """A stored session's event record."""
    import json

    path = home / "sessions" / session_id / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def tool_results(home: Path, session_id: str) -> list[str]:
    """The text of every tool result the session's agent got."""
    return [e["content"] for e in session_events(home, session_id) if e["type"] == "tool_result"]


async def task_until(client: Any, task_id: str, *statuses: str) -> dict[str, Any]:
    """Poll 2026-07-28 or 2025-11-25 `tasks/get` as a host would, until the task's status is
    one of `statuses` (the caller bounds the wait)."""
    from tests.e2e.serve_tasks_support import request

    while True:
        got = await request(client, "tasks/get", {"taskId": task_id})
        if got["status"] in statuses:
            return got
        await anyio.sleep(POLL_S)
