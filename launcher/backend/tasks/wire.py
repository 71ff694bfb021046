"""Plugs both Tasks eras into serve's low-level SDK server.

`tasks/get` and `tasks/cancel` exist in both eras with different shapes, so each method
gets one handler that picks the era's answer by the request's protocol version. The
extension is applied the way the SDK's MCPServer applies one (its methods, its
`tools/call` interceptor, its capability entry), since serve runs on the low-level Server.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.extension import compose_tool_call_handler
from mcp.server.lowlevel.server import Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types import METHOD_NOT_FOUND
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

from launcher.backend.tasks.store import TaskStore
from launcher.backend.tasks.v2025_11_25 import LegacyTasks, Spawn, advertise, offer_by_version
from launcher.backend.tasks.v2026_07_28 import TasksExtension, UpdateTaskParams

Handler = Callable[[Any, Any], Awaitable[Any]]


def _by_era(method: str, *, legacy: Handler | None, modern: Handler | None) -> Handler:
    async def handle(ctx: Any, params: Any) -> Any:
        chosen = modern if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS else legacy
        if chosen is None:
            raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method)
        return await chosen(ctx, params)

    return handle


def install_tasks(
    server: Server[Any], store: TaskStore, spawn: Spawn, options: InitializationOptions
) -> InitializationOptions:
    """Serve Tasks in both eras on `server`; returns `options` with the 2025-11-25 capability."""
    legacy = LegacyTasks(store, spawn)
    extension = TasksExtension(store, spawn)
    modern = {binding.method: binding.handler for binding in extension.methods()}
    methods: dict[str, tuple[type[BaseModel], Handler | None]] = {
        "tasks/get": (types.GetTaskRequestParams, legacy.get),
        "tasks/cancel": (types.CancelTaskRequestParams, legacy.cancel),
        "tasks/result": (types.GetTaskPayloadRequestParams, legacy.result),
        "tasks/list": (types.PaginatedRequestParams, legacy.list),
        "tasks/update": (UpdateTaskParams, None),  # the extension's only
    }
    for method, (params_type, legacy_handler) in methods.items():
        handler = _by_era(method, legacy=legacy_handler, modern=modern.get(method))
        server.add_request_handler(method, params_type, handler)
    call = server.get_request_handler("tools/call")
    assert call is not None, "install the tools before the Tasks"
    server.add_request_handler(
        "tools/call",
        types.CallToolRequestParams,
        compose_tool_call_handler([extension], call.handler),
    )
    server.add_request_handler(
        "subscriptions/listen", types.SubscriptionsListenRequestParams, extension.listen
    )
    server.extensions[extension.identifier] = extension.settings()
    # A middleware answers before the per-version result check, which knows no tasks.
    server.middleware.append(legacy.middleware)
    server.middleware.append(offer_by_version)
    return advertise(options)
