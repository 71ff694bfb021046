"""`subagent batch` (local engine): workers started ahead of their task live only while
the batch does, however it ends, and leave nothing behind."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from launcher.backend.spare import LEAN_FLAG, SPARE_FLAG
from tests.e2e.batch_support import results, scripted_tasks
from tests.e2e.conftest import Subagent, assert_all_gone, is_alive, wait_until, write_config
from tests.e2e.spare_support import group_members, spares_of

pytestmark = pytest.mark.e2e

BATCH_LIMIT_S = 120.0
"""A few scripted tasks, each a Python worker, on a loaded 2-core box."""
UP_LIMIT_S = 60.0
"""How long a spare may take to be started and done importing."""
GONE_S = 10.0
"""How long a spare may take to go once the batch has ended."""


@pytest.mark.parametrize(
    ("ending", "code"),
    [("end", 0), ("SIGINT", 130), ("SIGTERM", 143), ("SIGKILL", -signal.SIGKILL)],
)
def test_spares_live_only_while_the_batch_does(
    tmp_path: Path, subagent: Subagent, ending: str, code: int
) -> None:
    config = write_config(tmp_path / "cfg", {})
    # Long enough that the batch is still running when its spares are looked at.
    sleep = 3 if ending == "end" else 120
    # Four: two running, and two still to come that the two spares wait for.
    tasks = scripted_tasks(tmp_path, 4, sleep=sleep)
    out = tmp_path / "r.jsonl"
    args = ("batch", str(tasks), "--config-dir", str(config), "--out", str(out), "--jobs", "2")
    batch = subagent.start(*args)
    try:
        # --jobs 2: two spares, one per slot, waiting beside the two running tasks (none
        # beyond the tasks still to come: test_engines_batch_end.py).
        assert wait_until(lambda: len(spares_of(batch.pid, ready=True)) == 2, UP_LIMIT_S)
        spares = spares_of(batch.pid)
        if ending != "end":
            batch.send_signal(getattr(signal, ending))
        batch.wait(timeout=BATCH_LIMIT_S)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    assert batch.returncode == code
    assert wait_until(lambda: not any(is_alive(p) for p in spares), GONE_S)
    assert all(group_members(p) == [] for p in spares)
    assert_all_gone(spares, tmp_path)
    if ending == "end":
        assert sorted(r["status"] for r in results(out)) == ["completed"] * 4


def test_a_batch_of_scripted_tasks_keeps_lean_spares(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(tmp_path / "cfg", {})
    tasks = scripted_tasks(tmp_path, 4, sleep=3)
    out = tmp_path / "r.jsonl"
    args = ("batch", str(tasks), "--config-dir", str(config), "--out", str(out), "--jobs", "2")
    batch = subagent.start(*args)
    try:
        assert wait_until(lambda: len(spares_of(batch.pid)) == 2, UP_LIMIT_S)
        argvs = [_argv(pid) for pid in spares_of(batch.pid)]
        batch.wait(timeout=BATCH_LIMIT_S)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    # A scripted run needs no HTTP client: its spares do not preload one.
    assert all(SPARE_FLAG in argv and LEAN_FLAG in argv for argv in argvs), argvs
    assert batch.returncode == 0
    assert sorted(r["status"] for r in results(out)) == ["completed"] * 4


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    except OSError:
        return []  # it ended in between: the assertion then names it
