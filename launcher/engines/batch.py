"""`subagent batch`: fan tasks out over an engine, one result line per task as it ends."""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import anyio

from launcher.budget import Spend
from launcher.engines.base import BatchTask, Engine, TaskEnd
from launcher.engines.tasks import BadLine, drop_results, finished, read_tasks
from launcher.events import RunStatus


@dataclass
class BatchProgress:
    """Counts as the batch runs (what the progress bar and the summary show)."""

    skipped: int = 0
    running: int = 0
    completed: int = 0
    failed: int = 0
    bad: list[BadLine] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)
    failures: dict[str, str] = field(default_factory=dict)
    """id -> error of every task that failed in this run."""
    failed_before: dict[str, str] = field(default_factory=dict)
    """id -> error of tasks whose recorded result is a failure and that did not run again."""
    cost_usd: float = 0.0
    """What the tasks that ended in this run cost (their `usage.total.cost_usd`)."""
    not_started: list[str] = field(default_factory=list)
    """Ids given a `skipped` line: the batch's cost limit was reached before they started."""

    @property
    def done(self) -> int:
        return self.completed + self.failed

    def rate(self) -> float:
        """Tasks ended per second so far."""
        elapsed = time.monotonic() - self.started
        return self.done / elapsed if elapsed > 0 else 0.0

    def exit_code(self) -> int:
        """0 every task completed, 1 any failed or was not started (now or in a recorded
        result), 2 a bad line."""
        if self.bad:
            return 2
        return 1 if self.failed or self.failed_before or self.not_started else 0


async def run_batch(
    tasks_path: Path,
    engine: Engine,
    *,
    out: TextIO,
    jobs: int,
    skip: set[str],
    failed_before: dict[str, str] | None = None,
    on_change: Callable[[BatchProgress], None] | None = None,
    max_cost_total: float | None = None,
) -> BatchProgress:
    """Run every task of `tasks_path` not in `skip`, at most `jobs` at once.

    Input is read as slots free up and results are written as tasks end, so memory stays
    flat however long the file is. `failed_before` (id -> error): recorded failures kept
    from an earlier run, which still make the batch's exit status 1. Once the tasks that
    ended cost `max_cost_total` (USD), no task starts: each left gets a `skipped` line.
    """
    progress = BatchProgress(failed_before=dict(failed_before or {}))
    notify = on_change or (lambda _: None)
    slots = anyio.Semaphore(jobs)

    async def one(task: BatchTask) -> None:
        try:
            try:
                end = await engine.run(task)
            except Exception as exc:  # an engine bug must cost one task, not the batch
                end = TaskEnd(
                    id=task.id, status=RunStatus.ERROR, error=f"{type(exc).__name__}: {exc}"
                )
            write(end)
            progress.cost_usd += Spend.from_usage(end.usage).cost_usd or 0.0
            if end.status.ok:
                progress.completed += 1
            else:
                progress.failed += 1
                progress.failures[task.id] = end.error or f"ended {end.status}"
        finally:
            progress.running -= 1
            slots.release()
            notify(progress)

    def write(end: TaskEnd) -> None:
        out.write(json.dumps(end.to_dict(), ensure_ascii=False) + "\n")
        out.flush()

    def spent() -> str | None:
        """Why no more task starts, once the batch's cost limit is reached."""
        if max_cost_total is None or progress.cost_usd < max_cost_total:
            return None
        return (
            f"not started: the batch's --max-cost-total ${max_cost_total:g} was reached "
            f"(${progress.cost_usd:.6f} spent)"
        )

    def runnable() -> Iterator[BatchTask]:
        for item in read_tasks(tasks_path):
            if isinstance(item, BadLine):
                progress.bad.append(item)
                notify(progress)
            elif item.id in skip:
                progress.skipped += 1
            else:
                yield item

    async with engine, anyio.create_task_group() as tg:
        # Read up to `jobs` tasks ahead: once the input ends, the engine learns how many
        # tasks the batch runs, so it starts no worker ahead that no task will take.
        tasks = runnable()
        ahead: deque[BatchTask] = deque()
        ended = False
        started = 0
        while True:
            while not ended and len(ahead) <= jobs:
                task = next(tasks, None)
                if task is None:
                    ended = True
                    engine.total_tasks(started + len(ahead))
                else:
                    ahead.append(task)
            if not ahead:
                break
            task = ahead.popleft()
            started += 1
            await slots.acquire()
            reason = spent()
            if reason is not None:
                slots.release()
                write(TaskEnd(id=task.id, status=RunStatus.SKIPPED, error=reason))
                progress.not_started.append(task.id)
                notify(progress)
                continue
            progress.running += 1
            notify(progress)
            tg.start_soon(one, task, name=f"task:{task.id}")
    return progress


@dataclass(frozen=True)
class RerunPlan:
    """What a re-run over an existing results file skips, and which failures it keeps."""

    skip: set[str] = field(default_factory=set)
    failed_before: dict[str, str] = field(default_factory=dict)


def plan_rerun(results: Path | None, *, retry_failed: bool) -> RerunPlan:
    """Ids a re-run skips: completed ones, and failed ones unless `retry_failed`.

    Failed ones that will run again lose their old line first (one line per id); failed
    ones that will not are kept in `failed_before` (with their recorded error).
    """
    if results is None:
        return RerunPlan()
    done = finished(results)
    # A task the batch's cost limit kept from starting runs when the batch runs again.
    unstarted = {i for i, r in done.items() if r.status is RunStatus.SKIPPED}
    drop_results(results, unstarted)
    done = {i: r for i, r in done.items() if i not in unstarted}
    failed = {i: r.error or f"ended {r.status}" for i, r in done.items() if not r.status.ok}
    if retry_failed:
        drop_results(results, set(failed))
        return RerunPlan(skip={i for i, r in done.items() if r.status.ok})
    return RerunPlan(skip=set(done), failed_before=failed)
