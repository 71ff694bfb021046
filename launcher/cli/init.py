"""`subagent init [DIR] [--ci]`: a `.subagent/` config that works at once, offline.

It writes an example agent scoped to the shipped stub GitHub server, its `scripted:`
model, a check file and (with `--ci`) a GitHub Actions workflow, then pins the agent's
tools in `subagent.lock.json` — the one step that starts a server: the stub, once, for
about a second. Nothing is ever overwritten: an existing file is bad usage (exit 2).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from launcher.cli import init_files as files
from launcher.cli.options import exit_with
from launcher.errors import UsageError

CONFIG = ".subagent"
WORKFLOW = Path(".github") / "workflows" / "agents.yml"
LOCK_SETTLE_S = 0.0
"""The stub server lists every tool at connect: nothing arrives later to wait for."""
REPOSITORY = "https://github.com/your-org/subagent"
"""Fallback for the workflow's install line when the package metadata names no repository."""


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


@dataclass(frozen=True)
class Planned:
    """One file init writes: its path and its text."""

    path: Path
    text: str


def plan(root: Path, *, ci: bool, python: str) -> list[Planned]:
    """Every file `init` would write under `root` (the lock comes after, from a session)."""
    config = root / CONFIG
    script = config / "scripts" / "triage.yaml"
    out = [
        Planned(config / "mcp.json", files.mcp_json(python)),
        # Relative to the agent file: the config runs from any directory, and in CI.
        Planned(config / "agents" / f"{files.AGENT}.md", files.agent_md("../scripts/triage.yaml")),
        Planned(script, files.SCRIPT_YAML),
        Planned(config / "checks" / "triage-run.yaml", files.CHECK_YAML),
    ]
    if ci:
        out.append(Planned(root / WORKFLOW, files.workflow_yaml(install_requirement())))
    return out


def install_requirement() -> str:
    """The pip requirement for subagent: a git URL from the package's own metadata."""
    from importlib.metadata import PackageNotFoundError, metadata

    url = REPOSITORY
    try:
        for entry in metadata("subagent").get_all("Project-URL") or []:
            label, _, value = entry.partition(",")
            if label.strip().lower() == "repository":
                url = value.strip()
    except PackageNotFoundError:
        pass
    return f"subagent @ git+{url}"


def run_init(directory: Path | None, *, ci: bool) -> int:
    """Write the files, pin the example agent, say what was written and what to run next."""
    root = (directory or Path.cwd()).absolute()
    if root.exists() and not root.is_dir():
        raise UsageError(f"{root} exists and is not a directory")
    planned = plan(root, ci=ci, python=sys.executable)
    lock = root / CONFIG / "subagent.lock.json"
    for path in [p.path for p in planned] + [lock]:
        if path.exists() or path.is_symlink():
            raise UsageError(f"{path} already exists; init never overwrites (remove it first)")
    for item in planned:
        item.path.parent.mkdir(parents=True, exist_ok=True)
        with item.path.open("x", encoding="utf-8") as handle:
            handle.write(item.text)
        print(f"wrote {_shown(item.path)}")
    try:
        _pin(root)
    except Exception:
        sys.stderr.write(
            "subagent: the files are written; pin their tools once the server starts: "
            f"subagent lock --config-dir {_shown(root / CONFIG)}\n"
        )
        raise
    print(f"wrote {_shown(lock)} (pinned {files.AGENT}'s tools; the stub server ran once)")
    _next_steps(root)
    return 0


def _pin(root: Path) -> None:
    """Write the lock through `subagent lock`'s own code: one session of the example agent."""
    from launcher.check.lock_writer import lock_agents
    from launcher.cli.run import run_async
    from launcher.config.discovery import load_config

    config = load_config(root / CONFIG, cwd=root)

    async def main() -> object:
        return await lock_agents(config, [files.AGENT], settle=LOCK_SETTLE_S, workspace=root)

    run_async(main)


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it is below it."""
    try:
        return str(path.relative_to(Path.cwd().absolute()))
    except ValueError:
        return str(path)


def _next_steps(root: Path) -> None:
    here = root == Path.cwd().absolute()
    where = "" if here else f"cd {_shown(root)}\n  "
    print(
        "\nNext (offline, no API key):\n"
        f"  {where}subagent check                  # the agent's expect: block and the check\n"
        f'  subagent spawn {files.AGENT} "Triage the open issues"\n'
        "  subagent log                    # the runs, stored in SUBAGENT_HOME"
    )
