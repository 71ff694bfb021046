"""`check`, `lock` and `batch`: the CI and fan-out commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launcher.cli.options import (
    ConfigDir,
    Isolation,
    JsonFlag,
    ServersFrom,
    Verbose,
    Workspace,
    check_settle,
    exit_with,
    load,
)

LOCK_SETTLE_S = 1.0
"""`subagent lock` waits this long after the ready barrier, as `check` does by default."""


def check(
    targets: Annotated[
        list[str] | None,
        typer.Argument(help="AGENT or CHECKFILE (default: every expect: block and check file)."),
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Sessions running at once.")] = 2,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    servers_from: ServersFrom = None,
    workspace: Workspace = None,
) -> None:
    """Run agents' expect: blocks, check files and lock drift; exit 1 if any check fails."""

    def body() -> int:
        from launcher.cli.run import run_check

        config = load(config_dir, session=True)
        return run_check(
            config,
            targets or [],
            jobs=jobs,
            junit=junit,
            json_out=json_out,
            workspace=workspace or Path.cwd(),
        )

    exit_with(body, fast=True)


def batch(
    tasks: Annotated[Path, typer.Argument(help="TASKS.jsonl: {id, prompt, agent?, ext?, ...}")],
    out: Annotated[
        Path | None, typer.Option("--out", help="RESULTS.jsonl (appended; re-runs skip ids)")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Tasks running at once.")] = 4,
    engine: Annotated[str, typer.Option("--engine", help="local or ray.")] = "local",
    address: Annotated[
        str | None, typer.Option("--address", help="Ray cluster address (default: local)")
    ] = None,
    num_cpus: Annotated[float, typer.Option("--num-cpus", help="Ray CPUs per task.")] = 1.0,
    max_retries: Annotated[
        int, typer.Option("--max-retries", min=0, help="Ray retries for a lost worker.")
    ] = 1,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run tasks that failed before.")
    ] = False,
    model: Annotated[
        str | None, typer.Option("--model", help="Default model for tasks without one.")
    ] = None,
    config_dir: ConfigDir = None,
    servers_from: ServersFrom = None,
    workspace: Workspace = None,
    isolation: Isolation = None,
    verbose: Verbose = False,
) -> None:
    """Run one sub-agent per line of a tasks file; one result line per task as it ends."""

    def body() -> int:
        from launcher.cli.run import run_batch_command
        from launcher.engines.base import EngineOptions
        from launcher.worktree import check_isolation, repo_root

        check_isolation(isolation)
        where = (workspace or Path.cwd()).resolve()
        if isolation is not None:
            repo_root(where)  # not a git repository: exit 2 before any task runs
        load(config_dir, session=True)  # a broken config is reported before any task runs
        options = EngineOptions(
            config_dir=str(config_dir.resolve()) if config_dir else None,
            workspace=str(where),
            isolation=isolation,
            verbose=verbose,
            model=model,
            address=address,
            num_cpus=num_cpus,
            max_retries=max_retries,
            jobs=jobs,
        )
        return run_batch_command(
            tasks,
            out=out,
            jobs=jobs,
            engine=engine,
            options=options,
            retry_failed=retry_failed,
        )

    exit_with(body, fast=True)


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
        from launcher.cli.run import run_lock

        config = load(config_dir, session=True)
        return run_lock(config, agents or [], settle=settle, workspace=workspace or Path.cwd())

    exit_with(body, fast=True)
