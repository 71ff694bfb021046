"""A Ray task's start of a `--sealed` worker (engines/ray_node.py), with real processes:
another process of the node's user can take none of the task's descriptors (the task is
non-dumpable before it makes a socket), and the task forwards only an offer that echoes
the nonce it handed its own worker."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

import pytest

from launcher.engines.ray_node import _is_own_offer
from launcher.procs.sealed import SEAL_KEY_OP

NOBODY = 65534
LIMIT_S = 120

TASK = """
import os, sys
from launcher.engines.ray_node import start_sealed_worker
from launcher.procs.sealed import DriverKey
ws = sys.argv[1]
env = {"PATH": os.environ["PATH"], "HOME": ws, "SUBAGENT_HOME": ws + "/state"}
proc, stdin, stdout, offer = start_sealed_worker(ws, env, ws + "/log/w.log", DriverKey().public)
print(os.getpid(), proc.pid, offer.decode().strip(), flush=True)
sys.stdin.readline()
stdin.close()
proc.wait()
"""

ATTACKER = """
import ctypes, json, os, sys
pid = int(sys.argv[1])
out = {}
try:
    os.listdir(f"/proc/{pid}/fd")
    out["fd_dir"] = "readable"
except PermissionError:
    out["fd_dir"] = "refused"
libc = ctypes.CDLL(None, use_errno=True)
pidfd = os.pidfd_open(pid)
taken, errors = [], set()
for fd in range(64):
    got = libc.syscall(438, pidfd, fd, 0)  # pidfd_getfd
    if got >= 0:
        taken.append(fd)
        os.close(got)
    else:
        errors.add(ctypes.get_errno())
out["taken"] = taken
out["errors"] = sorted(errors)
print(json.dumps(out), flush=True)
"""


def _as_other_than_root() -> list[str]:
    """A Python command line as this user; as root (whom no ptrace rule stops), as an
    unprivileged uid, with a system interpreter it may run and this tree on its path."""
    if os.geteuid() != 0:
        return [sys.executable]
    system = shutil.which("python3", path="/usr/bin:/bin")
    if shutil.which("setpriv") is None or system is None:
        pytest.skip("root without setpriv or a system python3: no unprivileged user to run as")
    paths = os.pathsep.join(
        [str(Path(__file__).resolve().parents[1]), sysconfig.get_paths()["purelib"]]
    )
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return [*drop, "env", f"PYTHONPATH={paths}", system]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl/pidfd are Linux")
def test_a_same_user_process_takes_none_of_the_tasks_sockets() -> None:
    python = _as_other_than_root()
    ws = Path(tempfile.mkdtemp(prefix="rayauth-"))
    try:
        ws.chmod(0o777)
        task = subprocess.Popen(
            [*python, "-c", TASK, str(ws)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ws,
        )
        assert task.stdin is not None and task.stdout is not None
        try:
            line = task.stdout.readline().decode()  # the worker started and offered
            assert line, task.stderr.read().decode() if task.stderr else ""
            task_pid, worker_pid, offer = line.split(" ", 2)
            assert json.loads(offer)["op"] == SEAL_KEY_OP
            probe = subprocess.run(
                [*python, "-c", ATTACKER, task_pid],
                capture_output=True,
                timeout=LIMIT_S,
                check=True,
            )
            seen = json.loads(probe.stdout)
            assert seen["fd_dir"] == "refused", seen
            assert seen["taken"] == [], seen
            assert seen["errors"] == [1], seen  # EPERM for each descriptor
            assert int(worker_pid) > 0
        finally:
            task.stdin.close()
            task.wait(timeout=LIMIT_S)
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def test_only_an_offer_echoing_the_nonce_is_the_workers() -> None:
    own = json.dumps({"op": SEAL_KEY_OP, "key": "k", "nonce": "n-1"}).encode()
    assert _is_own_offer(own, "n-1")
    for line in (
        json.dumps({"op": SEAL_KEY_OP, "key": "k"}).encode(),  # an intruder knows no nonce
        json.dumps({"op": SEAL_KEY_OP, "key": "k", "nonce": "n-2"}).encode(),
        json.dumps({"op": SEAL_KEY_OP, "key": "k", "nonce": 5}).encode(),
        json.dumps({"op": "steer", "nonce": "n-1"}).encode(),
        b"[]",
        b"not json",
        b"",
    ):
        assert not _is_own_offer(line, "n-1"), line
