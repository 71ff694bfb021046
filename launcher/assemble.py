"""The one place a run is planned and its Session put together: config + agent + --ext +
workspace (+ model), resolved once into a RunPlan (run_plan.py).

The CLI, the serve worker, `check` and `batch` all build their sessions here, so every
session is scoped, recorded and run the same way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from launcher import settings
from launcher.config.discovery import check_ext_names, resolve_agent
from launcher.config.lockfile import Lock, load_lock
from launcher.config.types import AgentSpec, Config, ServerSpec
from launcher.events import EventBus, RunStatus
from launcher.state import state_home

if TYPE_CHECKING:
    import ssl

    import httpx2

    from launcher.agent import AgentLoop
    from launcher.budget import Limits
    from launcher.hooks.run import RunHooks
    from launcher.run_plan import ModelChoice, RunPlan, StoreSettings
    from launcher.session import Session
    from launcher.store.history import StoredSession
    from launcher.tools.delegate import Delegate

"""Set to 0 to run without the session store (benchmarks compare the two)."""
MODEL_HTTP_CONNECT_S = 10.0
"""A model API that does not accept a connection in this long is down."""
MODEL_HTTP_READ_S = 300.0
"""Model APIs may think for minutes before the first streamed byte."""
MODEL_HTTP_WRITE_S = 30.0
"""Sending a long conversation still takes seconds, not minutes."""


def resolve_request(config: Config, agent_name: str, ext: Sequence[str]) -> AgentSpec:
    """The agent a request names, with every `--ext` checked: UsageError if either is unknown."""
    agent = resolve_agent(config, agent_name)
    check_ext_names(config, ext)
    return agent


def agent_servers(config: Config, agent: AgentSpec) -> dict[str, ServerSpec]:
    """The servers `agent` may draw on: the configured ones plus those its file defines
    inline (Claude Code's `mcpServers`), which exist for it alone and win by name."""
    return {**config.servers, **{spec.name: spec for spec in agent.servers}}


def plan_run(
    config: Config,
    agent: AgentSpec | str,
    *,
    ext: Sequence[str] = (),
    workspace: Path,
    lock: bool = True,
    pins: Lock | None = None,
    store: StoreSettings | None = None,
    history: StoredSession | None = None,
    model: ModelChoice | None = None,
    limits: Limits | None = None,
    ceiling: Limits | None = None,
) -> RunPlan:
    """The run `agent` (a name, or an AgentSpec the caller resolved) asks for under `config`.

    With `lock` (the default; `--no-lock` clears it) and a lock file holding a pin for the
    agent, the run mutes every server tool that does not match the pin (`pins`: the lock
    as the run's config snapshot holds it, instead of the file). Every agent run is
    recorded in the session store (`SUBAGENT_STORE=0` turns it off) as `store` says;
    `history` continues a stored session (a resume). A `required` sandbox the OS cannot
    give raises RunError here, before anything starts.
    """
    from launcher.budget import Limits
    from launcher.config.sandbox_field import agent_sandbox
    from launcher.run_plan import ModelChoice, RunPlan, StoreSettings
    from launcher.tools.sandbox import check_start

    if isinstance(agent, str):
        agent = resolve_request(config, agent, ext)
    else:
        check_ext_names(config, ext)
    agent = dataclasses.replace(
        agent,
        sandbox=agent_sandbox(agent, config.sandbox),
        tool_search=agent.tool_search if agent.tool_search is not None else config.tool_search,
    )
    check_start(agent.name, agent_sandbox(agent, None))
    pin = None
    if lock and config.lock_path is not None:
        found = pins if pins is not None else load_lock(config.lock_path)
        pin = found.agents.get(agent.name) if found is not None else None
    recorded = settings.store_enabled()
    return RunPlan(
        agent=agent,
        servers=agent_servers(config, agent),
        ext=tuple(ext),
        workspace=workspace.resolve(),
        state_home=state_home(),
        pin=pin,
        session_id=history.id if history is not None else None,
        store=(store or StoreSettings()) if recorded else None,
        model=model or ModelChoice(),
        limits=limits or Limits(),
        ceiling=ceiling or Limits(),
        prices=config.prices,
        history=history,
    )


def assemble_session(
    plan: RunPlan,
    *,
    bus: EventBus | None = None,
    home: Path | None = None,
    delegate: Delegate | None = None,
) -> Session:
    """A ready-to-run Session for `plan`; starts nothing yet."""
    from launcher.session import Session

    session = Session(plan, bus=bus, home=home, delegate=delegate)
    if plan.store is not None:
        from launcher.store.sink import StoreSink

        config_dir = plan.store.config_dir
        session.bus.subscribe(
            StoreSink(
                plan.state_home,
                workspace=session.workspace,
                config_dir=config_dir.resolve() if config_dir else None,
                depth=plan.store.depth,
                owner=plan.store.owner,
                held=plan.runtime.store,
            )
        )
    return session


def _warn(line: str) -> None:
    sys.stderr.write(f"subagent: warning: {line}\n")


@functools.cache
def model_tls_context() -> ssl.SSLContext:
    """The trust store model clients verify with, loaded once a process: loading it costs
    ~70 ms, which a spare worker pays while it waits instead of in the spawn."""
    import httpx2

    return httpx2.create_ssl_context()


def model_http_client() -> httpx2.AsyncClient:
    """The HTTP client every model of a run shares."""
    import httpx2

    timeout = httpx2.Timeout(
        connect=MODEL_HTTP_CONNECT_S,
        read=MODEL_HTTP_READ_S,
        write=MODEL_HTTP_WRITE_S,
        pool=MODEL_HTTP_CONNECT_S,
    )
    return httpx2.AsyncClient(timeout=timeout, verify=model_tls_context())


def run_hooks(session: Session) -> RunHooks | None:
    """The Claude Code hooks of the session's agent (None without any: nothing is imported)."""
    if not session.agent.hooks:
        return None
    from launcher.hooks.run import RunHooks

    return RunHooks(
        session.agent.hooks,
        agent=session.agent.name,
        session_id=session.id,
        workspace=session.workspace,
        transcript=session.dir / "events.jsonl",
        emit=session.emit,
        mask=session.mask,
        watchdog=session.watchdog,
    )


async def run_agent(
    session: Session,
    prompt: str,
    *,
    on_loop: Callable[[AgentLoop], None] | None = None,
    before: Callable[[Session], Awaitable[None]] | None = None,
    warn: Callable[[str], None] | None = None,
) -> RunStatus:
    """Run the session's agent on `prompt` to its end, as the session's plan says; returns
    the final status.

    `on_loop` receives the AgentLoop before it runs, so a driver can steer or stop it;
    `before` runs after the ready barrier, before turn 1 (`check` inspects the surface).
    A plan's `history` (a stored session) continues that conversation: `prompt` is the
    follow-up. Its limits are lowered to the agent file's (with a `warn`ing) and to its
    ceiling. A `max_cost_usd` on a model no price table knows is a UsageError.
    """
    from launcher.agent import AgentLoop
    from launcher.budget import Budget, limits_of, resolve_limits
    from launcher.errors import UsageError
    from launcher.models.factory import create_model, resolve_model_spec, uses_http
    from launcher.models.prices import pricer_for

    plan = session.plan
    history, model = plan.history, plan.model.spec
    stored_model = history.model if history is not None else None
    spec = resolve_model_spec(model or stored_model, plan.agent.model, os.environ)
    resolved, warnings = resolve_limits(
        limits_of(plan.agent), plan.limits, who=f"agent '{plan.agent.name}'"
    )
    resolved = resolved.clamped(plan.ceiling)
    for line in warnings:
        (warn or _warn)(line)
    pricer = pricer_for(spec, plan.prices)
    if resolved.max_cost_usd is not None and pricer is None:
        # Fail closed: a cost limit that cannot be counted is no limit.
        raise UsageError(
            f"max_cost_usd: no price known for model '{spec}' (add it under \"prices\" in mcp.json)"
        )
    budget = Budget(resolved)  # the clock starts before any server does
    # A scripted model needs no client: skip httpx and the trust store (~130 ms of CPU).
    http_client = model_http_client() if uses_http(spec) else contextlib.nullcontext(None)
    async with http_client as http:
        # Built before any server starts: a bad model spec costs no process.
        script = plan.model.script
        text = script if model is not None and spec == model.strip() else None
        llm = create_model(
            spec, http=http, base_url=plan.model.base_url, workspace=Path.cwd(), script=text
        )
        loop = AgentLoop(
            session,
            llm,
            prompt=session.agent.prompt,
            max_turns=resolved.max_turns,
            hooks=run_hooks(session),
            budget=budget,
            pricer=pricer,
        )
        if resolved.idle_timeout is not None and hasattr(llm, "stall_after"):
            llm.stall_after(resolved.idle_timeout)
        if history is not None:
            loop.messages = list(history.messages)
            loop.turn = history.turns
        session.on_required_lost(loop.fail)
        if on_loop is not None:
            on_loop(loop)

        async def body(s: Session) -> RunStatus:
            if before is not None:
                await before(s)
            end = await loop.run(prompt)
            return end.status

        return await session.run(body)
