"""Who is calling, and how a sub-agent's input request reaches that host, in each era.

- The caller: an HTTP request's authenticated subject (http.py puts it on the request);
  None on stdio and on an unauthenticated loopback HTTP serve.
- 2025-11-25 and older: serve sends the host an `elicitation/create` request on the call
  that waits for the run (a foreground `tools/call`, or `tasks/result` with the task's
  related-task `_meta`), when the host declared the elicitation capability.
- 2026-07-28: a foreground call returns `input_required` (its `requestState` names the
  sub-agent, sealed by the SDK's RequestStateBoundary); the host's retry carries the
  answers. A task shows `input_required` and its `inputRequests` on `tasks/get`, and
  `tasks/update` carries the answers (tasks/v2026_07_28.py).
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from launcher.backend.inputs import HostInputs

log = logging.getLogger(__name__)

RELATED_TASK = "io.modelcontextprotocol/related-task"
"""The `_meta` key tying a message to its task (2025-11-25)."""


def caller_of(ctx: Any) -> str | None:
    """The authenticated caller of this request (its token's subject), or None."""
    request = getattr(ctx, "request", None)
    scope = getattr(request, "scope", None)
    user = scope.get("user") if isinstance(scope, dict) else None
    if isinstance(user, AuthenticatedUser):
        token = user.access_token
        return token.subject or None  # the subject only: a client id names no caller
    return None


def is_modern(ctx: Any) -> bool:
    """Whether this request speaks the 2026-07-28 era."""
    return str(getattr(ctx, "protocol_version", "")) in MODERN_PROTOCOL_VERSIONS


def _elicitation(ctx: Any) -> types.ElicitationCapability | None:
    capabilities = ctx.session.client_capabilities
    return capabilities.elicitation if capabilities is not None else None


def can_elicit(ctx: Any) -> bool:
    """Whether the host of this request can be asked: it declared elicitation (per request
    in 2026-07-28, at initialize before), and, before 2026-07-28, its channel carries a
    request from serve."""
    if _elicitation(ctx) is None:
        return False
    return is_modern(ctx) or bool(ctx.session.can_send_request)


def _takes(ctx: Any, request: dict[str, Any]) -> bool:
    """Whether the host declared the mode this request needs (URL mode is its own)."""
    capability = _elicitation(ctx)
    if capability is None or request.get("method") != "elicitation/create":
        return False
    if (request.get("params") or {}).get("mode") == "url":
        return capability.url is not None
    return capability.form is not None or capability.url is None  # `{}` means form


def input_required(ctx: Any, entry_id: str, inputs: HostInputs) -> types.InputRequiredResult:
    """The 2026-07-28 answer while requests wait: all of them, and the sub-agent's id as
    the state the host's retry echoes (sealed by the SDK on the way out)."""
    wanted = {k: v for k, v in inputs.pending.items() if _takes(ctx, v)}
    return types.InputRequiredResult.model_validate(
        {"inputRequests": wanted, "requestState": entry_id}, by_name=False
    )


async def refuse_untaken(ctx: Any, inputs: HostInputs) -> None:
    """Answer None (the worker's own answer) to what this host cannot be asked."""
    for request_id, request in list(inputs.pending.items()):
        if not _takes(ctx, request):
            await inputs.answer(request_id, None)


async def take_responses(inputs: HostInputs, responses: Any) -> None:
    """Deliver a host's `inputResponses` (id -> result) to the requests still pending;
    answers to anything else are ignored."""
    if not isinstance(responses, dict):
        return
    for request_id, result in responses.items():
        if hasattr(result, "model_dump"):
            result = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        await inputs.answer(str(request_id), result if isinstance(result, dict) else None)


async def elicit_each(ctx: Any, inputs: HostInputs, task_id: str | None = None) -> None:
    """Until cancelled: put each new request to the host as `elicitation/create` on this
    request's channel (tied to `task_id` when given), and deliver its answer."""
    async with anyio.create_task_group() as tg:
        while True:
            changed = inputs.changed
            await refuse_untaken(ctx, inputs)
            for request_id, request in inputs.unasked().items():
                tg.start_soon(_elicit_one, ctx, inputs, request_id, request, task_id)
            await changed.wait()


async def _elicit_one(
    ctx: Any, inputs: HostInputs, request_id: str, request: dict[str, Any], task_id: str | None
) -> None:
    params = dict(request.get("params") or {})
    if task_id is not None:
        params["_meta"] = {**(params.get("_meta") or {}), RELATED_TASK: {"taskId": task_id}}
    try:
        typed = types.ElicitRequest.model_validate({"params": params}, by_name=False)
        answer = await ctx.session.send_request(
            typed, types.ElicitResult, metadata=_related(ctx.request_id)
        )
    except Exception as exc:  # the host refused or went away: the worker answers itself
        log.info("elicitation %s not answered by the host: %s", request_id, exc)
        await inputs.answer(request_id, None)
        return
    await inputs.answer(
        request_id, answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    )


def _related(request_id: Any) -> Any:
    from mcp.shared.message import ServerMessageMetadata

    return ServerMessageMetadata(related_request_id=request_id)
