"""`subagent lock`: pin each agent's server tools in subagent.lock.json."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from launcher.cli.options import (
    ConfigDir,
    ServersFrom,
    Workspace,
    check_settle,
    exit_with,
    load,
)

if TYPE_CHECKING:
    from launcher.config.types import Config

LOCK_SETTLE_S = 1.0
"""`subagent lock` waits this long after the ready barrier, as `check` does by default."""


def lock(
    agents: Annotated[
        list[str] | None,
        typer.Argument(
            help="Agents to pin (default: those already locked or with an expect: block, "
            "else general-purpose)."
        ),
    ] = None,
    settle: Annotated[
        float,
        typer.Option(
            callback=check_settle, help="Seconds to wait after the ready barrier before pinning."
        ),
    ] = LOCK_SETTLE_S,
    config_dir: ConfigDir = None,
    servers_from: ServersFrom = None,
    workspace: Workspace = None,
) -> None:
    """Pin each agent's server tools in subagent.lock.json and print what changed."""

    def body() -> int:
        config = load(config_dir, session=True)
        return run_lock(config, agents or [], settle=settle, workspace=workspace or Path.cwd())

    exit_with(body, fast=True)


def run_lock(config: Config, agents: Sequence[str], *, settle: float, workspace: Path) -> int:
    """Pin each agent's surface, write the lock, print each agent's diff."""
    from launcher.check.lock_writer import lock_agents
    from launcher.cli.render import print_lock_report, print_withheld
    from launcher.cli.run import run_async

    async def main() -> Any:
        return await lock_agents(config, agents, settle=settle, workspace=workspace)

    results = run_async(main)
    print_lock_report(results, config.lock_path)
    print_withheld(results)
    return 0
