"""`run_batch` tells its engine how many tasks it runs once the input is read to its end,
and the spare pool then keeps no more spares than those tasks will take."""

from __future__ import annotations

import io
import json
from pathlib import Path
from types import TracebackType

import anyio
import pytest

from launcher.backend.spare import SparePool
from launcher.engines.base import BatchTask, TaskEnd
from launcher.engines.batch import run_batch
from launcher.events import RunStatus
from tests.test_backend_spare_gate import LIMIT_S, FakeWorkers, fakes  # noqa: F401


class HeldEngine:
    """Runs nothing until released, one task a release; records what it is told."""

    name = "held"

    def __init__(self) -> None:
        self.started: list[str] = []
        self.told: list[tuple[int, int]] = []
        """(count, tasks started when told)."""
        self.release = anyio.Semaphore(0)

    async def __aenter__(self) -> HeldEngine:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def total_tasks(self, count: int) -> None:
        self.told.append((count, len(self.started)))

    async def run(self, task: BatchTask) -> TaskEnd:
        self.started.append(task.id)
        await self.release.acquire()
        return TaskEnd(id=task.id, status=RunStatus.COMPLETED)


def _tasks(root: Path, count: int) -> Path:
    path = root / "tasks.jsonl"
    lines = [json.dumps({"id": f"t{i}", "prompt": "p"}) for i in range(count)]
    path.write_text("\n".join(["not json", *lines]) + "\n")
    return path


async def _wait(predicate: object) -> None:
    with anyio.fail_after(LIMIT_S):
        while not predicate():  # type: ignore[operator]  # noqa: ASYNC110
            await anyio.sleep(0.01)


@pytest.mark.anyio
@pytest.mark.parametrize(("count", "jobs"), [(5, 2), (1, 4), (0, 2)])
async def test_the_engine_learns_how_many_tasks_are_left_once_the_input_ends(
    tmp_path: Path, count: int, jobs: int
) -> None:
    engine = HeldEngine()
    out = io.StringIO()
    async with anyio.create_task_group() as tg:

        async def batch() -> None:
            progress = await run_batch(
                _tasks(tmp_path, count), engine, out=out, jobs=jobs, skip=set()
            )
            assert len(progress.bad) == 1 and progress.completed == count

        tg.start_soon(batch)
        for _ in range(count):
            await _wait(lambda: len(engine.started) > len(out.getvalue().splitlines()))
            engine.release.release()
            await _wait(lambda: len(out.getvalue().splitlines()) >= 1)
    assert len(engine.told) == 1
    total, started = engine.told[0]
    assert total == count
    assert started >= count - jobs - 1  # learnt while the last tasks were still to come
    assert sorted(json.loads(line)["id"] for line in out.getvalue().splitlines()) == sorted(
        f"t{i}" for i in range(count)
    )


@pytest.mark.anyio
async def test_the_pool_keeps_no_spare_beyond_the_last_takes(
    tmp_path: Path,
    fakes: FakeWorkers,  # noqa: F811
) -> None:
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=3, max_warming=8)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        fakes.warming.clear()
        pool.expect_takes(2)
        await _wait(lambda: len(pool.pids) == 2)  # the surplus one is stopped
        stopped = {s[0] for s in fakes.started} - set(pool.pids)
        assert len(stopped) == 1 and fakes.stopped == stopped
        assert pool.take(tmp_path) is not None
        assert pool.take(tmp_path) is not None
        assert pool.take(tmp_path) is None  # a take beyond the count starts fresh
        await _wait(lambda: not pool._wanted.is_set())
        assert len(fakes.started) == 3  # no replacement for the last takes
        tg.cancel_scope.cancel()
