"""What the commands share: option types, loading the config, the one exit path."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

ConfigDir = Annotated[
    Path | None,
    typer.Option("--config-dir", envvar="SUBAGENT_CONFIG_DIR", help="Hermetic config directory."),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
ExtOpt = Annotated[
    list[str] | None, typer.Option("--ext", help="Add the selector ext:NAME (repeatable).")
]


def check_settle(value: float) -> float:
    """Typer callback: a settle time must be a finite number of seconds >= 0."""
    if not math.isfinite(value) or value < 0:
        raise typer.BadParameter(f"expected a number of seconds >= 0, got {value}")
    return value


Workspace = Annotated[
    Path | None,
    typer.Option(
        "--workspace",
        exists=True,
        file_okay=False,
        help="Directory the file tools may touch (default: cwd).",
    ),
]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Show server logs and paths.")]
Isolation = Annotated[
    str | None,
    typer.Option(
        "--isolation",
        metavar="worktree",
        help="worktree: work in a fresh git worktree of the workspace's repository, "
        "on a new branch (kept only if something changed).",
    ),
]
NoLock = Annotated[
    bool, typer.Option("--no-lock", help="Ignore subagent.lock.json (offer unpinned tools).")
]


def load(config_dir: Path | None, *, session: bool = False, cwd: Path | None = None) -> Any:
    """The config, its warnings printed once; `session`: hide secrets before using them.

    A command that runs sessions must not hold secrets in its environment block, which
    the model's shell can read: it re-executes itself without them (procs/hidden.py), and
    the new process takes them back over a descriptor before the config is expanded.
    """
    from launcher.config.discovery import load_config

    cwd = cwd or Path.cwd()
    if session:
        from launcher.procs.hidden import restore

        restored = restore()
    config = load_config(config_dir, cwd=cwd)
    if session:
        from launcher.config.expand import referenced_names
        from launcher.procs.hidden import hide_referenced, reexec_hiding, secret_names

        used = set().union(*(referenced_names(s.raw) for s in config.servers.values()), set())
        if not restored or hide_referenced(used):
            # Returns only if nothing is left to hide.
            reexec_hiding(secret_names(os.environ, used))
    for warning in config.warnings:
        sys.stderr.write(f"subagent: warning: {warning}\n")
    return config


def exit_with(fn: Callable[[], int | None], *, fast: bool = False) -> None:
    """Run a command body through the one exit-code map; `fast` skips interpreter teardown."""
    from launcher.cli.run import finish, guarded

    code = guarded(fn)
    if fast:
        finish(code)
    raise typer.Exit(code)
