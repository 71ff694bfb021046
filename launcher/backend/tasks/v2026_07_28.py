"""Tasks in the 2026-07-28 era: the `io.modelcontextprotocol/tasks` extension (SEP-2663).

A `spawn_subagent` call from a client that declared the extension in its per-request
capabilities is answered with a CreateTaskResult (`resultType: "task"`); `tasks/get`
carries the final result inline, `tasks/cancel` stops the worker, and status changes go
to the `subscriptions/listen` streams that asked for the task's id (`taskIds`).
Built on the SDK's `Extension` (its `tools/call` interceptor and method bindings);
`subscriptions/listen` is a spec method an extension may not bind, so it is served here
and installed by wire.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import SUBSCRIPTION_ID_META_KEY
from mcp_types import INVALID_REQUEST, MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from launcher.backend.catalog import TASK_TOOLS
from launcher.backend.host_asks import caller_of, can_elicit, take_responses
from launcher.backend.pool import SubAgent
from launcher.backend.tasks.store import POLL_INTERVAL_MS, TaskRecord, TaskStore, run_result
from launcher.backend.tasks.v2025_11_25 import Spawn
from launcher.errors import SubagentError
from launcher.events import RunStatus

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
LISTEN_BUFFER = 256
"""Status changes queued per listen stream; a stream this far behind misses changes (polling
`tasks/get` still tells)."""


class _WireNotification(BaseModel):
    """A notification outside the SDK's vocabulary (`notifications/tasks`), sent as is."""

    method: str
    params: dict[str, Any]


class UpdateTaskParams(types.RequestParams):
    """`tasks/update` params (the SDK has no type for this extension method)."""

    task_id: str
    input_responses: dict[str, Any] | None = None


def status_v2(entry: SubAgent) -> str:
    """This era's status: an `error` run is a completed call with an isError result
    (`failed` is for protocol faults, which a finished run is not); one waiting for its
    host's answer is `input_required`."""
    if not entry.done.is_set():
        return "input_required" if entry.inputs.pending else "working"
    return "cancelled" if entry.status is RunStatus.STOPPED else "completed"


def task_v2(record: TaskRecord) -> dict[str, Any]:
    """The detailed task: status fields, the requests waiting for the host's input, and
    the CallToolResult once completed."""
    status = status_v2(record.entry)
    out: dict[str, Any] = {
        **record.base(),
        "status": status,
        "ttlMs": record.ttl_ms,
        "pollIntervalMs": POLL_INTERVAL_MS,
    }
    if status == "input_required":
        out["inputRequests"] = dict(record.entry.inputs.pending)
    if status == "completed":
        result = run_result(record.entry).model_dump(by_alias=True, mode="json", exclude_none=True)
        out["result"] = {"resultType": "complete", **result}
    return out


def client_declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the tasks extension (per-request, 2026-07-28)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    meta = (ctx.params or {}).get("_meta")
    declared: Any = None
    if isinstance(meta, Mapping):
        capabilities = meta.get(CLIENT_CAPABILITIES_META)
        if isinstance(capabilities, Mapping):
            declared = capabilities.get("extensions")
    if declared is None:
        capabilities = ctx.session.client_capabilities
        declared = capabilities.extensions if capabilities is not None else None
    return isinstance(declared, Mapping) and TASKS_EXTENSION in declared


def missing_extension(what: str) -> MCPError:
    """The error for `what` (a tasks method, or task notifications) from a request that did
    not declare the extension (SEP-2663, SEP-2575: -32021)."""
    data = types.MissingRequiredClientCapabilityErrorData(
        required_capabilities=types.ClientCapabilities(extensions={TASKS_EXTENSION: {}})
    )
    return MCPError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"{what} needs the {TASKS_EXTENSION} extension declared in the request's capabilities",
        data.model_dump(by_alias=True, mode="json", exclude_none=True),
    )


def _declared(ctx: ServerRequestContext[Any, Any]) -> None:
    """Raise -32021 unless this request declared the extension."""
    if not client_declared(ctx):
        raise missing_extension(ctx.method)


class TasksExtension(Extension):
    """The server side of the tasks extension over a TaskStore."""

    identifier = TASKS_EXTENSION

    def __init__(self, store: TaskStore, spawn: Spawn) -> None:
        self.store = store
        self.spawn = spawn

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("tasks/get", types.GetTaskRequestParams, self.get),
            MethodBinding("tasks/cancel", types.CancelTaskRequestParams, self.cancel),
            MethodBinding("tasks/update", UpdateTaskParams, self.update),
        )

    async def intercept_tool_call(
        self,
        params: types.CallToolRequestParams,
        ctx: ServerRequestContext[Any, Any],
        call_next: CallNext,
    ) -> HandlerResult:
        """A declaring client's `spawn_subagent` becomes a task; everything else passes."""
        if params.name not in TASK_TOOLS or not client_declared(ctx):
            return await call_next(ctx)
        try:
            arguments = dict(params.arguments or {})
            entry = await self.spawn(arguments, caller=caller_of(ctx), can_ask=can_elicit(ctx))
        except (SubagentError, KeyError, TypeError, ValueError):
            return await call_next(ctx)  # bad arguments: reported as the plain call does
        record = self.store.create(entry, None)
        return {"resultType": "task", **_summary(record)}

    async def get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        _declared(ctx)
        return task_v2(self.store.get(params.task_id, caller_of(ctx)))

    async def cancel(self, ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        """An empty ack; an ended task stays as it ended (this era answers no error for it)."""
        _declared(ctx)
        record = self.store.get(params.task_id, caller_of(ctx))
        if not record.ended:
            await self.store.cancel(record)
        return {}

    async def update(self, ctx: Any, params: UpdateTaskParams) -> dict[str, Any]:
        """An empty ack; the answers go to the run's requests still waiting (a subset is
        fine: the task stays `input_required` until each is answered), others are ignored."""
        _declared(ctx)
        record = self.store.get(params.task_id, caller_of(ctx))
        await take_responses(record.entry.inputs, params.input_responses)
        return {}

    async def listen(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """One `subscriptions/listen` stream: acknowledged `taskIds`, then their changes.

        serve announces no list changes (its tools never change), so task ids are the
        only kind it honours; the ack says so, as the spec asks.
        """
        stream_id = ctx.request_id
        if stream_id is None:
            raise MCPError(INVALID_REQUEST, "subscriptions/listen requires a request id")
        requested = (params.notifications.model_extra or {}).get("taskIds")
        if requested is not None and not client_declared(ctx):
            raise missing_extension("taskIds")
        wanted = {str(t) for t in requested} if isinstance(requested, list) else set()
        caller = caller_of(ctx)
        meta: dict[str, Any] = {SUBSCRIPTION_ID_META_KEY: stream_id}
        send, recv = anyio.create_memory_object_stream[TaskRecord](LISTEN_BUFFER)

        async def deliver(record: TaskRecord) -> None:
            # Another caller's task is acknowledged as an unknown id is, and never followed.
            if record.task_id in wanted and record.entry.caller == caller:
                send.send_nowait(record)  # a full buffer raises: the store skips this stream

        unsubscribe = self.store.subscribe(deliver)
        try:
            honored = types.SubscriptionFilter.model_validate({"taskIds": sorted(wanted)})
            await ctx.session.send_notification(
                types.SubscriptionsAcknowledgedNotification(
                    params=types.SubscriptionsAcknowledgedNotificationParams(
                        notifications=honored, _meta=meta
                    )
                ),
                related_request_id=stream_id,
            )
            async with recv:
                async for record in recv:
                    frame = _WireNotification(
                        method="notifications/tasks", params={**task_v2(record), "_meta": meta}
                    )
                    await ctx.session.send_notification(frame, related_request_id=stream_id)  # type: ignore[arg-type]
        finally:
            unsubscribe()
            send.close()
        return types.SubscriptionsListenResult(_meta=meta)


def _summary(record: TaskRecord) -> dict[str, Any]:
    """The task fields of a CreateTaskResult (no result yet)."""
    return {k: v for k, v in task_v2(record).items() if k != "result"}
