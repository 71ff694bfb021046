"""`subagent check`: run agents' expect: blocks, check files and lock drift."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from launcher.cli.options import (
    ConfigDir,
    JsonFlag,
    ServersFrom,
    Workspace,
    exit_with,
    load,
)

if TYPE_CHECKING:
    from launcher.config.types import Config


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


def run_check(
    config: Config,
    named: Sequence[str],
    *,
    jobs: int,
    junit: Path | None,
    json_out: bool,
    workspace: Path,
) -> int:
    """Exit 0 every check passed, 1 any failed (2: bad config, raised)."""
    from launcher.check.cases import select_cases
    from launcher.check.report import check_report, write_junit
    from launcher.check.runner import preflight, run_checks
    from launcher.cli.render import CheckBar, print_check_table
    from launcher.cli.run import run_async
    from launcher.errors import UsageError

    cases = select_cases(config, named)
    if not cases:
        raise UsageError("no checks: no agent has an expect: block and there is no checks/*.yaml")
    preflight(config, cases)
    bar = CheckBar() if sys.stderr.isatty() else None

    async def main() -> Any:
        return await run_checks(config, cases, jobs=jobs, workspace=workspace, on_change=bar)

    try:
        results = run_async(main)
    finally:
        if bar is not None:
            bar.clear()
    report = check_report(results)
    if junit is not None:
        write_junit(results, junit)
    if json_out:
        import json

        print(json.dumps(report, indent=2))
    else:
        print_check_table(report)
    return 0 if report["failed"] == 0 else 1
