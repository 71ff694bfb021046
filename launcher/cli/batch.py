"""`subagent batch`: one sub-agent per line of a tasks file, one result line per task."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from launcher.cli.options import (
    ConfigDir,
    IdleTimeout,
    Isolation,
    MaxCost,
    MaxTokens,
    ServersFrom,
    Timeout,
    Verbose,
    Workspace,
    exit_with,
    limits_json,
    load,
)


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
    max_tokens: MaxTokens = None,
    max_cost: MaxCost = None,
    timeout: Timeout = None,
    idle_timeout: IdleTimeout = None,
    max_cost_total: Annotated[
        float | None,
        typer.Option("--max-cost-total", min=0.0, help="USD for the whole batch."),
    ] = None,
) -> None:
    """Run one sub-agent per line of a tasks file; one result line per task as it ends."""

    def body() -> int:
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
            limits={
                k: v
                for k, v in limits_json(max_tokens, max_cost, timeout, idle_timeout).items()
                if v is not None
            },
        )
        return run_batch_command(
            tasks,
            out=out,
            jobs=jobs,
            engine=engine,
            options=options,
            retry_failed=retry_failed,
            max_cost_total=max_cost_total,
        )

    exit_with(body, fast=True)


def run_batch_command(
    tasks: Path,
    *,
    out: Path | None,
    jobs: int,
    engine: str,
    options: Any,
    retry_failed: bool,
    max_cost_total: float | None = None,
) -> int:
    """Exit 0 every task completed, 1 any failed (in this run or recorded in `out` from an
    earlier one), 2 a bad input line or an unusable `--out`."""
    from launcher.cli.render import BatchBar, print_batch_summary
    from launcher.cli.run import run_async
    from launcher.engines.batch import plan_rerun, run_batch
    from launcher.engines.factory import engine_factory
    from launcher.errors import UsageError

    make_engine = engine_factory(engine)
    if not tasks.is_file():
        raise UsageError(f"{tasks}: no such tasks file")
    if out is not None:
        check_writable(out, "--out")
    plan = plan_rerun(out, retry_failed=retry_failed)
    bar = BatchBar() if sys.stderr.isatty() else None
    sink = out.open("a", encoding="utf-8") if out is not None else sys.stdout

    async def main() -> Any:
        from launcher.telemetry import traces

        with traces().batch(tasks) as span:
            progress = await run_batch(
                tasks,
                make_engine(options),
                out=sink,
                jobs=jobs,
                skip=plan.skip,
                failed_before=plan.failed_before,
                on_change=bar,
                max_cost_total=max_cost_total,
            )
            span.done(progress)
        return progress

    try:
        progress = run_async(main)
    finally:
        if bar is not None:
            bar.clear()
        if sink is not sys.stdout:
            sink.close()
    print_batch_summary(progress)
    if options.verbose:
        from launcher.state import state_home

        sys.stderr.write(f"batch: worker logs in {state_home() / 'batch'}\n")
    code: int = progress.exit_code()
    return code


def check_writable(path: Path, option: str) -> None:
    """UsageError unless `path` can be appended to (its directory exists, it is a file)."""
    from launcher.errors import UsageError

    if not path.parent.is_dir():
        raise UsageError(f"{option} {path}: directory {path.parent} does not exist")
    try:
        with path.open("a", encoding="utf-8"):
            pass
    except OSError as exc:
        raise UsageError(f"{option} {path}: cannot write: {exc.strerror or exc}") from exc
