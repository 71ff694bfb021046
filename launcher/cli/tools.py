"""`subagent tools`: start a session, wait for its servers, print the tool set, end it."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from launcher.cli.options import (
    ConfigDir,
    ExtOpt,
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

if TYPE_CHECKING:
    from launcher.config.types import Config


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


def run_tools(
    config: Config,
    agent_name: str,
    *,
    ext: Sequence[str],
    settle: float,
    json_out: bool,
    workspace: Path,
    verbose: bool,
    no_lock: bool = False,
) -> int:
    """Start a session, wait for the barrier + settle, print, end."""
    from launcher.assemble import assemble_session, plan_run
    from launcher.cli.render import ProgressLine, print_tools_table
    from launcher.cli.run import run_async
    from launcher.cli.views import tools_report

    plan = plan_run(config, agent_name, ext=ext, workspace=workspace, lock=not no_lock)
    session = assemble_session(plan)
    progress = ProgressLine() if sys.stderr.isatty() and not json_out else None
    if progress is not None:
        session.bus.subscribe(progress)

    async def main() -> dict[str, Any]:
        import anyio

        async def body(s: Any) -> dict[str, Any]:
            if settle > 0:
                await anyio.sleep(settle)
            # Masked as spawn's events are: a server may name a tool after a secret.
            report: dict[str, Any] = s.mask.value(tools_report(s))
            return report

        return await session.run(body)

    try:
        report = run_async(main)
    finally:
        if progress is not None:
            progress.clear()
    if json_out:
        import json

        print(json.dumps(report, indent=2))
    else:
        print_tools_table(report)
    if verbose:
        sys.stderr.write(f"session logs: {session.dir}\n")
    return 0
