"""A worker's channel ends with the worker: a copy of its stdout held by another process
(one that took it, as a same-user process could before the worker turned non-dumpable)
must not keep its run waiting for an EOF that never comes (backend/pool.py)."""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path

import anyio
import pytest

from launcher.backend.pool import SubAgent, drive_worker
from launcher.backend.protocol import Job
from tests.e2e.conftest import wait_until

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfd_getfd is Linux"),
    pytest.mark.skipif(os.geteuid() != 0, reason="taking a non-dumpable worker's fd needs root"),
]

LIMIT_S = 90.0
"""Bounds the run; a worker pays its imports on 2 loaded cores."""
PIDFD_GETFD = 438
SCRIPT = "steps:\n  - sleep: 3\n    say: done after a while\n"


def take_fd(pid: int, fd: int) -> int:
    """A copy of `pid`'s descriptor `fd` in this process (pidfd_getfd), or -1."""
    pidfd = os.pidfd_open(pid)
    try:
        return int(ctypes.CDLL(None, use_errno=True).syscall(PIDFD_GETFD, pidfd, fd, 0))
    finally:
        os.close(pidfd)


@pytest.mark.anyio
async def test_a_held_copy_of_the_workers_stdout_does_not_hold_its_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SUBAGENT_HOME", str(tmp_path / "state"))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (tmp_path / "slow.yaml").write_text(SCRIPT)
    job = Job(prompt="go", model=f"scripted:{tmp_path / 'slow.yaml'}", workspace=str(workspace))
    entry = SubAgent(id="held", agent=job.agent, status="running")
    held: list[int] = []

    started = anyio.Event()
    entry.watchers.append(
        lambda event: started.set() if event.get("type") == "session_start" else None
    )

    async def hold_its_stdout() -> None:
        # Once the worker runs its job (its channel is its fd 1 by then), keep a copy.
        await started.wait()
        assert entry.process is not None
        held.append(take_fd(entry.process.pid, 1))

    try:
        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(hold_its_stdout)
                await drive_worker(entry, job, log_path=tmp_path / "state" / "w.log")
        assert held and held[0] >= 0, "the worker's stdout could not be taken"
        assert (entry.status, entry.result) == ("completed", "done after a while")
    finally:
        for fd in held:
            if fd >= 0:
                os.close(fd)
    assert wait_until(lambda: entry.process is not None and entry.process.returncode is not None, 5)
