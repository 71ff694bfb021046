"""`subagent init [DIR] [--ci]`: a `.subagent/` config that works at once, offline.

It writes an example agent scoped to the shipped stub GitHub server, its `scripted:`
model, a check file and (with `--ci`) a GitHub Actions workflow, then pins the agent's
tools in `subagent.lock.json` — the one step that starts a server: the stub, once, for
about a second. Nothing is ever overwritten: an existing file is bad usage (exit 2), and
so is a symlink on the way (cli/init_write.py: all or nothing, never through a link).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from launcher.cli.options import exit_with

LOCK_SETTLE_S = 0.0
"""The stub server lists every tool at connect: nothing arrives later to wait for."""


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
        return run_init(directory, ci=ci)

    exit_with(body, fast=True)


def run_init(directory: Path | None, *, ci: bool) -> int:
    """Write the files, pin the example agent, say what was written and what to run next."""
    from launcher.cli import init_files as files
    from launcher.cli.init_write import refuse_symlinks, write_all
    from launcher.errors import UsageError

    root = (directory or Path.cwd()).absolute()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a directory")
    planned = files.plan(root, ci=ci, python=sys.executable)
    lock = root / files.CONFIG / "subagent.lock.json"
    targets = [p.path for p in planned] + [lock]
    refuse_symlinks(root, targets)
    for path in targets:
        if path.exists():
            raise UsageError(f"{path} already exists; init never overwrites (remove it first)")
    write_all(root, planned)
    for item in planned:
        print(f"wrote {_shown(item.path)}")
    try:
        _pin(root / files.CONFIG, files.AGENT)
    except Exception:
        sys.stderr.write(
            "subagent: the files are written; pin their tools once the server starts: "
            f"subagent lock --config-dir {_shown(root / files.CONFIG)}\n"
        )
        raise
    print(f"wrote {_shown(lock)} (pinned {files.AGENT}'s tools; the stub server ran once)")
    _next_steps(root, files.AGENT)
    return 0


def _pin(config_dir: Path, agent: str) -> None:
    """Write the lock through `subagent lock`'s own code: one session of the example agent."""
    from launcher.check.lock_writer import lock_agents
    from launcher.cli.run import run_async
    from launcher.config.discovery import load_config

    root = config_dir.parent
    config = load_config(config_dir, cwd=root)

    async def main() -> object:
        return await lock_agents(config, [agent], settle=LOCK_SETTLE_S, workspace=root)

    run_async(main)


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it is below it."""
    try:
        return str(path.relative_to(Path.cwd().absolute()))
    except ValueError:
        return str(path)


def _next_steps(root: Path, agent: str) -> None:
    here = root == Path.cwd().absolute()
    where = "" if here else f"cd {_shown(root)}\n  "
    print(
        "\nNext (offline, no API key):\n"
        f"  {where}subagent check                  # the agent's expect: block and the check\n"
        f'  subagent spawn {agent} "Triage the open issues"\n'
        "  subagent log                    # the runs, stored in SUBAGENT_HOME"
    )
