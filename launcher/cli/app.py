"""The `subagent` command line. Thin: parse, run one async function, map errors to exit codes.

Nothing heavy is imported at module level: `--help`, `agents` and `servers` must stay
fast and must never start a process (only `tools`, `spawn` and `serve` may).
"""

from __future__ import annotations

import json
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
)

ConfigDir = Annotated[
    Path | None,
    typer.Option("--config-dir", envvar="SUBAGENT_CONFIG_DIR", help="Hermetic config directory."),
]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
ExtOpt = Annotated[
    list[str] | None, typer.Option("--ext", help="Add the selector ext:NAME (repeatable).")
]
Workspace = Annotated[
    Path | None,
    typer.Option("--workspace", help="Directory the file tools may touch (default: cwd)."),
]
Verbose = Annotated[bool, typer.Option("--verbose", "-v", help="Show server logs and paths.")]


def _fail(message: str, code: int) -> None:
    sys.stderr.write(f"subagent: {message}\n")
    raise typer.Exit(code)


def _guarded(fn: Callable[[], int | None]) -> int:
    """The one place errors become exit codes: config/usage 2, run failures 1."""
    from launcher.errors import SubagentError

    try:
        return fn() or 0
    except SubagentError as exc:
        _fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    return 0


def _load(config_dir: Path | None, quiet: bool = False) -> Any:
    from launcher.config.discovery import load_config

    config = load_config(config_dir, cwd=Path.cwd())
    if not quiet:
        for warning in config.warnings:
            sys.stderr.write(f"subagent: warning: {warning}\n")
    return config


def _finish(code: int) -> None:
    """Leave without the interpreter's slow teardown of the SDK (~0.4 s); output flushed first."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


@app.command()
def agents(config_dir: ConfigDir = None, json_out: JsonFlag = False) -> None:
    """List agents with their source file and resolved scope (starts no server)."""

    def body() -> int:
        from launcher.cli.views import agent_rows

        config = _load(config_dir)
        rows = agent_rows(config)
        if json_out:
            print(json.dumps(rows, indent=2))
        else:
            for row in rows:
                print(f"{row['name']}  ({row['source'] or 'built-in'})")
                if row["description"]:
                    print(f"    {row['description']}")
                print(f"    built-ins: {', '.join(row['builtins']) or 'none'}")
                print(f"    servers: {', '.join(row['servers']) or 'none'}")
                if row.get("error"):
                    print(f"    error: {row['error']}")
        return 0

    _guarded(body)


@app.command()
def servers(config_dir: ConfigDir = None, json_out: JsonFlag = False) -> None:
    """List configured MCP servers with their launch spec, secrets masked (starts no server)."""

    def body() -> int:
        from launcher.config.servers import masked_launch_spec

        config = _load(config_dir)
        specs = {name: masked_launch_spec(spec) for name, spec in config.servers.items()}
        if json_out:
            print(json.dumps(specs, indent=2))
        else:
            for name, spec in specs.items():
                if spec.get("type") == "http":
                    print(f"{name}  http  {spec.get('url')}")
                else:
                    argv = " ".join(
                        [str(spec.get("command"))] + [str(a) for a in spec.get("args", [])]
                    )
                    print(f"{name}  stdio  {argv}")
        return 0

    _guarded(body)


@app.command()
def tools(
    agent: Annotated[str, typer.Argument(help="Agent name.")] = "general-purpose",
    ext: ExtOpt = None,
    settle: Annotated[float, typer.Option(help="Seconds to wait after the ready barrier.")] = 0.0,
    json_out: JsonFlag = False,
    config_dir: ConfigDir = None,
    workspace: Workspace = None,
    verbose: Verbose = False,
) -> None:
    """Start a session, wait for its servers, print the tool set, end the session."""

    def body() -> int:
        from launcher.cli.run import run_tools

        config = _load(config_dir)
        return run_tools(
            config,
            agent,
            ext=ext or [],
            settle=settle,
            json_out=json_out,
            workspace=workspace or Path.cwd(),
            verbose=verbose,
        )

    _finish(_guarded(body))


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
) -> None:
    """Run an agent on a prompt to its end."""

    def body() -> int:
        from launcher.cli.run import run_spawn
        from launcher.errors import UsageError

        if len(args) == 1:
            agent, prompt = agent_opt or "general-purpose", args[0]
        elif len(args) == 2 and agent_opt is None:
            agent, prompt = args
        else:
            raise UsageError("expected [AGENT] PROMPT (or --agent NAME PROMPT)")
        if prompt == "-":
            prompt = sys.stdin.read()
        if not prompt.strip():
            raise UsageError("the prompt is empty")
        config = _load(config_dir)
        return run_spawn(
            config,
            agent,
            prompt,
            ext=ext or [],
            model=model,
            max_turns=max_turns,
            base_url=base_url,
            json_out=json_out,
            workspace=workspace or Path.cwd(),
            verbose=verbose,
        )

    _finish(_guarded(body))


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
) -> None:
    """Serve MCP on stdio: tools that spawn, query, steer and stop sub-agents."""

    def body() -> int:
        import anyio

        from launcher.backend.server import serve as run_server
        from launcher.state import state_home

        _load(config_dir)  # a broken config is reported now, not at the first spawn
        anyio.run(
            lambda: run_server(
                config_dir=config_dir.resolve() if config_dir else None,
                workspace=(workspace or Path.cwd()).resolve(),
                state_home=state_home(),
                model=model,
                max_concurrent=max_concurrent,
            )
        )
        return 0

    _finish(_guarded(body))


def main() -> None:
    """Console-script entry point."""
    app()
