"""`subagent serve`'s MCP face: a stdio server any coding agent can use as its sub-agent backend.

Its tools spawn, query, steer and stop sub-agents; each sub-agent is a worker process
that starts its own MCP servers at its own session start, so serve itself starts none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from launcher.backend import catalog
from launcher.backend.arguments import check_arguments
from launcher.backend.host_asks import (
    caller_of,
    can_elicit,
    elicit_each,
    input_required,
    is_modern,
    refuse_untaken,
    take_responses,
)
from launcher.backend.inputs import first_of
from launcher.backend.pool import SubAgent, SubagentManager
from launcher.backend.progress import PROGRESS_DRAIN_S, ProgressRelay
from launcher.backend.spawning import Spawner
from launcher.backend.tasks.store import run_result
from launcher.config.types import Config
from launcher.errors import SubagentError

TOOLS_LIST_TTL_MS = 60_000
"""How long a 2026-07-28 host may reuse `tools/list`: it changes only when the operator
edits the agents (`agent`'s enum), which a host then sees within a minute. `private`:
whatever a caller may be shown is that caller's to cache."""
NOT_FOUND = "no sub-agent with agent_id '{}'"
"""The one text for an id this caller cannot reach: unknown, or another caller's."""


def _result(text: str, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)], structured_content=structured
    )


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


class SubagentServer:
    """The MCP face of a SubagentManager."""

    def __init__(
        self,
        manager: SubagentManager,
        config_dir: Path | None,
        workspace: Path,
        scripted_dirs: tuple[Path, ...] = (),
        config: Config | None = None,
    ) -> None:
        self.manager = manager
        self.config_dir = config_dir
        self.workspace = workspace
        # Loaded once, now: a job's model may write the workspace's config files, and the
        # next job must not run what it wrote (restart serve to pick up a config change).
        self.config: Config = config if config is not None else self._load_config()
        self.spawner = Spawner(manager, self.config, config_dir, workspace, scripted_dirs)
        # Each tool's input schema as tools/list shows it (the same to every caller): the
        # SDK's 2026-07-28 HTTP transport checks a call's Mcp-Param headers against it, and
        # without this lookup it runs a whole tools/list for every tools/call.
        listed = catalog.tools(self.agents(), task_support=False)
        self.input_schemas = {tool["name"]: tool["inputSchema"] for tool in listed}
        self.server: Server[Any] = Server(
            catalog.SERVER_NAME,
            version=catalog.SERVER_VERSION,
            instructions=catalog.INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            cache_hints={"tools/list": CacheHint(TOOLS_LIST_TTL_MS, "private")},
            get_tool_input_schema=self.input_schemas.get,
        )
        self.server.add_request_handler("server/discover", types.RequestParams, self._discover)
        # The state a 2026-07-28 host echoes after `input_required` names a sub-agent:
        # sealed, bound to the caller, tool and arguments, under a key of this process.
        self.server.middleware.append(
            RequestStateBoundary(
                RequestStateSecurity.ephemeral(), default_audience=catalog.SERVER_NAME
            )
        )

    def agents(self) -> list[tuple[str, str]]:
        """(name, description) of every agent serve can run, from the config it started with."""
        return catalog.agents_of(self.config)

    async def _discover(self, ctx: Any, params: Any) -> types.DiscoverResult:
        """The SDK's `server/discover`, but honest about `tools.listChanged`: serve serves
        `subscriptions/listen` (for task notices) yet never announces a tool change."""
        capabilities = self.server.get_capabilities(protocol_version=ctx.protocol_version)
        tools = types.ToolsCapability(list_changed=False)
        return types.DiscoverResult(
            supported_versions=list(MODERN_PROTOCOL_VERSIONS),
            capabilities=capabilities.model_copy(update={"tools": tools}),
            instructions=self.server.instructions,
        )

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        # 2026-07-28 has no `execution` on a tool (its sieve drops it): there the tasks
        # extension, per request, decides (tasks/v2026_07_28.py).
        listed = catalog.tools(self.agents(), task_support=catalog.has_tasks(ctx.protocol_version))
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in listed])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            handler = getattr(self, f"_tool_{params.name}", None)
            schema = catalog.tool_schema(params.name)
            if handler is None or schema is None:
                return _error(f"Unknown tool: {params.name}")
            args = check_arguments(params.name, schema, params.arguments)
            if params.name == "spawn_subagent":
                return await self._tool_spawn_subagent(args, ctx, params)
            result: types.CallToolResult = await handler(args, ctx)
            return result
        except SubagentError as exc:
            return _error(str(exc))
        except (KeyError, TypeError, ValueError) as exc:
            return _error(f"Invalid arguments for {params.name}: {exc}")

    def _load_config(self) -> Config:
        from launcher.config.discovery import load_config

        return load_config(self.config_dir, cwd=self.workspace)

    def _lookup(self, args: dict[str, Any], ctx: Any) -> SubAgent:
        agent_id, caller = str(args["agent_id"]), caller_of(ctx)
        entry = self.manager.get(agent_id, caller)
        if entry is None and self.manager.has_expired(agent_id, caller):
            raise ValueError(
                f"sub-agent '{agent_id}' has expired: it ended and serve no longer keeps its "
                "result (its task's ttl passed, or many later runs ended since)"
            )
        if entry is None:
            raise ValueError(NOT_FOUND.format(agent_id))
        return entry

    async def start_spawn(
        self, args: dict[str, Any], *, caller: str | None = None, can_ask: bool = False
    ) -> SubAgent:
        """Validate `spawn_subagent` arguments and queue the sub-agent (tools and tasks alike)
        for `caller` (spawning.py); `can_ask`: its servers' input requests may wait for this
        host."""
        return await self.spawner.start(args, caller=caller, can_ask=can_ask)

    async def _tool_spawn_subagent(
        self, args: dict[str, Any], ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        caller = caller_of(ctx)
        if params.request_state is not None:
            # A 2026-07-28 host's retry after `input_required`: the state (sealed by the
            # SDK, bound to this caller, tool and arguments) names the run it answers.
            entry = self.manager.get(params.request_state, caller)
            if entry is None:
                return _error(NOT_FOUND.format(params.request_state))
            await take_responses(entry.inputs, params.input_responses)
        else:
            # The agent file's `background` is filled into `args` by start_spawn.
            entry = await self.start_spawn(args, caller=caller, can_ask=can_elicit(ctx))
            if args.get("background"):
                return _result(json.dumps({"agent_id": entry.id}), {"agent_id": entry.id})
        try:
            asked = await self._wait_reporting_progress(entry, ctx)
        except anyio.get_cancelled_exc_class():
            # The host gave up on the call: the sub-agent it asked for must not run on.
            with anyio.CancelScope(shield=True):
                await self.manager.stop(entry)
            raise
        return asked if asked is not None else run_result(entry)

    async def _wait_reporting_progress(
        self, entry: SubAgent, ctx: Any
    ) -> types.InputRequiredResult | None:
        """Wait for the sub-agent's end, relaying progress when the host asked for it and
        its servers' input requests: None at the end, or the 2026-07-28 `input_required`
        that hands the call back to the host while the run waits for its answers."""
        meta = getattr(ctx, "meta", None) or {}
        token = meta.get("progress_token")
        relay: ProgressRelay | None = None
        if token is not None:

            async def send(progress: float, message: str) -> None:
                await ctx.session.send_progress_notification(
                    progress_token=token,
                    progress=progress,
                    message=message,
                    related_request_id=ctx.request_id,
                )

            relay = ProgressRelay(send)
            entry.watchers.append(relay.watch)
        asked: types.InputRequiredResult | None = None
        async with anyio.create_task_group() as tg:
            if relay is not None:
                tg.start_soon(relay.forward)
            try:
                asked = await self._wait_asking(entry, ctx, tg)
            finally:
                if relay is not None:
                    entry.watchers.remove(relay.watch)
                    relay.close()  # what is queued is still sent, then forward() returns
            if relay is not None:
                with anyio.move_on_after(PROGRESS_DRAIN_S):
                    await relay.finished.wait()
            tg.cancel_scope.cancel()
        return asked

    async def _wait_asking(
        self, entry: SubAgent, ctx: Any, tg: anyio.abc.TaskGroup
    ) -> types.InputRequiredResult | None:
        if not is_modern(ctx):
            if entry.inputs.can_ask:
                tg.start_soon(elicit_each, ctx, entry.inputs)
            await entry.done.wait()
            return None
        while not entry.done.is_set():
            changed = entry.inputs.changed
            await refuse_untaken(ctx, entry.inputs)
            if entry.inputs.pending:
                return input_required(ctx, entry.id, entry.inputs)
            await first_of(entry.done, changed)
        return None

    async def _tool_get_subagent_result(
        self, args: dict[str, Any], ctx: Any
    ) -> types.CallToolResult:
        entry = self._lookup(args, ctx)
        if args.get("wait"):
            await entry.done.wait()
        return _result(entry.result, entry.snapshot())

    async def _tool_steer_subagent(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        entry = self._lookup(args, ctx)
        if entry.done.is_set() or entry.final:
            return _error(f"sub-agent {entry.id} has ended ({entry.status}); nothing to steer")
        await self.manager.steer(entry, str(args["message"]))
        return _result(f"queued for {entry.id}'s next turn", entry.snapshot())

    async def _tool_stop_subagent(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        entry = self._lookup(args, ctx)
        await self.manager.stop(entry)
        return _result(entry.status, entry.snapshot())

    async def _tool_list_agents(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        config = self.config
        agents = [{"name": a.name, "description": a.description} for a in config.agents.values()]
        text = "\n".join(f"{a['name']}: {a['description']}" for a in agents)
        return _result(text, {"agents": agents})
