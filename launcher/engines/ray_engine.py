"""The Ray engine: each task a Ray task that runs the worker process on its node.

`pip install 'subagent[ray]'`. Without `--address` a local Ray is started for the batch
and shut down with it; it listens on loopback only. Ray's own log lines go to
`SUBAGENT_HOME/batch/ray.log` (to the terminal with `--verbose`). A Ray task whose worker
process dies without reporting an end (its node lost, the process killed) exits its Ray
worker, which Ray retries up to `max_retries` times; a run that failed on its own returns
normally and is never retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from launcher import settings
from launcher.backend import protocol
from launcher.backend.protocol import Job, RunState
from launcher.engines.base import BatchTask, EngineOptions, TaskEnd, log_name
from launcher.errors import RunError, UsageError
from launcher.events import RunStatus
from launcher.state import private_dir, private_opener, state_home

LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024
"""A local Ray moves only small result dicts: a small object store fits a 2-core box."""
WORKER_LOST_EXIT = 75
"""How a Ray worker leaves when its sub-agent worker died: Ray then retries the task."""
PASSED_ENV = (settings.HOME.name, settings.MODEL.name, "PATH", "HOME")
"""Driver variables a task's worker needs on its node (model keys travel the same way, and
so do the OTEL_* variables: a traced batch's tasks export their spans too)."""
LOOPBACK_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch, read when `ray` is imported, between a one-machine cluster (0: its node
address and every server it starts are 127.0.0.1, as Ray does on macOS and Windows) and
a reachable one (the machine's network address, servers on all interfaces)."""
RAY_LOG_NAME = "ray.log"
RAY_LOGGER = "ray"


def _import_ray(*, loopback: bool) -> Any:
    """`ray`, imported; `loopback`: set up for a local cluster no other machine can reach."""
    if loopback:
        os.environ[LOOPBACK_ONLY_ENV] = "0"  # its servers inherit it too
    try:
        import ray
    except ImportError as exc:
        raise UsageError(
            "--engine ray needs Ray: pip install 'subagent[ray]' (or pip install ray)"
        ) from exc
    return ray


def run_on_node(job: dict[str, Any], env: dict[str, str], log_path: str) -> dict[str, Any]:
    """The Ray task body: the worker process to its end; returns its RunState as a dict."""
    spec = Job(**job)
    state = RunState()
    Path(log_path).parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as errlog:
        proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "launcher.backend.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            cwd=spec.workspace,
            env={**os.environ, **env},
            start_new_session=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        # stdin stays open for the run: its EOF (this process gone) tells the worker to stop.
        proc.stdin.write(spec.to_line())
        proc.stdin.flush()
        for raw in proc.stdout:
            event = protocol.decode(raw)
            if event is not None:
                state.observe(event)
        proc.stdin.close()
        proc.wait()
    if not state.final:
        # The worker died under us: a lost node, not a failed run. Leaving the Ray worker
        # process makes Ray count a system failure and retry the task.
        os._exit(WORKER_LOST_EXIT)
    return {k: v for k, v in asdict(state).items() if not k.startswith("_")}


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


@contextlib.contextmanager
def _ray_logs_to(path: Path) -> Iterator[None]:
    """Ray's own log records (its `ray` logger) into `path` instead of the terminal."""
    private_dir(path.parent, state_home())
    handler = logging.StreamHandler(open(path, "a", encoding="utf-8", opener=private_opener))
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger(RAY_LOGGER)
    saved = logger.handlers[:], logger.propagate
    logger.handlers = [handler]
    logger.propagate = False
    try:
        yield
    finally:
        logger.handlers, logger.propagate = saved
        handler.close()
        handler.stream.close()


class RayEngine:
    """Runs each task as a Ray task (`num_cpus` each, `max_retries` for lost workers)."""

    name = "ray"

    def __init__(self, options: EngineOptions) -> None:
        self.options = options
        self._started_here = not options.address
        self._ray = _import_ray(loopback=self._started_here)
        self._remote: Any = None
        self._logs = contextlib.ExitStack()

    async def __aenter__(self) -> RayEngine:
        ray, o = self._ray, self.options
        if not o.verbose:
            self._logs.enter_context(_ray_logs_to(state_home() / "batch" / RAY_LOG_NAME))
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
        if o.address:
            kwargs["address"] = o.address
        else:
            kwargs["object_store_memory"] = LOCAL_OBJECT_STORE_BYTES
        kwargs["runtime_env"] = {"env_vars": env}
        context = await anyio.to_thread.run_sync(lambda: ray.init(**kwargs))
        if self._started_here:
            node = str(context.address_info.get("node_ip_address", ""))
            if not _is_loopback(node):
                await anyio.to_thread.run_sync(ray.shutdown)
                self._logs.close()
                raise RunError(
                    f"the local Ray would listen on {node}, not loopback only: not started "
                    "(was ray imported before subagent set it up?)"
                )
        self._remote = ray.remote(run_on_node).options(
            num_cpus=o.num_cpus, max_retries=o.max_retries, retry_exceptions=False
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with anyio.CancelScope(shield=True):
            try:
                await anyio.to_thread.run_sync(self._ray.shutdown)
            finally:
                self._logs.close()

    def total_tasks(self, count: int) -> None:
        """Nothing is started ahead of a Ray task: nothing to trim."""

    async def run(self, task: BatchTask) -> TaskEnd:
        """Submit the task and wait for its end; cancelling kills its Ray worker."""
        o = self.options
        job = task.job(o)
        log_path = str(state_home() / "batch" / log_name(task.id))
        env = {k: v for k, v in os.environ.items() if k in PASSED_ENV or k.startswith("OTEL_")}
        start = time.monotonic()
        ref = self._remote.remote(asdict(job), env, log_path)
        try:
            data = await asyncio.wrap_future(ref.future())
        except anyio.get_cancelled_exc_class():
            self._ray.cancel(ref, force=True)
            raise
        except Exception as exc:  # retries used up, or the task could not run at all
            return TaskEnd(
                id=task.id,
                status=RunStatus.ERROR,
                duration_s=round(time.monotonic() - start, 3),
                error=f"ray: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            )
        state = RunState(**data)
        return TaskEnd.from_state(task.id, state, time.monotonic() - start)
