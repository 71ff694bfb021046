"""A `--sealed` worker's channel ends with the worker on a Ray node too (engines/ray_node.py):
a copy of its stdout held by another process must not keep the task reading for ever."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfd_getfd is Linux"),
    pytest.mark.skipif(os.geteuid() != 0, reason="taking a non-dumpable worker's fd needs root"),
]

LIMIT_S = 120

TASK = """
import ctypes, os, sys
from launcher.engines.ray_node import start_sealed_worker
from launcher.procs.sealed import DriverKey
ws = sys.argv[1]
env = {"PATH": os.environ["PATH"], "HOME": ws, "SUBAGENT_HOME": ws + "/state"}
proc, stdin, stdout, offer = start_sealed_worker(ws, env, ws + "/log/w.log", DriverKey().public)
pidfd = os.pidfd_open(proc.pid)
held = ctypes.CDLL(None, use_errno=True).syscall(438, pidfd, 1, 0)  # pidfd_getfd: its stdout
assert held >= 0, "could not take the worker's stdout"
stdin.close()  # no box: the worker ends
rest = stdout.read()  # EOF once the worker is gone, though `held` is still open here
print("ended", proc.wait(), len(rest), flush=True)
"""


def test_a_held_copy_of_a_sealed_workers_stdout_does_not_hold_the_task(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", TASK, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("ended "), run.stdout
