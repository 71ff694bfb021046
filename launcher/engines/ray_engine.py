"""The Ray engine: each task a Ray task that runs the worker process on its node.

`pip install 'subagent[ray]'`. Without `--address` a local Ray is started for the batch
and shut down with it. A Ray task whose worker process dies without reporting an end
(its node lost, the process killed) exits its Ray worker, which Ray retries up to
`max_retries` times; a run that failed on its own returns normally and is never retried.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from launcher.backend import protocol
from launcher.backend.protocol import Job, RunState
from launcher.engines.base import BatchTask, EngineOptions, TaskEnd
from launcher.engines.local import log_name
from launcher.errors import UsageError
from launcher.events import RunStatus
from launcher.state import state_home

LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024
"""A local Ray moves only small result dicts: a small object store fits a 2-core box."""
WORKER_LOST_EXIT = 75
"""How a Ray worker leaves when its sub-agent worker died: Ray then retries the task."""
PASSED_ENV = ("SUBAGENT_HOME", "SUBAGENT_MODEL", "PATH", "HOME")
"""Driver variables a task's worker needs on its node (model keys travel the same way)."""


def _import_ray() -> Any:
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


class RayEngine:
    """Runs each task as a Ray task (`num_cpus` each, `max_retries` for lost workers)."""

    name = "ray"

    def __init__(self, options: EngineOptions) -> None:
        self.options = options
        self._ray = _import_ray()
        self._remote: Any = None
        self._started_here = False

    async def __aenter__(self) -> RayEngine:
        ray, o = self._ray, self.options
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
        kwargs: dict[str, Any] = {"log_to_driver": False, "include_dashboard": False}
        if o.address:
            kwargs["address"] = o.address
        else:
            kwargs["object_store_memory"] = LOCAL_OBJECT_STORE_BYTES
            self._started_here = True
        kwargs["runtime_env"] = {"env_vars": env}
        await anyio.to_thread.run_sync(lambda: ray.init(**kwargs))
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
            await anyio.to_thread.run_sync(self._ray.shutdown)

    async def run(self, task: BatchTask) -> TaskEnd:
        """Submit the task and wait for its end; cancelling kills its Ray worker."""
        o = self.options
        job = task.job(config_dir=o.config_dir, workspace=o.workspace, model=o.model)
        log_path = str(state_home() / "batch" / log_name(task.id))
        env = {k: os.environ[k] for k in PASSED_ENV if k in os.environ}
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
