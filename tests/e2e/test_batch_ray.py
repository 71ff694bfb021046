"""`subagent batch --engine ray` on a local Ray the batch starts: results, a retry, no leftovers."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.batch_support import need_ray, results, scripted_tasks, thinking, written
from tests.e2e.batch_support import workers as batch_workers
from tests.e2e.conftest import (
    Subagent,
    assert_all_gone,
    is_alive,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.e2e

RAY_LIMIT_S = 240.0
"""A local Ray starts in ~7 s here; six tasks plus one retried run well within this."""
KILL_LIMIT_S = 120.0


def ray_processes(tmpdir: Path) -> list[int]:
    """Live processes of the Ray started with RAY_TMPDIR=`tmpdir` (gcs_server, raylet, its
    workers, and anything else it started): they carry that variable or name the directory.
    Another Ray on the machine (another test's, a benchmark's) is not counted."""
    mark = str(tmpdir).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmd = (entry / "cmdline").read_bytes()
            env = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue  # gone, or not this user's
        if (b"RAY_TMPDIR=" + mark in env or mark + b"/" in cmd) and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


@pytest.fixture
def ray_tmpdir() -> Iterator[Path]:
    """A private RAY_TMPDIR, short: Ray's socket paths under it must fit in 107 bytes."""
    tmpdir = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    yield tmpdir
    shutil.rmtree(tmpdir, ignore_errors=True)


def test_six_tasks_on_local_ray_complete_and_leave_no_ray_process(
    tmp_path: Path, subagent: Subagent, ray_tmpdir: Path
) -> None:
    need_ray()
    config = write_config(tmp_path / "cfg", {})
    tasks = scripted_tasks(tmp_path, 6, sleep=1)
    out = tmp_path / "results.jsonl"
    run = subagent.run(
        "batch", str(tasks), "--config-dir", str(config), "--out", str(out),
        "--engine", "ray", "--jobs", "2", env={"RAY_TMPDIR": str(ray_tmpdir)},
        timeout=RAY_LIMIT_S,
    )  # fmt: skip
    assert run.code == 0, run.stderr
    assert (ray_tmpdir / "ray").is_dir()  # the batch's Ray lived here: its processes are known
    rows = results(out)
    assert sorted(r["id"] for r in rows) == [f"t{i}" for i in range(6)]
    assert {r["status"] for r in rows} == {"completed"}
    assert len(subagent.sessions()) == 6
    assert_all_gone([], tmp_path)
    deadline = time.monotonic() + 30
    while ray_processes(ray_tmpdir) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert ray_processes(ray_tmpdir) == []


def test_a_worker_killed_mid_task_is_retried_once_and_the_batch_completes(
    tmp_path: Path, subagent: Subagent
) -> None:
    need_ray()
    config = write_config(tmp_path / "cfg", {})
    # t0 thinks until it is killed; t1 answers at once. The kill waits on conditions only:
    # t1's result line (written after its worker exited, so every worker left is t0's)
    # and t0's session in its first turn.
    slow, quick = tmp_path / "slow.yaml", tmp_path / "quick.yaml"
    slow.write_text("steps:\n  - sleep: 3600\n    say: answer\n")
    quick.write_text("steps:\n  - say: answer\n")
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        json.dumps({"id": "t0", "prompt": "task 0", "model": f"scripted:{slow}"}) + "\n"
        + json.dumps({"id": "t1", "prompt": "task 1", "model": f"scripted:{quick}"}) + "\n"
    )  # fmt: skip
    out = tmp_path / "results.jsonl"
    batch = subagent.start(
        "batch", str(tasks), "--config-dir", str(config), "--out", str(out),
        "--engine", "ray", "--jobs", "2",
    )  # fmt: skip
    killed: int | None = None
    try:
        ready = wait_until(
            lambda: any(r.get("id") == "t1" for r in written(out)) and thinking(subagent, "task 0"),
            KILL_LIMIT_S,
        )
        assert ready, f"t1 did not end or t0 did not start: {written(out)}"
        (killed,) = batch_workers(tmp_path)
        # Its retry reads the script afresh: it must answer at once, not think for an hour.
        slow.write_text(quick.read_text())
        os.kill(killed, signal.SIGKILL)
        batch.wait(timeout=RAY_LIMIT_S)
    finally:
        if batch.poll() is None:
            batch.kill()
            batch.wait()
    stderr = batch.stderr.read() if batch.stderr else ""
    assert batch.returncode == 0, stderr
    rows = results(out)
    assert sorted(r["id"] for r in rows) == ["t0", "t1"]
    assert {r["status"] for r in rows} == {"completed"}
    # The killed run's session plus its retry's, plus the other task's.
    assert len(subagent.sessions()) == 3
    assert_all_gone([killed], tmp_path)
