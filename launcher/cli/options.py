"""What the commands share: option types, loading the config, the one exit path."""

from __future__ import annotations

import inspect
import math
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from launcher import settings
from launcher.cli import spec
from launcher.cli.loading import load

__all__ = ["load"]


def annotated(opt: spec.Opt, **more: Any) -> Any:
    """typer's parameter type for `opt`, made from its one declaration (cli/spec.py)."""
    base: Any = spec.KINDS[opt.kind]
    hint: Any = list[base] | None if opt.repeat else base
    if not opt.repeat and opt.default is None:
        hint = base | None
    extra: dict[str, Any] = {"min": opt.lo, "max": opt.hi, "metavar": opt.metavar}
    if opt.is_dir:
        extra.update(exists=True, file_okay=False)
    if opt.envvar is not None:
        extra["envvar"] = opt.envvar.name
    extra = {k: v for k, v in extra.items() if v is not None} | more
    return Annotated[hint, typer.Option(*opt.flags, help=opt.help, **extra)]


def with_parameters(fn: Callable[..., None], params: list[tuple[str, Any, Any]]) -> None:
    """Give `fn(**keywords)` the typer signature `params` (name, annotated type, default):
    a command whose options come from a table (cli/spec.py) rather than a written `def`."""
    fn.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=d, annotation=a)
            for name, a, d in params
        ]
    )
    fn.__annotations__ = {name: a for name, a, _ in params}


def parameters(opts: tuple[spec.Opt, ...]) -> list[tuple[str, Any, Any]]:
    """`with_parameters`' entries for options of the table, in their order."""
    return [(o.dest, annotated(o), None if o.repeat else o.default) for o in opts]


if TYPE_CHECKING:  # what mypy sees; typer sees the declarations of cli/spec.py
    ConfigDir = Path | None
    Workspace = Path | None
    Project = Path | None
    JsonFlag = bool
    NoLock = bool
else:
    ConfigDir = annotated(spec.CONFIG_DIR)
    Workspace = annotated(spec.WORKSPACE)
    Project = annotated(spec.PROJECT)
    JsonFlag = annotated(spec.JSON)
    NoLock = annotated(spec.NO_LOCK)
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
ExtOpt = Annotated[
    list[str] | None, typer.Option("--ext", help="Add the selector ext:NAME (repeatable).")
]


def check_settle(value: float) -> float:
    """Typer callback: a settle time must be a finite number of seconds >= 0."""
    if not math.isfinite(value) or value < 0:
        raise typer.BadParameter(f"expected a number of seconds >= 0, got {value}")
    return value


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
