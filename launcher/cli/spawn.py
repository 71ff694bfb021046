"""`subagent spawn`: run an agent on a prompt to its end (or continue a stored session)."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from launcher.cli.options import (
    ConfigDir,
    ExtOpt,
    IdleTimeout,
    Isolation,
    JsonFlag,
    MaxCost,
    MaxTokens,
    NoLock,
    SandboxOpt,
    ServersFrom,
    Timeout,
    Verbose,
    Workspace,
    exit_with,
    limits_json,
    load,
)

if TYPE_CHECKING:
    from launcher.budget import Limits
    from launcher.config.types import Config
    from launcher.run_plan import ModelChoice
    from launcher.store.history import StoredSession


AFTER_DASHDASH = "subagent.spawn.after_dashdash"
"""Context meta key: the arguments after `--` (each one a positional, never an agent)."""


class SpawnCommand(TyperCommand):
    """spawn's click command: it keeps what followed `--`, which click drops on parsing."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        ctx.meta[AFTER_DASHDASH] = args[args.index("--") + 1 :] if "--" in args else []
        return super().parse_args(ctx, args)


def spawn(
    ctx: typer.Context,
    args: Annotated[
        list[str],
        typer.Argument(
            help="The agent (default general-purpose) and the prompt; '-' reads stdin;"
            " `-- WORD` when the prompt is an agent's name."
        ),
    ],
    agent_opt: Annotated[str | None, typer.Option("--agent", help="Agent name.")] = None,
    ext: ExtOpt = None,
    model: Annotated[
        str | None, typer.Option("--model", help="PROVIDER:MODEL or scripted:PATH.")
    ] = None,
    max_turns: Annotated[
        int | None,
        typer.Option(
            "--max-turns", min=1, help="Stop after N model turns (default: the agent's max_turns)."
        ),
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Model API base URL.")] = None,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    servers_from: ServersFrom = None,
    workspace: Workspace = None,
    verbose: Verbose = False,
    no_lock: NoLock = False,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Continue stored session ID (or `last`) with PROMPT."),
    ] = None,
    sandbox: SandboxOpt = None,
    isolation: Isolation = None,
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    timeout: Timeout = None,
    idle_timeout: IdleTimeout = None,
) -> None:
    """Run an agent on a prompt to its end."""

    def body() -> int:
        from launcher.errors import UsageError
        from launcher.worktree import check_isolation

        check_isolation(isolation)
        history = None
        lone_agent = False
        if resume is not None:
            if len(args) != 1 or agent_opt is not None:
                raise UsageError("--resume takes only the follow-up PROMPT (the agent is stored)")
            if isolation is not None:
                raise UsageError("--resume continues in the stored workspace: drop --isolation")
            history = load_resume(resume)
        if history is not None:
            agent, prompt = history.agent, args[0]
        elif len(args) == 1:
            agent, prompt = agent_opt or "general-purpose", args[0]
            # A lone agent name is a forgotten prompt, unless --agent or -- said otherwise.
            lone_agent = agent_opt is None and args != ctx.meta.get(AFTER_DASHDASH)
        elif len(args) == 2 and agent_opt is None:
            agent, prompt = args
        else:
            raise UsageError("expected [AGENT] PROMPT (or --agent NAME PROMPT)")
        config_from = config_dir
        if history is not None and config_from is None and history.config_dir:
            config_from = Path(history.config_dir)
        config = load(config_from, session=True)  # may re-exec: before stdin is read
        if lone_agent and _names_an_agent(prompt, config):
            raise UsageError(
                f"missing PROMPT for agent {prompt!r} (to run general-purpose on the prompt"
                f" {prompt!r}: subagent spawn -- {prompt})"
            )
        if prompt == "-":
            prompt = sys.stdin.read()
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        if workspace is None and history is not None and history.workspace:
            workspace_dir = Path(history.workspace)
        else:
            workspace_dir = workspace or Path.cwd()
        from launcher.procs.pyenv import drop_written_paths

        drop_written_paths(workspace_dir)  # the model writes there: never on our import path
        from launcher.budget import Limits
        from launcher.run_plan import ModelChoice

        limits = Limits.from_mapping(limits_json(max_tokens, max_cost, timeout, idle_timeout))
        return run_spawn(
            config,
            agent,
            prompt,
            ext=ext or [],
            model=ModelChoice(model, base_url),
            limits=Limits(max_turns=max_turns).over(limits),
            json_out=json_out,
            workspace=workspace_dir,
            verbose=verbose,
            config_dir=config_from,
            no_lock=no_lock,
            history=history,
            isolation=isolation,
        )

    exit_with(body, fast=True)


def load_resume(ref: str) -> Any:
    """`spawn --resume REF`: the stored session (agent, config dir, history); UsageError if none."""
    from launcher.state import state_home
    from launcher.store.history import load_resumable

    return load_resumable(state_home(), ref)


def run_spawn(
    config: Config,
    agent_name: str,
    prompt: str,
    *,
    ext: Sequence[str],
    model: ModelChoice,
    limits: Limits,
    json_out: bool,
    workspace: Path,
    verbose: bool,
    config_dir: Path | None = None,
    no_lock: bool = False,
    history: StoredSession | None = None,
    isolation: str | None = None,
) -> int:
    """Run the agent to its end; exit 0 completed, 1 otherwise.

    With `history` (a StoredSession, from `--resume`) the run continues that session; with
    `isolation` (or the agent's own) a new run works in a fresh git worktree.
    """
    from launcher.assemble import assemble_session, plan_run, resolve_request, run_agent
    from launcher.backend.nested import make_delegate
    from launcher.cli.run import run_async
    from launcher.config.snapshot import snapshot_of
    from launcher.events import RunStatus, jsonl_sink
    from launcher.run_plan import StoreSettings
    from launcher.worktree import describe, isolated_workspace

    # Resolved once, before any worktree: the run's plan is made from this very agent.
    agent = resolve_request(config, agent_name, ext)
    # A resume continues in its stored workspace (the kept worktree, if any).
    mode = None if history is not None else isolation or agent.isolation

    def report(end: Any) -> None:
        # After the session's own events: the worktree is summed up once every process
        # of the run is gone.
        if json_out:
            sys.stdout.write(end.to_json() + "\n")
        else:
            sys.stderr.write(describe(end) + "\n")

    with isolated_workspace(workspace, mode, label=agent_name, report=report) as where:
        # Nested sub-agents run with this config, never a fresh discovery.
        snapshot = snapshot_of(config, lock=not no_lock)
        plan = plan_run(
            config,
            agent,
            ext=ext,
            workspace=where,
            lock=not no_lock,
            store=StoreSettings(config_dir=config_dir),
            history=history,
            model=model,
            limits=limits,
        )
        delegate = make_delegate(
            config=snapshot,
            config_dir=str(config_dir.resolve()) if config_dir else None,
            workspace=plan.workspace,
            depth=0,
            max_depth=plan.agent.max_depth,
        )
        session = assemble_session(plan, delegate=delegate)
        if json_out:
            session.bus.subscribe(jsonl_sink(sys.stdout))
        else:
            from launcher.cli.render import SpawnRenderer

            session.bus.subscribe(SpawnRenderer())

        async def main() -> RunStatus:
            return await run_agent(session, prompt)

        status = run_async(main)
        if verbose:
            sys.stderr.write(f"session logs: {session.dir}\n")
    return 0 if status.ok else 1


def _names_an_agent(word: str, config: Config) -> bool:
    """Whether a lone positional looks like an agent's name (any case, spaces around, a
    `.md` file name): a forgotten prompt, never the prompt of `general-purpose`."""
    names = {n.casefold() for n in [*config.agents, *config.broken_agents]}
    plain = word.strip().casefold()
    return plain in names or plain.removesuffix(".md") in names
