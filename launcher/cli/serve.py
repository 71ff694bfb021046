"""`subagent serve`: the MCP backend on stdio (or HTTP), whose tools spawn and steer sub-agents.

A host waits for serve's first answer, so the console script parses plain arguments with
`parse_fast` and opens the early face (backend/early.py) before typer loads; the options it
reads and typer's command are made from one table, cli/spec.py's SERVE. Stdlib only at
import: typer comes inside `command()`. `--http` goes through typer (no host waits on a
pipe); starlette and uvicorn load only then.
"""

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from launcher.cli.spec import (
    MAX_CONCURRENT_DEFAULT,
    SERVE,
    TASK_TTL_DEFAULT_S,
    TASK_TTL_MAX_S,
    TASK_TTL_MIN_S,
    parse,
)

if TYPE_CHECKING:
    from launcher.backend.callers import HttpOptions

__all__ = ["MAX_CONCURRENT_DEFAULT", "TASK_TTL_DEFAULT_S", "TASK_TTL_MAX_S", "TASK_TTL_MIN_S"]


def parse_fast(args: list[str]) -> dict[str, Any] | None:
    """`serve`'s arguments as run_serve's keywords, or None for anything unusual (typer
    then parses, and gives its own error messages)."""
    raw = parse(SERVE, args)
    if raw is None:
        return None
    from launcher.cli.serve_args import project_conflict

    if project_conflict(raw["project"], raw["config_dir"], raw["workspace"]):
        return None  # typer's path says why
    return keywords(
        raw, raw["config_dir"], raw["workspace"] if raw["project"] is None else raw["project"]
    )


def keywords(
    raw: dict[str, Any], config_dir: Path | None, workspace: Path | None
) -> dict[str, Any]:
    """run_serve's keywords from the options of cli/spec.py's SERVE, either way parsed."""
    return {
        "model": raw["model"],
        "max_concurrent": raw["max_concurrent"],
        "spares": raw["spares"],
        "task_ttl": raw["task_ttl"],
        "config_dir": config_dir,
        "workspace": workspace,
        "no_lock": raw["no_lock"],
        "scripted_dirs": list(raw["scripted_dir"] or []),
    }


def command() -> Callable[..., None]:
    """The typer command `serve`, built on demand so that the fast path never imports typer;
    its options are cli/spec.py's SERVE (what the fast path reads) and the typer-only ones."""
    from typing import Annotated

    import typer

    from launcher.cli.options import (
        AuthIssuer,
        HttpListen,
        MaxPerCaller,
        PublicUrl,
        SandboxOpt,
        ServersFrom,
        TokenFile,
        exit_with,
        parameters,
        with_parameters,
    )

    def serve(**given: Any) -> None:
        """Serve MCP on stdio (or --http): tools that spawn, query, steer and stop sub-agents."""
        from launcher.backend.callers import HttpOptions

        web = HttpOptions(
            given["http"],
            given["token_file"],
            given["auth_issuer"],
            given["public_url"],
            given["max_per_caller"],
        )
        engine, address = given["engine"], given["address"]
        # Only what was given, so a plain command line's keywords stay parse_fast's.
        more: dict[str, Any] = {"http": web} if web != HttpOptions() else {}
        more |= {"engine": engine, "address": address} if engine != "local" or address else {}

        def body() -> int:
            from launcher.cli.serve_args import resolve_project

            config, root = resolve_project(
                given["project"], given["config_dir"], given["workspace"]
            )
            return run_serve(**keywords(given, config, root), **more)

        exit_with(body, fast=True)

    fast = parameters(SERVE)
    after_config = [name for name, _, _ in fast].index("config_dir") + 1  # help's order
    typer_only: list[tuple[str, Any, Any]] = [
        ("sandbox", SandboxOpt, None),
        ("http", HttpListen, None),
        ("token_file", TokenFile, None),
        ("auth_issuer", AuthIssuer, None),
        ("public_url", PublicUrl, None),
        ("max_per_caller", MaxPerCaller, None),
        (
            "engine",
            Annotated[str, typer.Option("--engine", help="local (workers) or ray.")],
            "local",
        ),
        (
            "address",
            Annotated[
                str | None, typer.Option("--address", help="With --engine ray: its cluster.")
            ],
            None,
        ),
    ]
    servers_from = ("servers_from", ServersFrom, None)
    with_parameters(serve, [*fast[:after_config], servers_from, *fast[after_config:], *typer_only])
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
    spares: int = 1,
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
    from launcher.procs.pyenv import drop_written_paths

    drop_written_paths(root)  # the model writes there: never on serve's import path
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

    from launcher.backend.drain_signal import DrainSignal
    from launcher.backend.spare import SparePool, default_max_warming
    from launcher.state import state_home

    home = state_home()
    config_path = config_dir.resolve() if config_dir else None

    dirs = tuple(d.resolve() for d in scripted_dirs)

    async def main() -> None:
        # First calls run before the SDK (and its drain) loads: a signal meanwhile is held
        # here and drains them once the drain is up, never killing serve mid-run.
        signalled = DrainSignal()
        async with anyio.create_task_group() as tg:
            await tg.start(signalled.watch)
            # The first spare imports on the other core while the SDK loads here (~1.5 s);
            # more (`--spares`) start one a core, so none slows the first.
            pool = None
            if driver is None:
                count = min(spares, max_concurrent)  # a spare beyond that never runs sooner
                pool = SparePool(workspace=root, log_dir=home / "serve", count=count,
                                 max_warming=default_max_warming() if count > 1 else None,
                                 gate_start=count > 1)  # fmt: skip
                await pool.start_now()
            manager = None
            if calls is not None and pool is not None:
                manager = calls.open_pool(tg, config, config_path, root, home, dirs, spares=pool,
                                          model=model, max_concurrent=max_concurrent,
                                          no_lock=no_lock)  # fmt: skip
                with anyio.CancelScope() as head_start:
                    tg.start_soon(_cancel_on, signalled.event, head_start)
                    await calls.head_start()  # a signal cuts it short: drain at once
                    head_start.cancel()
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
                spares=pool,
                config=config,
                manager=manager,
                drain_signal=signalled,
            )
            if listener is None:
                await runtime.serve_stdio(opts, face)
            else:
                from launcher.backend.http import serve_http_at

                await serve_http_at(opts, listener)
            tg.cancel_scope.cancel()  # the first calls' runs, if any, end with serve

    anyio.run(main)
    return 0


async def _cancel_on(event: Any, scope: Any) -> None:
    """Cancel `scope` once `event` is set."""
    await event.wait()
    scope.cancel()
