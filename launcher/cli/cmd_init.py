"""`subagent init`: write a working example config (signature; the body is initcmd.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from launcher.cli.options import exit_with


def init(
    directory: Annotated[
        Path | None,
        typer.Argument(help="Project directory to set up (default: the current one)."),
    ] = None,
    ci: Annotated[
        bool, typer.Option("--ci", help="Also write .github/workflows/agents.yml (JUnit report).")
    ] = False,
) -> None:
    """Set up .subagent/ with an example that works offline at once (--ci: and a workflow).

    An agent on the stub GitHub server, its scripted model, a check file and a lock.
    Never overwrites a file (exit 2 naming it)."""

    def body() -> int:
        from launcher.cli.initcmd import run_init

        return run_init(directory, ci=ci)

    exit_with(body, fast=True)
