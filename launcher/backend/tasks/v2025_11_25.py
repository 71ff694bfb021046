"""Tasks in the 2025-11-25 era (core, experimental there): the `tasks` capability,
task-augmented `tools/call`, `tasks/get|result|list|cancel`, `notifications/tasks/status`.

The SDK (2.3.0) has the types of this era but serves none of it: its per-version result
check knows `tools/call` only as a CallToolResult, so a task-augmented call is answered
by a server middleware (which owns its result) before that check runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND

from launcher.backend.catalog import TASK_TOOLS, has_tasks, tasks_capability
from launcher.backend.host_asks import RELATED_TASK, caller_of, can_elicit, elicit_each
from launcher.backend.pool import SubAgent
from launcher.backend.tasks.store import POLL_INTERVAL_MS, TaskRecord, TaskStore, run_result
from launcher.errors import SubagentError
from launcher.events import RunStatus

Spawn = Callable[..., Awaitable[SubAgent]]
"""Validates `spawn_subagent` arguments and queues the sub-agent (server.py's one way):
`(arguments, *, caller, can_ask)`."""


def status_v1(entry: SubAgent) -> str:
    """The 2025-11-25 status: a run that ended in error is `failed` (an isError result);
    one waiting for its host's answer is `input_required` (tasks/result asks)."""
    if not entry.done.is_set():
        return "input_required" if entry.inputs.pending else "working"
    if entry.status is RunStatus.ERROR:
        return "failed"
    if entry.status is RunStatus.STOPPED:
        return "cancelled"
    return "completed"


def task_v1(record: TaskRecord) -> dict[str, Any]:
    """The `Task` object of this era; a task cancelled by `tasks/cancel` stays `cancelled`."""
    out = {
        **record.base(),
        "status": status_v1(record.entry),
        "ttl": record.ttl_ms,
        "pollInterval": POLL_INTERVAL_MS,
    }
    if record.cancel_requested and record.ended:
        # The run may have ended otherwise while the stop was on its way; the era
        # requires `cancelled` once the cancel was accepted.
        out.update(status="cancelled", statusMessage="cancelled by request")
    return out


async def offer_by_version(
    ctx: ServerRequestContext[Any, Any], call_next: CallNext
) -> HandlerResult:
    """Middleware: `initialize` has the `tasks` capability exactly for a version with Tasks.

    The SDK answers `initialize` from one set of options for every version (on HTTP, its
    session manager's defaults, without Tasks); a 2025-06-18 client (Codex, Gemini CLI)
    must not be told of what its version lacks.
    """
    result = await call_next(ctx)
    if ctx.method == "initialize" and isinstance(result, dict):
        version = str(result.get("protocolVersion"))
        capabilities = result.get("capabilities")
        if isinstance(capabilities, dict):
            result = {**result, "capabilities": {**capabilities}}
            result["capabilities"].pop("tasks", None)
            if has_tasks(version):
                result["capabilities"]["tasks"] = tasks_capability()
    return result


def advertise(options: InitializationOptions) -> InitializationOptions:
    """Add the `tasks` capability (list, cancel, task-augmented tools/call) to `initialize`."""
    tasks = types.ServerTasksCapability(
        list=types.TasksListCapability(),
        cancel=types.TasksCancelCapability(),
        requests=types.ServerTasksRequestsCapability(
            tools=types.TasksToolsCapability(call=types.TasksCallCapability())
        ),
    )
    capabilities = options.capabilities.model_copy(update={"tasks": tasks})
    return options.model_copy(update={"capabilities": capabilities})


class LegacyTasks:
    """The 2025-11-25 wire over a TaskStore."""

    def __init__(self, store: TaskStore, spawn: Spawn) -> None:
        self.store = store
        self.spawn = spawn

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Answer a task-augmented `spawn_subagent` call with a task, at once."""
        params = ctx.params or {}
        if (
            ctx.method != "tools/call"
            or not has_tasks(ctx.protocol_version)
            or not isinstance(params.get("task"), dict)
        ):
            return await call_next(ctx)
        if params.get("name") not in TASK_TOOLS:
            # No execution.taskSupport means forbidden: the era asks for -32601 rather
            # than a plain result the host did not ask for.
            raise MCPError(
                METHOD_NOT_FOUND,
                f"tool '{params.get('name')}' cannot run as a task (it declares no taskSupport)",
            )
        try:
            call = types.CallToolRequestParams.model_validate(params, by_name=False)
            arguments = dict(call.arguments or {})
            entry = await self.spawn(arguments, caller=caller_of(ctx), can_ask=can_elicit(ctx))
        except (SubagentError, KeyError, TypeError, ValueError):
            # Bad params or arguments: the plain call reports them (an error result or
            # INVALID_PARAMS; pydantic's ValidationError is a ValueError).
            return await call_next(ctx)
        session = ctx.session

        async def notify(record: TaskRecord) -> None:
            params = types.TaskStatusNotificationParams.model_validate(task_v1(record))
            # The SDK's ServerSession types its notifications without the Tasks one it sends.
            await session.send_notification(types.TaskStatusNotification(params=params))  # type: ignore[arg-type]

        ttl = call.task.ttl if call.task is not None else None
        record = self.store.create(entry, ttl, notify)
        return {"task": task_v1(record)}

    async def get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        return task_v1(self.store.get(params.task_id, caller_of(ctx)))

    async def result(self, ctx: Any, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        """Wait for the task's end, asking this host meanwhile what the run's servers ask
        (the era's `input_required` flow); its CallToolResult, tied to the task by `_meta`."""
        record = self.store.get(params.task_id, caller_of(ctx))
        async with anyio.create_task_group() as tg:
            if record.entry.inputs.can_ask and can_elicit(ctx):
                tg.start_soon(elicit_each, ctx, record.entry.inputs, record.task_id)
            await record.entry.done.wait()
            tg.cancel_scope.cancel()
        out = run_result(record.entry).model_dump(by_alias=True, mode="json", exclude_none=True)
        out["_meta"] = {RELATED_TASK: {"taskId": record.task_id}}
        return out

    async def list(self, ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        records, cursor = self.store.page(params.cursor, caller_of(ctx))
        out: dict[str, Any] = {"tasks": [task_v1(r) for r in records]}
        if cursor is not None:
            out["nextCursor"] = cursor
        return out

    async def cancel(self, ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        record = self.store.get(params.task_id, caller_of(ctx))
        await self.store.cancel(record)
        return task_v1(record)
