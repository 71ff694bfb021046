"""The `subagent` command line. Thin: parse, run one async function, map errors to exit codes.

Nothing heavy is imported at module level: `--help`, `agents` and `servers` must stay
fast and must never start a process (only `tools`, `spawn` and `serve` may).
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

app = typer.Typer(
    name="subagent",
    help="Scoped LLM sub-agents whose tools come from MCP servers.",
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    add_completion=False,
    no_args_is_help=True,
    add_help_option=False,
)


def _show_help(ctx: typer.Context, value: bool) -> None:
    if value:
        typer.echo(ctx.get_help())
        raise typer.Exit()


@app.callback()
def _group(
    _help: Annotated[
        bool,
        typer.Option(
            "--help",
            is_eager=True,
            expose_value=False,
            callback=_show_help,
            help="Show this message and exit.",
        ),
    ] = False,
) -> None:
    # The group's own --help, as a plain bool flag defaulting to False: typer's default
    # one is None when absent, and coercing that None builds a pydantic adapter — which
    # made `subagent COMMAND --help` import pydantic (~2.5x `import typer`).
    pass


ConfigDir = Annotated[
    Path | None,
    typer.Option("--config-dir", envvar="SUBAGENT_CONFIG_DIR", help="Hermetic config directory."),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
ExtOpt = Annotated[
    list[str] | None, typer.Option("--ext", help="Add the selector ext:NAME (repeatable).")
]


def _check_settle(value: float) -> float:
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
LOCK_SETTLE_S = 1.0
"""`subagent lock` waits this long after the ready barrier, as `check` does by default."""
NoLock = Annotated[
    bool, typer.Option("--no-lock", help="Ignore subagent.lock.json (offer unpinned tools).")
]


def _load(config_dir: Path | None, *, session: bool = False, cwd: Path | None = None) -> Any:
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


def _exit(fn: Callable[[], int | None], *, fast: bool = False) -> None:
    """Run a command body through the one exit-code map; `fast` skips interpreter teardown."""
    from launcher.cli.run import finish, guarded

    code = guarded(fn)
    if fast:
        finish(code)
    raise typer.Exit(code)


@app.command()
def agents(config_dir: ConfigDir = None, json_out: JsonFlag = False) -> None:
    """List agents with their source file and resolved scope (starts no server)."""

    def body() -> int:
        from launcher.cli.render import print_agents
        from launcher.cli.views import agent_rows

        rows = agent_rows(_load(config_dir))
        if json_out:
            print(json.dumps(rows, indent=2))
        else:
            print_agents(rows)
        return 0

    _exit(body)


@app.command()
def servers(config_dir: ConfigDir = None, json_out: JsonFlag = False) -> None:
    """List configured MCP servers with their launch spec, secrets masked (starts no server)."""

    def body() -> int:
        from launcher.cli.render import print_servers
        from launcher.cli.views import server_rows

        rows = server_rows(_load(config_dir))
        if json_out:
            print(json.dumps(rows, indent=2))
        else:
            print_servers(rows)
        return 0

    _exit(body)


@app.command()
def tools(
    agent: Annotated[str, typer.Argument(help="Agent name.")] = "general-purpose",
    ext: ExtOpt = None,
    settle: Annotated[
        float,
        typer.Option(callback=_check_settle, help="Seconds to wait after the ready barrier."),
    ] = 0.0,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    workspace: Workspace = None,
    verbose: Verbose = False,
    no_lock: NoLock = False,
) -> None:
    """Start a session, wait for its servers, print the tool set, end the session."""

    def body() -> int:
        from launcher.cli.run import run_tools

        config = _load(config_dir, session=True)
        return run_tools(
            config,
            agent,
            ext=ext or [],
            settle=settle,
            json_out=json_out,
            workspace=workspace or Path.cwd(),
            verbose=verbose,
            no_lock=no_lock,
        )

    _exit(body, fast=True)


@app.command()
def spawn(
    args: Annotated[list[str], typer.Argument(help="[AGENT] PROMPT (PROMPT '-' reads stdin).")],
    agent_opt: Annotated[str | None, typer.Option("--agent", help="Agent name.")] = None,
    ext: ExtOpt = None,
    model: Annotated[
        str | None, typer.Option("--model", help="PROVIDER:MODEL or scripted:PATH.")
    ] = None,
    max_turns: Annotated[int | None, typer.Option("--max-turns", min=1)] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="Model API base URL.")] = None,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    workspace: Workspace = None,
    verbose: Verbose = False,
    no_lock: NoLock = False,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Continue stored session ID (or `last`) with PROMPT."),
    ] = None,
) -> None:
    """Run an agent on a prompt to its end."""

    def body() -> int:
        from launcher.cli.run import load_resume, run_spawn
        from launcher.errors import UsageError

        history = None
        if resume is not None:
            if len(args) != 1 or agent_opt is not None:
                raise UsageError("--resume takes only the follow-up PROMPT (the agent is stored)")
            history = load_resume(resume)
        if history is not None:
            agent, prompt = history.agent, args[0]
        elif len(args) == 1:
            agent, prompt = agent_opt or "general-purpose", args[0]
        elif len(args) == 2 and agent_opt is None:
            agent, prompt = args
        else:
            raise UsageError("expected [AGENT] PROMPT (or --agent NAME PROMPT)")
        config_from = config_dir
        if history is not None and config_from is None and history.config_dir:
            config_from = Path(history.config_dir)
        config = _load(config_from, session=True)  # may re-exec: before stdin is read
        if prompt == "-":
            prompt = sys.stdin.read()
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        if workspace is None and history is not None and history.workspace:
            workspace_dir = Path(history.workspace)
        else:
            workspace_dir = workspace or Path.cwd()
        return run_spawn(
            config,
            agent,
            prompt,
            ext=ext or [],
            model=model,
            max_turns=max_turns,
            base_url=base_url,
            json_out=json_out,
            workspace=workspace_dir,
            verbose=verbose,
            config_dir=config_from,
            no_lock=no_lock,
            history=history,
        )

    _exit(body, fast=True)


@app.command()
def serve(
    model: Annotated[
        str | None, typer.Option("--model", help="Default model for sub-agents.")
    ] = None,
    max_concurrent: Annotated[
        int, typer.Option("--max-concurrent", min=1, help="Sub-agents running at once.")
    ] = 4,
    config_dir: ConfigDir = None,
    workspace: Workspace = None,
    no_lock: NoLock = False,
) -> None:
    """Serve MCP on stdio: tools that spawn, query, steer and stop sub-agents."""

    def body() -> int:
        import anyio

        from launcher.backend.server import serve as run_server
        from launcher.state import state_home

        # A broken config is reported now, not at the first spawn; loaded as the workers
        # will load it (from the workspace), so the same `${VAR}`s are hidden.
        _load(config_dir, session=True, cwd=(workspace or Path.cwd()).resolve())
        anyio.run(
            lambda: run_server(
                config_dir=config_dir.resolve() if config_dir else None,
                workspace=(workspace or Path.cwd()).resolve(),
                state_home=state_home(),
                model=model,
                max_concurrent=max_concurrent,
                no_lock=no_lock,
            )
        )
        return 0

    _exit(body, fast=True)


@app.command()
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
    workspace: Workspace = None,
) -> None:
    """Run one sub-agent per line of a tasks file; one result line per task as it ends."""

    def body() -> int:
        from launcher.cli.run import run_batch_command
        from launcher.engines.base import EngineOptions

        _load(config_dir, session=True)  # a broken config is reported before any task runs
        options = EngineOptions(
            config_dir=str(config_dir.resolve()) if config_dir else None,
            workspace=str((workspace or Path.cwd()).resolve()),
            model=model,
            address=address,
            num_cpus=num_cpus,
            max_retries=max_retries,
        )
        return run_batch_command(
            tasks,
            out=out,
            jobs=jobs,
            engine=engine,
            options=options,
            retry_failed=retry_failed,
        )

    _exit(body, fast=True)


@app.command()
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
            callback=_check_settle, help="Seconds to wait after the ready barrier before pinning."
        ),
    ] = LOCK_SETTLE_S,
    config_dir: ConfigDir = None,
    workspace: Workspace = None,
) -> None:
    """Pin each agent's server tools in subagent.lock.json and print what changed."""

    def body() -> int:
        from launcher.cli.run import run_lock

        config = _load(config_dir, session=True)
        return run_lock(config, agents or [], settle=settle, workspace=workspace or Path.cwd())

    _exit(body, fast=True)


LOG_DEFAULT_N = 20
"""`subagent log` lists this many sessions unless `-n` says otherwise."""


@app.command()
def log(
    ref: Annotated[
        str | None, typer.Argument(help="Session ID (or `last`) to show; `prune` to delete old.")
    ] = None,
    n: Annotated[int, typer.Option("-n", min=1, help="How many sessions to list.")] = LOG_DEFAULT_N,
    query: Annotated[
        str | None, typer.Option("-q", "--query", help="Full-text search of what was said.")
    ] = None,
    usage: Annotated[
        bool, typer.Option("--usage", help="Token and time totals per model.")
    ] = False,
    older_than: Annotated[
        str | None, typer.Option("--older-than", help="With `prune`: an age such as 30d, 12h.")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Stored sessions: list (newest first), show one, search (-q), totals (--usage), prune."""

    def body() -> int:
        from launcher.cli.logcmd import run_log

        return run_log(ref, n=n, query=query, usage=usage, older_than=older_than, json_out=json_out)

    _exit(body)


@app.command()
def check(
    targets: Annotated[
        list[str] | None,
        typer.Argument(help="AGENT or CHECKFILE (default: every expect: block and check file)."),
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML here.")] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, help="Sessions running at once.")] = 2,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    workspace: Workspace = None,
) -> None:
    """Run agents' expect: blocks, check files and lock drift; exit 1 if any check fails."""

    def body() -> int:
        from launcher.cli.run import run_check

        config = _load(config_dir, session=True)
        return run_check(
            config,
            targets or [],
            jobs=jobs,
            junit=junit,
            json_out=json_out,
            workspace=workspace or Path.cwd(),
        )

    _exit(body, fast=True)


def main() -> None:
    """Console-script entry point."""
    app()
