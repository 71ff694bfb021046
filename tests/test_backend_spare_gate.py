"""A batch's spare pool refills only while fewer than `max_warming` of its spares still
import; serve's pool (no `max_warming`) refills at once."""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
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


INTERPRETER_NAME = "python3"
"""A just-started spare's process name: the interpreter's, until it names itself."""


@dataclass
class FakeProcess:
    pid: int
    returncode: int | None = None
    stdin: Any = None


class FakeWorkers:
    """Stands in for start_worker, stop_group and the /proc name and state reads."""

    def __init__(self) -> None:
        self.started: list[tuple[int, bool]] = []
        self.warming: set[int] = set()
        """Named WARMING_NAME; a started spare not in it (nor in `unnamed`) is SPARE_NAME."""
        self.unnamed: set[int] = set()
        """Still named after the interpreter (with `start_unnamed`, from their start)."""
        self.frozen: set[int] = set()
        """Stopped (state T)."""
        self.stopped: set[int] = set()
        self.start_unnamed = False
        self.gated = anyio.Event()

    async def start(self, workspace: Any, log_path: Path, *, spare: bool, lean: bool) -> Any:
        pid = next(FAKE_PIDS)
        self.started.append((pid, lean))
        self.warming.add(pid)
        if self.start_unnamed:
            self.unnamed.add(pid)
        _empty_log(log_path)
        return FakeProcess(pid)

    async def stop(self, process: Any, ladder: Any) -> None:
        process.returncode = 0
        self.stopped.add(process.pid)

    def read_stat(self, pid: int) -> tuple[str, str] | None:
        if pid in self.stopped or pid not in {p for p, _ in self.started}:
            return None
        if pid in self.unnamed:
            name = INTERPRETER_NAME
        else:
            name = spare_mod.WARMING_NAME if pid in self.warming else spare_mod.SPARE_NAME
        return name, "T" if pid in self.frozen else "S"

    async def wait_until(self, predicate: Callable[[], bool], limit_s: float) -> bool:
        if not predicate():
            self.gated.set()
        with anyio.fail_after(LIMIT_S):
            while not predicate():  # noqa: ASYNC110
                await anyio.sleep(0.01)
        return True


def _empty_log(log_path: Path) -> None:
    # A real spare's log exists from its start: the pool removes it if left empty.
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.touch()


@pytest.fixture
def fakes(monkeypatch: pytest.MonkeyPatch) -> FakeWorkers:
    fake = FakeWorkers()
    monkeypatch.setattr(spare_mod, "start_worker", fake.start)
    monkeypatch.setattr(spare_mod, "stop_group", fake.stop)
    monkeypatch.setattr(spare_mod, "wait_until", fake.wait_until)
    monkeypatch.setattr(spare_mod, "read_stat", fake.read_stat)
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


@pytest.mark.anyio
async def test_a_waiting_spare_counts_as_importing_until_it_is_named_ready(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    # A spare starts named after the interpreter and takes WARMING_NAME only after its
    # hand-over: the gate must count it from its start, or it starts every spare at once.
    fakes.start_unnamed = True
    pool = SparePool(
        workspace=tmp_path, log_dir=tmp_path / "logs", count=4, max_warming=2, gate_start=True
    )
    await pool.start_now()
    async with anyio.create_task_group() as tg:
        tg.start_soon(pool.run)
        with anyio.fail_after(LIMIT_S):
            await fakes.gated.wait()
        assert len(fakes.started) == 2  # two just started, neither named yet: no third
        fakes.unnamed.clear()
        fakes.warming.clear()
        await _until(lambda: len(fakes.started) == 4)
        tg.cancel_scope.cancel()


def _sleeper(tmp_path: Path, name: str) -> subprocess.Popen[bytes]:
    # A process's name is its executable's file name: a link named `name` to sleep.
    link = tmp_path / name
    link.symlink_to(shutil.which("sleep") or "/bin/sleep")
    return subprocess.Popen([str(link), "60"])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="names are read on Linux")
def test_a_live_process_not_named_ready_is_importing(tmp_path: Path) -> None:
    unnamed = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    ready = _sleeper(tmp_path, spare_mod.SPARE_NAME)
    try:
        assert spare_mod.is_importing(unnamed.pid)  # named after the interpreter
        assert not spare_mod.is_warming(unnamed.pid)  # a taken spare's test is unchanged
        assert not spare_mod.is_importing(ready.pid)
    finally:
        for process in (unnamed, ready):
            process.kill()
            process.wait()
    assert not spare_mod.is_importing(unnamed.pid)  # gone


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="names are read on Linux")
def test_a_process_stat_name_may_hold_parentheses_and_spaces(tmp_path: Path) -> None:
    odd = _sleeper(tmp_path, "a) b (c")
    try:
        assert spare_mod.read_stat(odd.pid) in (("a) b (c", "S"), ("a) b (c", "R"))
    finally:
        odd.kill()
        odd.wait()


@pytest.mark.anyio
async def test_a_take_prefers_the_oldest_spare_done_importing(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=3)
    await pool.start_now()
    first, second, third = (pid for pid, _ in fakes.started)
    fakes.warming -= {second, third}  # the first still imports (or is stuck doing so)
    taken = pool.take(tmp_path)
    assert taken is not None and taken.process.pid == second
    assert pool.pids == [first, third]
    fakes.warming.add(third)
    taken = pool.take(tmp_path)  # none done importing: the oldest
    assert taken is not None and taken.process.pid == first
    assert pool.pids == [third]


@pytest.mark.anyio
async def test_a_stopped_spare_is_never_taken_and_is_retired(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=2)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        first, second = (pid for pid, _ in fakes.started)
        fakes.warming.clear()
        fakes.frozen.add(first)  # SIGSTOPped while it waits
        taken = pool.take(tmp_path)
        assert taken is not None and taken.process.pid == second
        await _until(lambda: first in fakes.stopped and len(fakes.started) == 4)
        assert first not in pool.pids
        tg.cancel_scope.cancel()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="states are read on Linux")
@pytest.mark.anyio
async def test_a_process_sigstopped_reads_as_stopped(tmp_path: Path) -> None:
    process = _sleeper(tmp_path, "stopped-sleep")
    try:
        assert not spare_mod.is_stopped(process.pid)
        os.kill(process.pid, signal.SIGSTOP)
        await _until(lambda: spare_mod.is_stopped(process.pid))
    finally:
        process.kill()
        process.wait()


@pytest.mark.anyio
async def test_the_pool_stops_its_spares_all_at_once(
    tmp_path: Path, fakes: FakeWorkers, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each stop here ends only once every stop has begun, as a spare deaf to SIGTERM takes
    # the ladder's whole grace: one after the other, the first would never end.
    count = 4
    begun = 0
    all_begun = anyio.Event()

    async def slow_stop(process: Any, ladder: Any) -> None:
        nonlocal begun
        begun += 1
        if begun == count:
            all_begun.set()
        with anyio.fail_after(LIMIT_S):
            await all_begun.wait()
        await fakes.stop(process, ladder)

    monkeypatch.setattr(spare_mod, "stop_group", slow_stop)
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=count)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        tg.cancel_scope.cancel()
    assert fakes.stopped == {pid for pid, _ in fakes.started}
    assert not list((tmp_path / "logs").iterdir())  # their empty logs removed


@pytest.mark.anyio
async def test_a_spare_that_exited_is_dropped_without_signalling_its_old_group(
    tmp_path: Path, fakes: FakeWorkers
) -> None:
    # Its pid, the id of the group a stop sweeps, may be an unrelated process's by now.
    pool = SparePool(workspace=tmp_path, log_dir=tmp_path / "logs", count=3)
    async with anyio.create_task_group() as tg:
        await tg.start(pool.run)
        fakes.warming.clear()
        first, second, third = pool._ready
        first.process.returncode = -9  # killed and reaped while it waited
        assert pool.take(tmp_path) is second
        await _until(lambda: len(fakes.started) == 5)  # the dead one retired, two refills
        assert not first.log_path.exists()  # its empty log removed all the same
        third.process.returncode = -9  # one that dies before serve ends
        tg.cancel_scope.cancel()
    assert not third.log_path.exists()
    assert fakes.stopped == {pid for pid, _ in fakes.started[3:]}  # only the live ones


@pytest.mark.anyio
async def test_a_stopped_spare_does_not_hold_the_gate(tmp_path: Path, fakes: FakeWorkers) -> None:
    # It takes no core; counted as importing, each further spare would wait out WARM_WAIT_S.
    pool = SparePool(
        workspace=tmp_path, log_dir=tmp_path / "logs", count=3, max_warming=1, gate_start=True
    )
    await pool.start_now()
    fakes.frozen.add(fakes.started[0][0])  # SIGSTOPped while it imports
    async with anyio.create_task_group() as tg:
        tg.start_soon(pool.run)
        with anyio.fail_after(LIMIT_S):
            await fakes.gated.wait()
        assert len(fakes.started) == 2  # the second imports: the third waits for it
        tg.cancel_scope.cancel()
