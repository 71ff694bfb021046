"""One serve process: its sub-agent pool and MCP face, served on stdio (here) or HTTP
(http.py), and its orderly end.

SIGTERM (or SIGINT) drains: no new sub-agent from then on, every running or queued one
is stopped (recorded `stopped`, its worker and servers gone), the face stops serving,
and the process exits 0.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server

from launcher.backend.drain_signal import DrainSignal
from launcher.backend.early import EarlyFace
from launcher.backend.handover import early_streams
from launcher.backend.pool import Driver, SubagentManager
from launcher.backend.server import SubagentServer
from launcher.backend.spare import SPARE_COUNT, SparePool
from launcher.backend.tasks.store import TaskStore
from launcher.backend.tasks.wire import install_tasks
from launcher.config.types import Config


@dataclass
class ServeOptions:
    """What the command line says about one serve, whatever its face."""

    config_dir: Path | None
    workspace: Path
    state_home: Path
    model: str | None
    max_concurrent: int
    no_lock: bool = False
    task_ttl_ms: int | None = None
    scripted_dirs: tuple[Path, ...] = ()
    driver: Driver | None = None
    """Where sub-agents run when not in local workers (`--engine ray`)."""
    spares: SparePool | None = None
    """The spare pool, its first spares started before the SDK loaded (cli/serve.py)."""
    max_per_caller: int | None = None
    """Sub-agents one caller may run at once (None: as many as `max_concurrent`)."""
    config: Config | None = None
    """The config loaded at serve's start, every job's (None: loaded once, here)."""
    manager: SubagentManager | None = None
    """The pool, when it was made before the SDK loaded (it ran the first calls the early
    face took: first_call.py); its task group is its maker's."""
    drain_signal: DrainSignal | None = None
    """The drain signal, watched since before the SDK loaded (None: watched from here)."""


@dataclass
class Runtime:
    """A running serve: the face's server and options, the pool, and the drained flag."""

    app: SubagentServer
    options: InitializationOptions
    manager: SubagentManager
    drained: anyio.Event
    """Set once a signal's drain has stopped every sub-agent: the face stops serving."""


@asynccontextmanager
async def running(opts: ServeOptions) -> AsyncIterator[Runtime]:
    """The pool and the MCP face, with the drain installed; every worker ends on the way out."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    try:
        async with anyio.create_task_group() as tg:
            manager = opts.manager or SubagentManager(
                tg,
                config_dir=opts.config_dir,
                workspace=opts.workspace,
                state_home=opts.state_home,
                default_model=opts.model,
                max_concurrent=opts.max_concurrent,
                max_per_caller=opts.max_per_caller,
                no_lock=opts.no_lock,
                spare_workers=0 if opts.driver is not None else SPARE_COUNT,
                driver=opts.driver,
                spares=opts.spares,
            )
            app = SubagentServer(
                manager, opts.config_dir, opts.workspace, opts.scripted_dirs, opts.config
            )
            options = install_tasks(
                app.server,
                TaskStore(manager, tg, default_ttl_ms=opts.task_ttl_ms),
                app.start_spawn,
                app.server.create_initialization_options(),
            )
            runtime = Runtime(app, options, manager, anyio.Event())
            signalled = opts.drain_signal
            if signalled is None:
                signalled = DrainSignal()
                await tg.start(signalled.watch)
            tg.start_soon(drain_on_signal, manager, runtime.drained.set, signalled)
            try:
                yield runtime
            finally:
                # The face is gone: running workers see stdin close and end their sessions.
                tg.cancel_scope.cancel()
    finally:
        if opts.driver is not None:
            await opts.driver.aclose()


async def drain_on_signal(
    manager: SubagentManager, drained: Callable[[], Any], signalled: DrainSignal
) -> None:
    """On the first of DRAIN_SIGNALS (`signalled`): drain the pool, then call `drained`."""
    await signalled.event.wait()
    running = sum(1 for e in manager.agents.values() if not e.done.is_set())
    print(f"subagent serve: {signalled.name}: stopping {running} sub-agent(s)", file=sys.stderr)
    # A second signal meanwhile changes nothing (the receiver stays open): the drain is
    # bounded (pool.STOP_GRACE_S, then the kill ladder) and shielded from the face's end.
    with anyio.CancelScope(shield=True):
        await manager.drain()
    drained()


async def serve_stdio(opts: ServeOptions, early: EarlyFace | None = None) -> None:
    """Serve MCP on stdio until the host closes stdin or a signal drains serve.

    `early`: the face that has owned the wire while the SDK loaded (early.py), else the
    SDK's stdio.
    """
    async with running(opts) as runtime, anyio.create_task_group() as tg:

        async def stop_when_drained() -> None:
            await runtime.drained.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(stop_when_drained)
        streams = early_streams(early) if early is not None else stdio_server()
        async with streams as (read_stream, write_stream):
            await runtime.app.server.run(read_stream, write_stream, runtime.options)
        tg.cancel_scope.cancel()
