"""`tools`, `spawn` and `serve`: the commands that run sessions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from launcher.cli.options import (
    ConfigDir,
    ExtOpt,
    Isolation,
    JsonFlag,
    NoLock,
    SandboxOpt,
    ServersFrom,
    Verbose,
    Workspace,
    check_settle,
    exit_with,
    load,
)


def tools(
    agent: Annotated[str, typer.Argument(help="Agent name.")] = "general-purpose",
    ext: ExtOpt = None,
    settle: Annotated[
        float,
        typer.Option(callback=check_settle, help="Seconds to wait after the ready barrier."),
    ] = 0.0,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    servers_from: ServersFrom = None,
    workspace: Workspace = None,
    verbose: Verbose = False,
    no_lock: NoLock = False,
    sandbox: SandboxOpt = None,
) -> None:
    """Start a session, wait for its servers, print the tool set, end the session."""

    def body() -> int:
        from launcher.cli.run import run_tools

        config = load(config_dir, session=True)
        return run_tools(
            config,
            agent,
            ext=ext or [],
            settle=settle,
            json_out=json_out,
            workspace=workspace or Path.cwd(),
            verbose=verbose,
            no_lock=no_lock,
        )

    exit_with(body, fast=True)


def spawn(
    args: Annotated[
        list[str],
        typer.Argument(help="The agent (default general-purpose) and the prompt; '-' reads stdin."),
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
) -> None:
    """Run an agent on a prompt to its end."""

    def body() -> int:
        from launcher.cli.run import load_resume, run_spawn
        from launcher.errors import UsageError
        from launcher.worktree import check_isolation

        check_isolation(isolation)
        history = None
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
        elif len(args) == 2 and agent_opt is None:
            agent, prompt = args
        else:
            raise UsageError("expected [AGENT] PROMPT (or --agent NAME PROMPT)")
        config_from = config_dir
        if history is not None and config_from is None and history.config_dir:
            config_from = Path(history.config_dir)
        config = load(config_from, session=True)  # may re-exec: before stdin is read
        if prompt == "-":
            prompt = sys.stdin.read()
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        if workspace is None and history is not None and history.workspace:
            workspace_dir = Path(history.workspace)
        else:
            workspace_dir = workspace or Path.cwd()
        return run_spawn(
            config,
            agent,
            prompt,
            ext=ext or [],
            model=model,
            max_turns=max_turns,
            base_url=base_url,
            json_out=json_out,
            workspace=workspace_dir,
            verbose=verbose,
            config_dir=config_from,
            no_lock=no_lock,
            history=history,
            isolation=isolation,
        )

    exit_with(body, fast=True)


def serve(
    model: Annotated[
        str | None, typer.Option("--model", help="Default model for sub-agents.")
    ] = None,
    max_concurrent: Annotated[
        int, typer.Option("--max-concurrent", min=1, help="Sub-agents running at once.")
    ] = 4,
    task_ttl: Annotated[
        float,
        typer.Option(
            "--task-ttl",
            min=0.001,
            max=86400.0,
            help="Seconds an ended MCP task's result is kept when the host names no ttl.",
        ),
    ] = 3600.0,
    config_dir: ConfigDir = None,
    servers_from: ServersFrom = None,
    workspace: Workspace = None,
    no_lock: NoLock = False,
    scripted_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--scripted-dir",
            metavar="DIR",
            exists=True,
            file_okay=False,
            help="Also accept a host's scripted:PATH model from DIR (repeatable).",
        ),
    ] = None,
    sandbox: SandboxOpt = None,
) -> None:
    """Serve MCP on stdio: tools that spawn, query, steer and stop sub-agents."""

    def body() -> int:
        from launcher.cli.servecmd import run_serve

        return run_serve(
            model=model,
            max_concurrent=max_concurrent,
            task_ttl=task_ttl,
            config_dir=config_dir,
            workspace=workspace,
            no_lock=no_lock,
            scripted_dirs=list(scripted_dir or []),
        )

    exit_with(body, fast=True)
