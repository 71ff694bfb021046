"""A batch's spare pool refills only while fewer than `max_warming` of its spares still
import; serve's pool (no `max_warming`) refills at once."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from launcher.backend import spare as spare_mod
from launcher.backend.spare import SparePool

LIMIT_S = 10.0
"""Bound on each wait for the pool's owner task (it only awaits fakes)."""
FAKE_PIDS = itertools.count(10_000_000)
"""Above any real pid: a fake process must never name a real one."""


@dataclass
class FakeProcess:
    pid: int
    returncode: int | None = None


class FakeWorkers:
    """Stands in for start_worker, stop_group and the /proc name check."""

    def __init__(self) -> None:
        self.started: list[tuple[int, bool]] = []
        self.warming: set[int] = set()
        self.stopped: set[int] = set()
        self.gated = anyio.Event()

    async def start(self, workspace: Any, log_path: Path, *, spare: bool, lean: bool) -> Any:
        pid = next(FAKE_PIDS)
        self.started.append((pid, lean))
        self.warming.add(pid)
        return FakeProcess(pid)

    async def stop(self, process: Any, ladder: Any) -> None:
        process.returncode = 0
        self.stopped.add(process.pid)

    async def wait_until(self, predicate: Callable[[], bool], limit_s: float) -> bool:
        if not predicate():
            self.gated.set()
        with anyio.fail_after(LIMIT_S):
            while not predicate():  # noqa: ASYNC110
                await anyio.sleep(0.01)
        return True


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> FakeWorkers:
    fake = FakeWorkers()
    monkeypatch.setattr(spare_mod, "start_worker", fake.start)
    monkeypatch.setattr(spare_mod, "stop_group", fake.stop)
    monkeypatch.setattr(spare_mod, "wait_until", fake.wait_until)
    monkeypatch.setattr(spare_mod, "is_warming", lambda pid: pid in fake.warming)
    return fake


async def _until(predicate: Callable[[], bool]) -> None:
    with anyio.fail_after(LIMIT_S):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(0.01)


@pytest.mark.anyio
async def test_refills_wait_while_a_core_s_worth_of_taken_spares_still_import(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=3, max_warming=2)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        assert len(fakes.started) == 3  # the first fill is not held back
        taken = [pool.take(tmp_path) for _ in range(3)]
        assert all(s is not None for s in taken)
        with anyio.fail_after(LIMIT_S):
            await fakes.gated.wait()
        assert len(fakes.started) == 3  # three taken spares import: no replacement yet
        fakes.gated = anyio.Event()
        fakes.warming -= {fakes.started[0][0], fakes.started[1][0]}  # room for one more
        await _until(lambda: len(fakes.started) == 4)
        with anyio.fail_after(LIMIT_S):
            await fakes.gated.wait()  # the new one and the last taken one import
        assert len(fakes.started) == 4
        fakes.warming.clear()
        await _until(lambda: len(fakes.started) == 6)
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_lean_pool_starts_lean_spares_and_a_switch_applies_to_the_next(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=1, lean=True)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        fakes.warming.clear()
        pool.lean = False
        assert pool.take(tmp_path) is not None
        await _until(lambda: len(fakes.started) == 2)
        tg.cancel_scope.cancel()
    assert [lean for _, lean in fakes.started] == [True, False]


def test_a_process_not_named_warming_is_not_warming() -> None:
    assert not spare_mod.is_warming(next(FAKE_PIDS))  # no such process
    assert not spare_mod.is_warming(1)  # init is no spare


@pytest.mark.anyio
async def test_serve_s_pool_refills_at_once_while_taken_spares_still_import(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    # serve: back-to-back spawns must each find a spare already started
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=1)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        for taken in range(1, 4):
            assert pool.take(tmp_path) is not None
            await _until(lambda n=taken: len(fakes.started) == n + 1)
        assert len(fakes.warming) == 4  # all of them still importing, none held back
        assert not fakes.gated.is_set()
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_gated_start_starts_the_first_spare_then_one_a_core(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    # serve's `--spares N`: the first spare at once (it serves the first call), the others
    # only while fewer than `max_warming` import, so none slows the first.
    pool = SparePool(
        workspace=tmp_path, log_dir=tmp_path / "logs", count=4, max_warming=2, gate_start=True
    )
    await pool.start_now()
    assert len(fakes.started) == 1
    async with anyio.create_task_group() as tg:
        tg.start_soon(pool.run)
        with anyio.fail_after(LIMIT_S):
            await fakes.gated.wait()
        assert len(fakes.started) == 2  # two import: the third waits for a core
        fakes.warming.clear()
        await _until(lambda: len(fakes.started) == 4)
        assert len(pool.pids) == 4
        tg.cancel_scope.cancel()
    assert fakes.stopped == {pid for pid, _ in fakes.started}


@pytest.mark.anyio
async def test_an_ungated_start_starts_every_spare_at_once(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=3, max_warming=2)
    await pool.start_now()
    assert len(fakes.started) == 3
    assert not fakes.gated.is_set()
