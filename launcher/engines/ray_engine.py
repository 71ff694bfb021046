"""The Ray engine: each task a Ray task that runs the worker process on its node.

`pip install 'subagent[ray]'`. Without `--address` a local Ray is started for the batch
and shut down with it; it listens on loopback only. Ray's own log lines go to
`SUBAGENT_HOME/batch/ray.log` (to the terminal with `--verbose`). A Ray task whose worker
process dies without reporting an end (its node lost, the process killed) exits its Ray
worker, which Ray retries up to `max_retries` times; a run that failed on its own returns
normally and is never retried.

The worker is started as ray_node.py says (a clean block, non-dumpable, sockets); its Job
and the batch's secrets reach it sealed to the key it offers, through the batch's
`HandOvers` actor: never a task argument Ray keeps or shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import itertools
import logging
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio

from launcher.backend import protocol
from launcher.backend.protocol import Job, RunState
from launcher.engines.base import BatchTask, EngineOptions, TaskEnd, log_name
from launcher.engines.ray_node import PASSED_ENV, handed_env, start_sealed_worker
from launcher.errors import RunError, UsageError
from launcher.events import RunStatus
from launcher.state import private_dir, private_opener, state_home

LOCAL_OBJECT_STORE_BYTES = 100 * 1024 * 1024
"""A local Ray moves only small result dicts: a small object store fits a 2-core box."""
WORKER_LOST_EXIT = 75
"""How a Ray worker leaves when its sub-agent worker died: Ray then retries the task."""
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


class HandOvers:
    """A batch's sealed hand-overs (a Ray async actor): each task attempt's key offer
    up to the driver, the driver's sealed answer down, by the task's `key`."""

    def __init__(self) -> None:
        self._up: dict[str, Any] = {}
        self._down: dict[str, Any] = {}

    @staticmethod
    def _queue(table: dict[str, Any], key: str) -> Any:
        if key not in table:
            table[key] = asyncio.Queue()
        return table[key]

    async def offer(self, key: str, message: dict[str, Any]) -> None:
        """A worker's key offer (from its task on the node)."""
        await self._queue(self._up, key).put(message)

    async def take_offer(self, key: str) -> dict[str, Any]:
        """The next offer for `key`, when there is one (the driver waits here)."""
        result: dict[str, Any] = await self._queue(self._up, key).get()
        return result

    async def answer(self, key: str, message: dict[str, Any]) -> None:
        """The driver's sealed answer to the last offer for `key`."""
        await self._queue(self._down, key).put(message)

    async def take_answer(self, key: str) -> dict[str, Any]:
        """The sealed answer for `key`, when there is one (the task waits here)."""
        result: dict[str, Any] = await self._queue(self._down, key).get()
        return result

    async def drop(self, key: str) -> None:
        """Forget `key` (its task ended)."""
        self._up.pop(key, None)
        self._down.pop(key, None)


def run_on_node(
    workspace: str, env: dict[str, str], log_path: str, handovers: Any, key: str, sender: str
) -> dict[str, Any]:
    """The Ray task body: the worker process to its end; returns its RunState as a dict.

    `env`: the driver's not-secret variables for the worker's block (ray_node's
    `handed_env`). The worker's first line offers its key; the driver answers through
    `handovers` with the Job and its secrets sealed to it: this task never holds them.
    `sender`: the driver's public key, the only one whose box the worker opens.
    """
    import ray

    from launcher.procs.sealed import SEAL_KEY_OP

    state = RunState()
    proc, stdin, stdout, offer = start_sealed_worker(workspace, env, log_path, sender)
    try:
        # stdin stays open for the run: its EOF (this process gone) tells the worker to stop.
        for raw in itertools.chain((offer,), stdout):
            event = protocol.decode(raw)
            if event is not None and event.get("op") == SEAL_KEY_OP:
                ray.get(handovers.offer.remote(key, event))
                stdin.write(protocol.encode(ray.get(handovers.take_answer.remote(key))))
                stdin.flush()
            elif event is not None:
                state.observe(event)
    finally:
        with contextlib.suppress(OSError, ValueError):
            stdin.close()
        proc.wait()
        stdout.close()
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
        # A cluster on loopback must be joined as one: else Ray swaps 127.0.0.1 in the
        # address for this machine's network address, where nothing listens.
        host = (options.address or "").rpartition(":")[0].strip("[]") or options.address or ""
        self._ray = _import_ray(loopback=self._started_here or _is_loopback(host))
        self._remote: Any = None
        self._handovers: Any = None
        self._key: Any = None
        """This batch's sealing key (procs/sealed.py): workers open its boxes only."""
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
        self._handovers = ray.remote(HandOvers).options(num_cpus=0).remote()
        from launcher.procs.sealed import DriverKey

        self._key = DriverKey()
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
        key = f"{task.id}:{secrets.token_hex(8)}"
        start = time.monotonic()
        ref = self._remote.remote(
            job.workspace, handed_env(), log_path, self._handovers, key, self._key.public
        )
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._answer_offers, key, job)
                data = await _wrap(ref)
                tg.cancel_scope.cancel()
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
        finally:
            with contextlib.suppress(Exception):
                self._handovers.drop.remote(key)
        state = RunState(**data)
        return TaskEnd.from_state(task.id, state, time.monotonic() - start)

    async def _answer_offers(self, key: str, job: Job) -> None:
        """Each attempt's key offer answered with the Job and this process's secrets sealed
        to it: one per attempt, so never more than the task's tries."""
        from launcher.procs.hidden import handed_secrets

        line = job.to_line().decode()
        for _ in range(self.options.max_retries + 1):
            offer = await _wrap(self._handovers.take_offer.remote(key))
            await _wrap(
                self._handovers.answer.remote(key, self._key.seal(offer, handed_secrets(), line))
            )


async def _wrap(ref: Any) -> Any:
    """The value of a Ray object ref, awaited."""
    return await asyncio.wrap_future(ref.future())
