"""Drives `subagent serve` over stdio with the SDK client, for the MCP Tasks tests.

The SDK client (2.3.0) has no Tasks API in either era, so the requests are sent as plain
typed requests; what each era needs beyond that is said where it is done.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.extension import ClaimContext, ClientExtension, NotificationBinding, ResultClaim
from mcp.client.stdio import stdio_client
from pydantic import BaseModel, ConfigDict, TypeAdapter

from tests.e2e.spawn_support import stub, write_config

LIMIT_S = 90.0
"""Bounds each test; serve, workers and a stub each pay an SDK import on 2 cores."""

SCRIPTS = {
    "quick.yaml": "steps:\n  - call: [{tool: lazy__echo, args: {text: hi}}]\n  - say: done quick\n",
    "long.yaml": "steps:\n  - sleep: 60\n    say: never\n",
}

ANY_RESULT: TypeAdapter[dict[str, Any]] = TypeAdapter(dict[str, Any])


class StatusLog:
    """Status notifications as they arrive (params dicts), with a way to wait for one."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self._changed = anyio.Event()

    async def record(self, params: BaseModel) -> None:
        self.seen.append(params.model_dump(by_alias=True))
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_for(self, task_id: str, status: str) -> dict[str, Any]:
        """The first notification of `task_id` with `status` (the caller bounds the wait)."""
        while True:
            for params in self.seen:
                if params.get("taskId") == task_id and params.get("status") == status:
                    return params
            await self._changed.wait()


class _OpenParams(BaseModel):
    model_config = ConfigDict(extra="allow")


class CreatedTask(types.Result):
    """The 2026-07-28 extension's CreateTaskResult (`resultType: "task"`)."""

    model_config = ConfigDict(extra="allow")
    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


async def _not_resolved(result: CreatedTask, ctx: ClaimContext) -> types.CallToolResult:
    raise AssertionError("the tests take the task handle (allow_claimed=True)")


class TaskObserver(ClientExtension):
    """Records status notifications; in the 2026-07-28 era it also declares the extension."""

    def __init__(self, identifier: str, method: str, log: StatusLog, *, claim: bool) -> None:
        self.identifier = identifier
        self._method = method
        self._log = log
        self._claim = claim

    def claims(self) -> Sequence[ResultClaim[Any]]:
        if not self._claim:
            return ()
        return (ResultClaim(result_type="task", model=CreatedTask, resolve=_not_resolved),)

    def notifications(self) -> Sequence[NotificationBinding[Any]]:
        binding = NotificationBinding(
            method=self._method, params_type=_OpenParams, handler=self._log.record
        )
        return (binding,)


def serve_config(tmp_path: Path) -> Path:
    """Scripts plus a config with the lazy stub (its pid file shows whether it still runs)."""
    for name, text in SCRIPTS.items():
        (tmp_path / name).write_text(text)
    return write_config(
        tmp_path / "cfg",
        {
            "lazy": stub(
                "lazy",
                "--marker",
                str(tmp_path / "lazy.started"),
                "--pidfile",
                str(tmp_path / "lazy.pid"),
            )
        },
    )


@asynccontextmanager
async def serve_client(
    tmp_path: Path,
    *serve_args: str,
    mode: str,
    extension: ClientExtension,
    message_handler: Any = None,
) -> AsyncIterator[Client]:
    """`subagent serve` as a subprocess, with an SDK client forced into `mode`."""
    config = serve_config(tmp_path)
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state")}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config), *serve_args],
        env=env,
        cwd=str(tmp_path),
    )
    with (tmp_path / "serve.err").open("w") as errlog:
        async with Client(
            stdio_client(params, errlog=errlog),
            read_timeout_seconds=LIMIT_S,
            mode=mode,  # type: ignore[arg-type]
            extensions=[extension],
            message_handler=message_handler,
        ) as client:
            yield client


async def request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """A `tasks/*` request (no SDK method exists for them); the raw result."""
    return await client.session.send_request(
        types.Request[dict[str, Any], Any](method=method, params=params), ANY_RESULT
    )


async def legacy_task_call(
    client: Client, name: str, arguments: dict[str, Any], ttl_ms: int
) -> dict[str, Any]:
    """A task-augmented `tools/call` in the 2025-11-25 era.

    The SDK client checks every `tools/call` answer against CallToolResult, which a
    CreateTaskResult is not, so this one request goes through its dispatcher unchecked.
    """
    params = {"name": name, "arguments": arguments, "task": {"ttl": ttl_ms}}
    return await client.session._dispatcher.send_raw_request(
        "tools/call", params, {"timeout": LIMIT_S}
    )
