"""`subagent serve`'s MCP face: a stdio server any coding agent can use as its sub-agent backend.

Its tools spawn, query, steer and stop sub-agents; each sub-agent is a worker process
that starts its own MCP servers at its own session start, so serve itself starts none.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.caching import CacheHint
from mcp.server.lowlevel.server import Server
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from launcher import settings
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
from launcher.backend.host_model import read_host_script, scripted_roots
from launcher.backend.inputs import first_of
from launcher.backend.pool import SubAgent, SubagentManager
from launcher.backend.progress import PROGRESS_DRAIN_S, ProgressRelay
from launcher.backend.tasks.store import run_result
from launcher.budget import LIMIT_FIELDS, Limits, limits_of, resolve_limits
from launcher.config.types import Config
from launcher.errors import SubagentError
from launcher.store.owner import Owner

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


def _stored(ref: str, agent: Any, owner: Owner) -> Any:
    """The stored session a `resume` names, one `owner` started (checked here, so a bad id
    fails the call at once). Blocking (the store): called on a thread."""
    from launcher.errors import UsageError
    from launcher.state import state_home
    from launcher.store.history import load_resumable

    # The worker takes the run lock; `owner` hides every other session, whoever's it is.
    stored = load_resumable(state_home(), ref, run=False, owner=owner)
    if agent and agent != stored.agent:
        raise UsageError(f"session {stored.id} is agent {stored.agent!r}; leave `agent` out")
    return stored


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
        self.scripted_roots = scripted_roots(config_dir, workspace, scripted_dirs)
        self.server: Server[Any] = Server(
            catalog.SERVER_NAME,
            version=catalog.SERVER_VERSION,
            instructions=catalog.INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            cache_hints={"tools/list": CacheHint(TOOLS_LIST_TTL_MS, "private")},
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

    def _last_started(self, caller: str | None) -> str:
        """`resume: "last"`: the newest session this serve started for this caller (another
        caller's, a CLI run's or a nested child's never is); UsageError if none is known."""
        from launcher.errors import UsageError

        for entry in reversed(list(self.manager.agents.values())):
            if entry.session_id and entry.caller == caller:
                return entry.session_id
        raise UsageError("no sub-agent this serve started has a stored session: nothing is `last`")

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
        for `caller`; `can_ask`: its servers' input requests may wait for this host.

        The store lookup and a host script's read and parse run on a thread: the event
        loop keeps answering the host meanwhile.
        """
        from launcher.assemble import resolve_request
        from launcher.config.snapshot import snapshot_of

        schema = catalog.tool_schema("spawn_subagent")
        assert schema is not None
        host_args, args = args, check_arguments("spawn_subagent", schema, args)
        prompt = str(args["prompt"])
        agent = str(args.get("agent") or "general-purpose")
        ext = [str(e) for e in args.get("ext") or []]
        model, resume = args.get("model"), args.get("resume")
        config = self.config
        hosts = model  # a model the host named: a `scripted:` one is read here, once
        if resume:
            ref = self._last_started(caller) if resume == "last" else str(resume)
            owner = self.manager.owner_of(caller)
            stored = await anyio.to_thread.run_sync(_stored, ref, args.get("agent"), owner)
            agent, resume = stored.agent, stored.id
            if model is None:
                model = stored.model
                # The host's own choice the last time is read and checked again.
                hosts = None if self._operators(model, config, agent) else model
        read = functools.partial(
            read_host_script, hosts, roots=self.scripted_roots, workspace=self.workspace
        )
        script = await anyio.to_thread.run_sync(read)
        spec = resolve_request(config, agent, ext)
        if args.get("background") is None:
            # The agent file's default, seen by the caller that decides how to answer.
            host_args["background"] = spec.background
        if host_args.get("background"):
            can_ask = False  # nobody waits on a background call to answer its servers' asks
        max_turns = args.get("max_turns")
        limits = {k: args[k] for k in LIMIT_FIELDS if args.get(k) is not None}
        # The worker enforces them; serve keeps the timeout too, to end a stuck worker.
        timeout = resolve_limits(limits_of(spec), Limits.from_mapping(limits))[0].timeout
        return self.manager.spawn(
            prompt,
            agent=agent,
            ext=ext,
            model=model,
            max_turns=int(max_turns) if max_turns is not None else None,
            limits=limits,
            backstop=timeout,
            resume=resume or None,
            # The worker runs with what serve loaded and checked, never a fresh discovery.
            config=snapshot_of(config, lock=not self.manager.no_lock),
            script=script,
            caller=caller,
            can_ask=can_ask,
        )

    def _operators(self, model: str | None, config: Any, agent: str) -> bool:
        """Whether a resumed session's `model` is the operator's choice (serve's `--model`,
        the agent's `model:`, SUBAGENT_MODEL), which the worker reads as it always has,
        rather than one a host named (whose script is read and checked again)."""
        spec = config.agents.get(agent)
        chosen = (self.manager.default_model, spec.model if spec else None, settings.MODEL.raw())
        return model is None or model in chosen

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
