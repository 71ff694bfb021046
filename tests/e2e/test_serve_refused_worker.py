"""A worker whose hand-over is refused says so: its run's error names the refusal, its own
log says why, and a refused spare is never handed a run.

The refusal is made real: a `sitecustomize` on the worker's PYTHONPATH starts a thread
before the worker asks (a foothold an attacker's tracer would keep), so the parent finds
`Threads: 2` and refuses, as it would a traced or dumpable worker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from launcher.backend.pool import SubAgent, drive_worker
from launcher.backend.protocol import Job
from launcher.backend.spare import REFUSED_ERROR, SparePool
from launcher.events import RunStatus

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/PID/status"),
]

LIMIT_S = 120.0

FOOTHOLD = """
import os, threading
_hold_r, _hold_w = os.pipe()
threading.Thread(target=os.read, args=(_hold_r, 1), daemon=True).start()
"""


@pytest.fixture
def foothold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FOOTHOLD)
    monkeypatch.setenv("PYTHONPATH", f"{site}:{Path(__file__).resolve().parents[2]}")


def _job(tmp_path: Path) -> Job:
    script = tmp_path / "s.yaml"
    script.write_text("steps:\n  - say: never said\n")
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return Job(prompt="go", model=f"scripted:{script}", workspace=str(workspace))


@pytest.mark.anyio
async def test_a_refused_workers_run_names_the_refusal(tmp_path: Path, foothold: None) -> None:
    job = _job(tmp_path)
    entry = SubAgent(id="refused", agent=job.agent, status=RunStatus.RUNNING)
    log = tmp_path / "state" / "w.log"
    log.parent.mkdir()
    with anyio.fail_after(LIMIT_S):
        await drive_worker(entry, job, log_path=log)
    assert not entry.result
    assert entry.error == REFUSED_ERROR  # before: "worker exited unexpectedly (status 2)"
    assert "its hand-over was refused" in log.read_text()


@pytest.mark.anyio
async def test_a_refused_spare_is_never_taken(tmp_path: Path, foothold: None) -> None:
    job = _job(tmp_path)
    pool = SparePool(workspace=Path(job.workspace), log_dir=tmp_path / "logs", count=1)
    await pool.start_now()
    (spare,) = pool._ready
    refused = spare.process.refused  # type: ignore[attr-defined]
    got = await anyio.to_thread.run_sync(refused.wait, LIMIT_S)
    assert got, "the spare's hand-over was answered"
    assert pool.take(job.workspace) is None
    with anyio.fail_after(LIMIT_S):
        await spare.process.wait()
    assert "its hand-over was refused" in spare.log_path.read_text()


SEALED_TASK = """
import os, sys
from launcher.engines.ray_node import start_sealed_worker
from launcher.procs.sealed import DriverKey
ws = sys.argv[1]
env = {"PATH": os.environ["PATH"], "HOME": ws, "SUBAGENT_HOME": ws + "/state"}
try:
    start_sealed_worker(ws, env, ws + "/w.log", DriverKey().public)
except ValueError as exc:
    print(exc, flush=True)
"""


def test_a_refused_sealed_worker_on_a_node_is_named(tmp_path: Path, foothold: None) -> None:
    # The Ray task's own start, in a process of its own (it turns itself non-dumpable); its
    # workspace apart from the foothold (a worker never reads code from its workspace).
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    run = subprocess.run(
        [sys.executable, "-c", SEALED_TASK, str(workspace)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    # Before: "the first line is not the started worker's key offer", read as a forgery.
    assert run.stdout.startswith("sealed hand-over refused: when the worker asked"), run.stdout


FLOOD_PARENT = """
import json, os, subprocess, sys
from launcher.procs.hidden import child_handover
os.environ["SUBAGENT_TEST_API_KEY"] = "sk-flood-0123456789"
handover = child_handover(channel=tuple(os.pipe()))
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], env=handover.env,
                         pass_fds=(handover.fd,), stdout=subprocess.PIPE, text=True)
handover.answer(child.pid)
out, _ = child.communicate(timeout=60)
print(json.dumps({"child": json.loads(out), "parent_refused": handover.refused.is_set()}))
"""

# What a process holding a copy of the child's inherited socket (taken in its dumpable
# moment) does: writes more bytes than the parent reads asks, before the child's own ask.
FLOOD_CHILD = """
import json, os, socket
from launcher.procs import hidden
fd = int(os.environ[hidden.HANDOVER_VAR].split(":")[1])
socket.socket(fileno=os.dup(fd)).send(b"!" * hidden.ASKS_LIMIT)
hidden.restore()
print(json.dumps({"refused": hidden.refused(), "key": os.environ.get("SUBAGENT_TEST_API_KEY")}))
"""


def test_a_hand_over_starved_by_another_writer_is_named_refused_on_both_sides() -> None:
    run = subprocess.run(
        [sys.executable, "-c", FLOOD_PARENT, FLOOD_CHILD],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        cwd="/",
        check=False,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    # Before: neither side knew (the child ran on with /dev/null as its channel).
    assert got == {"child": {"refused": True, "key": None}, "parent_refused": True}
