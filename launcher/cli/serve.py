"""`subagent serve`: the MCP backend on stdio (or HTTP), whose tools spawn and steer sub-agents.

A host waits for serve's first answer, so the console script parses plain arguments with
`parse_fast` (held equal to typer's by tests/test_cli_serve_fast.py) and opens the early
face (backend/early.py) before typer loads. Stdlib only at import: typer comes inside
`command()`, and, as in cli/log.py, no postponed annotations (typer reads them there).
`--http` goes through typer (no host waits on a pipe); starlette and uvicorn load only then.
"""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from launcher.backend.callers import HttpOptions

MAX_CONCURRENT_DEFAULT = 4
TASK_TTL_DEFAULT_S = 3600.0
TASK_TTL_MIN_S = 0.001
TASK_TTL_MAX_S = 86400.0
_VALUED = {
    "--model": "model",
    "--max-concurrent": "max_concurrent",
    "--task-ttl": "task_ttl",
    "--config-dir": "config_dir",
    "--workspace": "workspace",
    "--scripted-dir": "scripted_dirs",
    "--project": "project",
}
_FLAGS = {"--no-lock": "no_lock"}


def parse_fast(args: list[str]) -> dict[str, Any] | None:
    """`serve`'s arguments as run_serve's keywords, or None for anything unusual (typer
    then parses, and gives its own error messages)."""
    out: dict[str, Any] = {
        "model": None,
        "max_concurrent": str(MAX_CONCURRENT_DEFAULT),
        "task_ttl": str(TASK_TTL_DEFAULT_S),
        "config_dir": None,
        "workspace": None,
        "no_lock": False,
        "scripted_dirs": [],
        "project": None,
    }
    from launcher.cli.serve_args import typed

    rest = list(args)
    while rest:
        name, eq, value = rest.pop(0).partition("=")
        if name in _FLAGS and not eq:
            out[_FLAGS[name]] = True
        elif name in _VALUED:
            if not eq:
                if not rest:
                    return None
                value = rest.pop(0)
            if name == "--scripted-dir":
                out["scripted_dirs"].append(value)
            else:
                out[_VALUED[name]] = value
        else:
            return None  # an unknown option, a positional, `--`: typer's message
    return typed(out, (TASK_TTL_MIN_S, TASK_TTL_MAX_S))


def command() -> Callable[..., None]:
    """The typer command `serve`, built on demand so that the fast path never imports typer."""
    from typing import Annotated

    import typer

    from launcher.cli.options import (
        AuthIssuer,
        ConfigDir,
        HttpListen,
        MaxPerCaller,
        NoLock,
        Project,
        PublicUrl,
        SandboxOpt,
        ServersFrom,
        TokenFile,
        Workspace,
        exit_with,
    )

    def serve(
        model: Annotated[
            str | None, typer.Option("--model", help="Default model for sub-agents.")
        ] = None,
        max_concurrent: Annotated[
            int, typer.Option("--max-concurrent", min=1, help="Sub-agents running at once.")
        ] = MAX_CONCURRENT_DEFAULT,
        task_ttl: Annotated[
            float,
            typer.Option(
                "--task-ttl",
                min=TASK_TTL_MIN_S,
                max=TASK_TTL_MAX_S,
                help="Seconds an ended MCP task's result is kept when the host names no ttl.",
            ),
        ] = TASK_TTL_DEFAULT_S,
        config_dir: ConfigDir = None,
        servers_from: ServersFrom = None,
        workspace: Workspace = None,
        project: Project = None,
        no_lock: NoLock = False,
        scripted_dir: Annotated[
            list[Path] | None,
            typer.Option(
                "--scripted-dir",
                metavar="DIR",
                exists=True,
                file_okay=False,
                help="Also accept a host's scripted:PATH model from DIR (repeatable).",
            ),
        ] = None,
        sandbox: SandboxOpt = None,
        http: HttpListen = None,
        token_file: TokenFile = None,
        auth_issuer: AuthIssuer = None,
        public_url: PublicUrl = None,
        max_per_caller: MaxPerCaller = None,
        engine: Annotated[str, typer.Option("--engine", help="local (workers) or ray.")] = "local",
        address: Annotated[
            str | None, typer.Option("--address", help="With --engine ray: its cluster.")
        ] = None,
    ) -> None:
        """Serve MCP on stdio (or --http): tools that spawn, query, steer and stop sub-agents."""
        from launcher.backend.callers import HttpOptions

        web = HttpOptions(http, token_file, auth_issuer, public_url, max_per_caller)
        # Only what was given, so a plain command line's keywords stay parse_fast's.
        more: dict[str, Any] = {"http": web} if web != HttpOptions() else {}
        more |= {"engine": engine, "address": address} if engine != "local" or address else {}

        def body() -> int:
            from launcher.cli.serve_args import resolve_project

            config, root = resolve_project(project, config_dir, workspace)
            return run_serve(
                model=model,
                max_concurrent=max_concurrent,
                task_ttl=task_ttl,
                config_dir=config,
                workspace=root,
                no_lock=no_lock,
                scripted_dirs=list(scripted_dir or []),
                **more,
            )

        exit_with(body, fast=True)

    return serve


def run_serve(
    *,
    model: str | None,
    max_concurrent: int,
    task_ttl: float,
    config_dir: Path | None,
    workspace: Path | None,
    no_lock: bool,
    scripted_dirs: list[Path],
    http: "HttpOptions | None" = None,
    engine: str = "local",
    address: str | None = None,
) -> int:
    """Load the config, then serve on stdio (early face, then the SDK) or HTTP till a drain."""
    from launcher.backend.callers import HttpOptions, check_http, hand_down
    from launcher.backend.catalog import agents_of
    from launcher.cli.loading import load

    driver = None
    if engine != "local" or address:
        from launcher.engines.ray_serve import driver_for

        driver = driver_for(engine, address)
    root = (workspace or Path.cwd()).resolve()
    listener = check_http(http or HttpOptions())  # before anything loads
    # A broken config fails now; any re-exec hiding `${VAR}`s comes before input is read.
    config = load(config_dir, session=True, cwd=root)
    hand_down(listener)  # after any re-exec, before the first worker starts
    from launcher.telemetry import start

    tracing = start()  # before the loop: the SDK's server spans export too, under TRACEPARENT
    face = calls = None
    if listener is None:
        from launcher.backend.early import EarlyAnswers, EarlyFace

        face = EarlyFace.on_stdio(EarlyAnswers(agents_of(config)))
        if driver is None and not tracing.on:  # a plain spawn before the SDK: run at once
            from launcher.backend.first_call import FirstCalls

            calls = FirstCalls(face.write)
            face.answers.take, face.note = calls.offer, calls.note
        face.start()

    from importlib import import_module

    import anyio

    from launcher.backend.spare import SparePool
    from launcher.state import state_home

    home = state_home()
    config_path = config_dir.resolve() if config_dir else None

    dirs = tuple(d.resolve() for d in scripted_dirs)

    async def main() -> None:
        # The first spare imports on the other core while the SDK loads here (~1.5 s).
        spares = SparePool(workspace=root, log_dir=home / "serve") if driver is None else None
        if spares is not None:
            await spares.start_now()
        async with anyio.create_task_group() as tg:
            manager = None
            if calls is not None and spares is not None:
                manager = calls.open_pool(tg, config, config_path, root, home, dirs, spares=spares,
                                          model=model, max_concurrent=max_concurrent,
                                          no_lock=no_lock)  # fmt: skip
                await calls.head_start()
            # On a thread: the loop goes on running (and answering) the first calls meanwhile.
            runtime = await anyio.to_thread.run_sync(import_module, "launcher.backend.runtime")
            opts = runtime.ServeOptions(
                config_dir=config_path,
                workspace=root,
                state_home=home,
                model=model,
                max_concurrent=max_concurrent,
                no_lock=no_lock,
                task_ttl_ms=round(task_ttl * 1000),
                scripted_dirs=dirs,
                driver=driver,
                spares=spares,
                config=config,
                manager=manager,
            )
            if listener is None:
                await runtime.serve_stdio(opts, face)
            else:
                from launcher.backend.http import serve_http_at

                await serve_http_at(opts, listener)
            tg.cancel_scope.cancel()  # the first calls' runs, if any, end with serve

    anyio.run(main)
    return 0
