"""`subagent serve`: the MCP backend on stdio, whose tools spawn and steer sub-agents."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launcher.cli.options import (
    ConfigDir,
    NoLock,
    Workspace,
    exit_with,
    load,
)


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
    workspace: Workspace = None,
    no_lock: NoLock = False,
) -> None:
    """Serve MCP on stdio: tools that spawn, query, steer and stop sub-agents."""

    def body() -> int:
        import anyio

        from launcher.backend.server import serve as run_server
        from launcher.state import state_home

        # A broken config is reported now, not at the first spawn; loaded as the workers
        # will load it (from the workspace), so the same `${VAR}`s are hidden.
        load(config_dir, session=True, cwd=(workspace or Path.cwd()).resolve())
        anyio.run(
            lambda: run_server(
                config_dir=config_dir.resolve() if config_dir else None,
                workspace=(workspace or Path.cwd()).resolve(),
                state_home=state_home(),
                model=model,
                max_concurrent=max_concurrent,
                no_lock=no_lock,
                task_ttl_ms=round(task_ttl * 1000),
            )
        )
        return 0

    exit_with(body, fast=True)
