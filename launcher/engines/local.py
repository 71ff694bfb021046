"""The local engine: each task one worker process on this machine (the one serve uses)."""

from __future__ import annotations

import hashlib
import time
from types import TracebackType

from launcher.backend.pool import SubAgent, drive_worker
from launcher.engines.base import BatchTask, EngineOptions, TaskEnd
from launcher.state import state_home


def log_name(task_id: str) -> str:
    """A file name for a task's worker log that any id maps to safely and uniquely."""
    digest = hashlib.sha256(task_id.encode()).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in task_id)[:40]
    return f"{safe}-{digest}.log"


class LocalEngine:
    """Runs each task in a worker process here; its servers start and end with it."""

    name = "local"

    def __init__(self, options: EngineOptions) -> None:
        self.options = options
        self._logs = state_home() / "batch"

    async def __aenter__(self) -> LocalEngine:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    async def run(self, task: BatchTask) -> TaskEnd:
        """One task to its end; a worker that cannot start is an error TaskEnd."""
        o = self.options
        job = task.job(config_dir=o.config_dir, workspace=o.workspace, model=o.model)
        entry = SubAgent(id=task.id, agent=task.agent, status="running")
        start = time.monotonic()
        try:
            await drive_worker(entry, job, log_path=self._logs / log_name(task.id))
        except OSError as exc:  # e.g. the task's workspace does not exist
            entry.status, entry.error = "error", f"worker failed: {type(exc).__name__}: {exc}"
        return TaskEnd.from_state(task.id, entry, time.monotonic() - start)
