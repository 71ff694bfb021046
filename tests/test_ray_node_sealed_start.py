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


GRAB = """
import ctypes, json, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
log_path, marker, limit = sys.argv[1], sys.argv[2].encode(), float(sys.argv[3])
def log(**entry):
    with open(log_path, "a") as out:
        out.write(json.dumps(entry) + "\\n")
def ours(pid):
    # A worker of this test's task only: its parent's command line names the workspace.
    try:
        ppid = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1]
        return marker in open(f"/proc/{ppid}/cmdline", "rb").read()
    except (OSError, IndexError):
        return False
log(ready=True)
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read()
        except OSError:
            continue
        if b"launcher.backend.worker" not in cmd or b"--sealed" not in cmd or not ours(p):
            continue
        pfd = os.pidfd_open(int(p))
        got = {}
        t0 = time.monotonic()
        while time.monotonic() - t0 < 2 and len(got) < 2:
            for fd in (0, 1):
                if fd not in got and (r := libc.syscall(438, pfd, fd, 0)) >= 0:
                    got[fd] = r
        socks = {}
        for fd, dup in got.items():
            try:
                socks[fd] = socket.socket(fileno=dup)
            except OSError:
                os.close(dup)
        log(worker=int(p), taken=sorted(got), sockets=sorted(socks))
        if 0 not in socks or 1 not in socks:
            sys.exit(0)
        seen = b""
        t0 = time.monotonic()
        while time.monotonic() - t0 < 20 and b"follow-up" not in seen:
            try:
                seen = socks[0].recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
            except BlockingIOError:
                time.sleep(0.002)
                continue
            if seen:
                log(peeked=seen.decode("utf-8", "replace"))
            if b'"sealed"' in seen:
                forged = {"type": "agent_end", "status": "completed", "result": "FORGED"}
                socks[1].sendall((json.dumps(forged) + "\\n").encode())
                log(forged=True)
        sys.exit(0)
    time.sleep(0.0005)
"""

GRABBED_TASK = """
import json, os, sys, time
from launcher.backend import protocol
from launcher.backend.protocol import Job
from launcher.engines.ray_node import start_sealed_worker
from launcher.procs.sealed import DriverKey
ws = sys.argv[1]
script = os.path.join(ws, "s.yaml")
with open(script, "w") as out:
    out.write(json.dumps({"steps": [{"sleep": 3, "say": "honest"}]}))
env = {"PATH": os.environ["PATH"], "HOME": ws, "SUBAGENT_HOME": ws + "/state"}
key = DriverKey()
proc, stdin, stdout, offer = start_sealed_worker(ws, env, ws + "/log/w.log", key.public)
job = Job(prompt="p", model=f"scripted:{script}", workspace=ws).to_line().decode()
stdin.write(protocol.encode(key.seal(json.loads(offer), {"SUBAGENT_T_API_KEY": "sk-x"}, job)))
stdin.flush()
stdin.write(protocol.encode({"op": "steer", "message": "private follow-up"}))
stdin.flush()
for raw in stdout:
    line = protocol.decode(raw)
    if line and line.get("type") == "agent_end":
        print(json.dumps(line), flush=True)
        break
stdin.close()
proc.wait()
"""


def _log_entries(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl/pidfd are Linux")
def test_a_same_user_process_cannot_keep_the_workers_channel() -> None:
    """A process of the user that takes the worker's fds 0 and 1 in its dumpable moment
    (after execve, before restore) holds nothing of its channel: it reads neither the box
    nor a later steer, and its forged agent_end is not the run's."""
    import time

    python = _as_other_than_root()
    ws = Path(tempfile.mkdtemp(prefix="raylines-"))
    try:
        ws.chmod(0o777)
        log = ws / "grab.log"
        grab = subprocess.Popen(
            [*python, "-c", GRAB, str(log), str(ws), str(LIMIT_S)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=ws,
        )
        try:
            deadline = time.monotonic() + LIMIT_S
            while not _log_entries(log) and time.monotonic() < deadline:
                assert grab.poll() is None, grab.stderr.read() if grab.stderr else ""
                time.sleep(0.05)
            task = subprocess.run(
                [*python, "-c", GRABBED_TASK, str(ws)],
                capture_output=True,
                timeout=LIMIT_S,
                cwd=ws,
            )
            assert task.stdout, task.stderr.decode()
            end = json.loads(task.stdout.decode().splitlines()[0])
            grab.wait(timeout=LIMIT_S)
        finally:
            if grab.poll() is None:
                grab.kill()
                grab.wait()
        entries = _log_entries(log)
        assert any("worker" in e for e in entries), entries  # it found the worker
        # Whatever it took in that moment is no end of the channel (/dev/null).
        assert all(e.get("sockets") == [] for e in entries if "worker" in e), entries
        assert end["status"] == "completed", end
        assert end["result"] == "honest", end
        peeked = "".join(str(e.get("peeked", "")) for e in entries)
        assert "follow-up" not in peeked, entries
        assert "sealed" not in peeked, entries
    finally:
        shutil.rmtree(ws, ignore_errors=True)
