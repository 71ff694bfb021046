"""What the commands share: option types, loading the config, the one exit path."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from launcher import settings
from launcher.cli.loading import load

__all__ = ["load"]

ConfigDir = Annotated[
    Path | None,
    typer.Option(
        "--config-dir", envvar=settings.CONFIG_DIR.name, help="Hermetic config directory."
    ),
]
SERVERS_FROM_ENV = settings.SERVERS_FROM.name  # config/hosts.py reads it


def _export_hosts(value: str | None) -> str | None:
    """Typer callback: discovery (here, and in serve's and batch's workers) reads the env."""
    if value:
        os.environ[SERVERS_FROM_ENV] = value
    return value


ServersFrom = Annotated[
    str | None,
    typer.Option(
        "--servers-from",
        envvar=SERVERS_FROM_ENV,
        callback=_export_hosts,
        help="Also read these hosts' user-level MCP servers: claude,codex,gemini,opencode,...",
    ),
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
Project = Annotated[
    Path | None,
    typer.Option(
        "--project",
        exists=True,
        file_okay=False,
        help="Serve DIR's agents of every dialect, with DIR the workspace.",
    ),
]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Show server logs and paths.")]
MaxTokens = Annotated[
    int | None,
    typer.Option("--max-tokens", min=1, help="Tokens billed over the run, sub-agents included."),
]
MaxCost = Annotated[
    float | None,
    typer.Option("--max-cost", min=0.0, help="USD over the run, sub-agents included."),
]
Timeout = Annotated[
    float | None,
    typer.Option("--timeout", min=0.001, help="Wall-clock seconds from the session's start."),
]
IdleTimeout = Annotated[
    float | None,
    typer.Option("--idle-timeout", min=0.001, help="Seconds with no progress (default 600)."),
]


def limits_json(
    max_tokens: int | None, max_cost: float | None, timeout: float | None, idle: float | None
) -> dict[str, float | int | None]:
    """The limit options as budget.py's field names (JSON: a job, the budget's Limits)."""
    return {
        "max_tokens": max_tokens,
        "max_cost_usd": max_cost,
        "timeout": timeout,
        "idle_timeout": idle,
    }


def set_sandbox(value: str | None) -> str | None:
    """Typer callback: `--sandbox MODE` applies to every session of the run and its workers
    (through `SUBAGENT_SANDBOX`, which the option also reads)."""
    if value is None:
        return None
    mode = value.strip().lower()
    if mode not in ("on", "off", "required"):
        raise typer.BadParameter(f"expected on, off or required, got {value!r}")
    os.environ[settings.SANDBOX.key()] = mode
    return mode


SandboxOpt = Annotated[
    str | None,
    typer.Option(
        "--sandbox",
        envvar=settings.SANDBOX.name,
        callback=set_sandbox,
        help="Confine the model's shell: on, off or required (default: the agent's).",
    ),
]
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


HttpListen = Annotated[
    str | None,
    typer.Option(
        "--http",
        metavar="[HOST:]PORT",
        help="Serve streamable HTTP at http://HOST:PORT/mcp, not stdio (HOST: 127.0.0.1).",
    ),
]
TokenFile = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        metavar="FILE",
        help="With --http: bearer tokens, a 'CALLER TOKEN' line each (mode 600).",
    ),
]
MaxPerCaller = Annotated[
    int | None,
    typer.Option(
        "--max-per-caller",
        min=1,
        metavar="N",
        help="With --http: sub-agents one caller may run at once "
        "(default: --max-concurrent less one when several callers may call).",
    ),
]
AuthIssuer = Annotated[
    str | None,
    typer.Option(
        "--auth-issuer",
        metavar="URL",
        help="With --http: accept JWTs from this OAuth issuer (the caller is 'sub').",
    ),
]
PublicUrl = Annotated[
    str | None,
    typer.Option(
        "--public-url",
        metavar="URL",
        help="With --auth-issuer: the URL hosts reach serve at (the JWTs' audience).",
    ),
]


def exit_with(fn: Callable[[], int | None], *, fast: bool = False) -> None:
    """Run a command body through the one exit-code map; `fast` skips interpreter teardown."""
    from launcher.cli.run import finish, guarded

    code = guarded(fn)
    if fast:
        finish(code)
    raise typer.Exit(code)
