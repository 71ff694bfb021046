"""The local engine: each task one worker process on this machine (the one serve uses)."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from types import TracebackType

import anyio
import anyio.abc

from launcher.backend.pool import SubAgent, drive_worker
from launcher.backend.protocol import Job
from launcher.backend.spare import SparePool, default_max_warming
from launcher.engines.base import BatchTask, EngineOptions, TaskEnd, log_name
from launcher.events import RunStatus
from launcher.models.factory import uses_http
from launcher.state import state_home

MAX_BATCH_SPARES = 4
"""Spares a batch keeps: one per slot (`--jobs`), at most this many. Tasks of a batch
tend to end together, so one spare serves one of them and the rest start cold (measured:
no gain at --jobs 4); a slot's spare starts while its task runs. Capped: each waiting
spare holds an interpreter (~40 MiB), and a wide batch is CPU-bound anyway."""


class LocalEngine:
    """Runs each task in a worker process here; its servers start and end with it."""

    name = "local"

    def __init__(self, options: EngineOptions) -> None:
        self.options = options
        self._logs = state_home() / "batch"
        self._stack = contextlib.AsyncExitStack()
        self._spares: SparePool | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._started = anyio.Lock()

    async def __aenter__(self) -> LocalEngine:
        # Spares (started workers waiting for their task) live in the batch's own task
        # group, entered here and left in __aexit__: the batch's tasks nest inside it.
        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)  # runs first: the spares' owner ends
        self._spares = SparePool(
            workspace=Path(self.options.workspace),
            log_dir=self._logs,
            count=min(self.options.jobs, MAX_BATCH_SPARES),
            max_warming=default_max_warming(),
        )
        self._tg = tg
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._spares = None
        await self._stack.aclose()

    async def _spares_for(self, job: Job) -> None:
        """Spares to come preload what `job` needs; the pool starts with the first task, so
        its first spares already know (a scripted batch skips the HTTP stack in each)."""
        spares = self._spares
        if spares is None:
            return
        spares.lean = job.model is not None and not uses_http(job.model)
        async with self._started:
            if self._tg is not None:
                tg, self._tg = self._tg, None
                await tg.start(spares.run)

    def total_tasks(self, count: int) -> None:
        """No spare beyond the tasks still to come: the batch's last ones take what waits."""
        if self._spares is not None:
            self._spares.expect_takes(count)

    async def run(self, task: BatchTask) -> TaskEnd:
        """One task to its end; a worker that cannot start is an error TaskEnd."""
        o = self.options
        job = task.job(o)
        entry = SubAgent(id=task.id, agent=task.agent, status=RunStatus.RUNNING)
        log_path = self._logs / log_name(task.id)
        start = time.monotonic()
        await self._spares_for(job)
        try:
            await drive_worker(entry, job, log_path=log_path, spares=self._spares)
        except OSError as exc:  # e.g. the task's workspace does not exist
            entry.status = RunStatus.ERROR
            entry.error = f"worker failed: {type(exc).__name__}: {exc}"
        return TaskEnd.from_state(task.id, entry, time.monotonic() - start)
