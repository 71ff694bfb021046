"""`subagent serve`'s MCP face: a stdio server any coding agent can use as its sub-agent backend.

Its tools spawn, query, steer and stop sub-agents; each sub-agent is a worker process
that starts its own MCP servers at its own session start, so serve itself starts none.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from launcher.backend import catalog
from launcher.backend.arguments import check_arguments
from launcher.backend.early import EarlyFace
from launcher.backend.handover import early_streams
from launcher.backend.host_model import read_host_script, scripted_roots
from launcher.backend.pool import SubAgent, SubagentManager
from launcher.backend.progress import PROGRESS_DRAIN_S, ProgressRelay
from launcher.backend.spare import SparePool
from launcher.backend.tasks.store import TaskStore, run_result
from launcher.backend.tasks.wire import install_tasks
from launcher.errors import SubagentError
from launcher.store.owner import Owner


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
    ) -> None:
        self.manager = manager
        self.config_dir = config_dir
        self.workspace = workspace
        self.scripted_roots = scripted_roots(config_dir, workspace, scripted_dirs)
        self.server: Server[Any] = Server(
            catalog.SERVER_NAME,
            version=catalog.SERVER_VERSION,
            instructions=catalog.INSTRUCTIONS,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    def agents(self) -> list[tuple[str, str]]:
        """(name, description) of every agent serve can run, from the config of the moment."""
        return catalog.agents_of(self._config())

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        # 2026-07-28 has no `execution` on a tool (its sieve drops it): there the tasks
        # extension, per request, decides (tasks/v2026_07_28.py).
        listed = catalog.tools(self.agents(), task_support=catalog.has_tasks(ctx.protocol_version))
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in listed])

    async def _call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            handler = getattr(self, f"_tool_{params.name}", None)
            schema = catalog.tool_schema(params.name)
            if handler is None or schema is None:
                return _error(f"Unknown tool: {params.name}")
            args = check_arguments(params.name, schema, params.arguments)
            return await handler(args, ctx)
        except SubagentError as exc:
            return _error(str(exc))
        except (KeyError, TypeError, ValueError) as exc:
            return _error(f"Invalid arguments for {params.name}: {exc}")

    def _last_started(self) -> str:
        """`resume: "last"`: the newest session this serve started for its host (another
        host's, a CLI run's or a nested child's never is); UsageError if none is known."""
        from launcher.errors import UsageError

        for entry in reversed(list(self.manager.agents.values())):
            if entry.session_id:
                return entry.session_id
        raise UsageError("no sub-agent this serve started has a stored session: nothing is `last`")

    def _config(self) -> Any:
        from launcher.config.discovery import load_config

        return load_config(self.config_dir, cwd=self.workspace)

    def _lookup(self, args: dict[str, Any]) -> SubAgent:
        agent_id = str(args["agent_id"])
        entry = self.manager.get(agent_id)
        if entry is None and agent_id in self.manager.expired:
            raise ValueError(
                f"sub-agent '{agent_id}' has expired: it ended and serve no longer keeps its "
                "result (its task's ttl passed, or many later runs ended since)"
            )
        if entry is None:
            raise ValueError(f"no sub-agent with agent_id '{agent_id}'")
        return entry

    async def start_spawn(self, args: dict[str, Any]) -> SubAgent:
        """Validate `spawn_subagent` arguments and queue the sub-agent (tools and tasks alike).

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
        config = self._config()
        hosts = model  # a model the host named: a `scripted:` one is read here, once
        if resume:
            ref = self._last_started() if resume == "last" else str(resume)
            owner = self.manager.owner
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
        max_turns = args.get("max_turns")
        return self.manager.spawn(
            prompt,
            agent=agent,
            ext=ext,
            model=model,
            max_turns=int(max_turns) if max_turns is not None else None,
            resume=resume or None,
            # The worker runs with what serve loaded and checked, never a fresh discovery.
            config=snapshot_of(config, lock=not self.manager.no_lock),
            script=script,
        )

    def _operators(self, model: str | None, config: Any, agent: str) -> bool:
        """Whether a resumed session's `model` is the operator's choice (serve's `--model`,
        the agent's `model:`, SUBAGENT_MODEL), which the worker reads as it always has,
        rather than one a host named (whose script is read and checked again)."""
        from launcher.models.factory import MODEL_ENV

        spec = config.agents.get(agent)
        chosen = (self.manager.default_model, spec.model if spec else None, os.getenv(MODEL_ENV))
        return model is None or model in chosen

    async def _tool_spawn_subagent(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        entry = await self.start_spawn(args)
        if args.get("background"):
            return _result(json.dumps({"agent_id": entry.id}), {"agent_id": entry.id})
        try:
            await self._wait_reporting_progress(entry, ctx)
        except anyio.get_cancelled_exc_class():
            # The host gave up on the call: the sub-agent it asked for must not run on.
            with anyio.CancelScope(shield=True):
                await self.manager.stop(entry)
            raise
        return run_result(entry)

    async def _wait_reporting_progress(self, entry: SubAgent, ctx: Any) -> None:
        """Wait for the sub-agent's end, relaying progress when the host asked for it."""
        meta = getattr(ctx, "meta", None) or {}
        token = meta.get("progress_token")
        if token is None:
            await entry.done.wait()
            return

        async def send(progress: float, message: str) -> None:
            await ctx.session.send_progress_notification(
                progress_token=token,
                progress=progress,
                message=message,
                related_request_id=ctx.request_id,
            )

        relay = ProgressRelay(send)
        entry.watchers.append(relay.watch)
        async with anyio.create_task_group() as tg:
            tg.start_soon(relay.forward)
            try:
                await entry.done.wait()
            finally:
                relay.close()  # what is queued is still sent, then forward() returns
            with anyio.move_on_after(PROGRESS_DRAIN_S):
                await relay.finished.wait()
            tg.cancel_scope.cancel()

    async def _tool_get_subagent_result(
        self, args: dict[str, Any], ctx: Any
    ) -> types.CallToolResult:
        entry = self._lookup(args)
        if args.get("wait"):
            await entry.done.wait()
        return _result(entry.result, entry.snapshot())

    async def _tool_steer_subagent(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        entry = self._lookup(args)
        if entry.done.is_set() or entry.final:
            return _error(f"sub-agent {entry.id} has ended ({entry.status}); nothing to steer")
        await self.manager.steer(entry, str(args["message"]))
        return _result(f"queued for {entry.id}'s next turn", entry.snapshot())

    async def _tool_stop_subagent(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        entry = self._lookup(args)
        await self.manager.stop(entry)
        return _result(entry.status, entry.snapshot())

    async def _tool_list_agents(self, args: dict[str, Any], ctx: Any) -> types.CallToolResult:
        config = self._config()
        agents = [{"name": a.name, "description": a.description} for a in config.agents.values()]
        text = "\n".join(f"{a['name']}: {a['description']}" for a in agents)
        return _result(text, {"agents": agents})


async def serve(
    *,
    config_dir: Path | None,
    workspace: Path,
    state_home: Path,
    model: str | None,
    max_concurrent: int,
    no_lock: bool = False,
    task_ttl_ms: int | None = None,
    scripted_dirs: tuple[Path, ...] = (),
    early: EarlyFace | None = None,
    spares: SparePool | None = None,
) -> None:
    """Serve MCP on stdio until the host closes stdin; every worker is ended on the way out.

    `task_ttl_ms`: how long an ended task is kept when the host names no ttl; `early`: the
    face that has owned the wire while the SDK loaded (early.py), else the SDK's stdio;
    `spares`: the spare pool, its first spares started before the SDK loaded.
    """
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    async with anyio.create_task_group() as tg:
        manager = SubagentManager(
            tg,
            config_dir=config_dir,
            workspace=workspace,
            state_home=state_home,
            default_model=model,
            max_concurrent=max_concurrent,
            no_lock=no_lock,
            spares=spares,
        )
        app = SubagentServer(manager, config_dir, workspace, scripted_dirs)
        options = install_tasks(
            app.server,
            TaskStore(manager, tg, default_ttl_ms=task_ttl_ms),
            app.start_spawn,
            app.server.create_initialization_options(),
        )
        streams = early_streams(early) if early is not None else stdio_server()
        async with streams as (read_stream, write_stream):
            await app.server.run(read_stream, write_stream, options)
        # The host is gone: running workers see their stdin close and end their sessions.
        tg.cancel_scope.cancel()
