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
import tempfile
from pathlib import Path

import pytest

from launcher.engines.ray_node import _is_own_offer
from launcher.procs.sealed import SEAL_KEY_OP
from tests.unprivileged_python import python_as_other_than_root

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


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl/pidfd are Linux")
def test_a_same_user_process_takes_none_of_the_tasks_sockets() -> None:
    python = python_as_other_than_root()
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
import ctypes, json, os, select, socket, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
log_path, marker, limit, flag = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
count = int(sys.argv[5]) if len(sys.argv) > 5 else 1
lock = threading.Lock()
def log(**entry):
    with lock, open(log_path, "a") as out:
        out.write(json.dumps(entry) + "\\n")
def link(pid, fd):
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return ""
def forge(sock_or_fd):
    end = {"type": "agent_end", "status": "completed", "result": "FORGED"}
    line = (json.dumps({**end, "usage": {}, "error": None}) + "\\n").encode()
    if isinstance(sock_or_fd, socket.socket):
        sock_or_fd.sendall(line)
    else:
        os.write(sock_or_fd, line)
    log(forged=True)
def grab(pid):
    # Its hand-over socket, seen now: still the same once fds 0 and 1 are taken means they
    # were taken before the worker pulled its hand-over (what a process without
    # CAP_SYS_PTRACE can: the worker is non-dumpable from then on).
    try:
        environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
        pull = int([v for v in environ if v.startswith(b"SUBAGENT_SECRETS_FD=")][0].split(b":")[-1])
    except (OSError, IndexError, ValueError):
        log(late=pid)
        return
    handover = link(pid, pull)
    pfd = os.pidfd_open(pid)
    got = {}
    for fd in (0, 1):
        if (dup := libc.syscall(438, pfd, fd, 0)) >= 0:
            got[fd] = dup
    if not handover or link(pid, pull) != handover or len(got) < 2:
        # Taken after it turned non-dumpable (root may): let go, as a non-root process
        # never had them (a kept copy would hold the run's stream open).
        for dup in got.values():
            os.close(dup)
        log(late=pid)
        return
    kinds = {fd: os.readlink(f"/proc/self/fd/{dup}") for fd, dup in got.items()}
    log(worker=pid, kinds=sorted(kinds.values()))
    if kinds[1].startswith("pipe:"):  # a local worker's: nothing to peek
        time.sleep(1)
        forge(got[1])
        return
    if not kinds[0].startswith("socket:") or not kinds[1].startswith("socket:"):
        for dup in got.values():
            os.close(dup)
        return
    down, up = socket.socket(fileno=got[0]), socket.socket(fileno=got[1])
    seen, last, forged = b"", b"", False
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and not select.select([pfd], [], [], 0)[0]:
        try:
            seen = down.recv(1 << 20, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            seen = b""
        if not seen:
            time.sleep(0.002)
            continue
        if seen != last:
            log(peeked=seen.decode("utf-8", "replace"))
            last = seen
        if b'"sealed"' in seen and not forged:
            forge(up)
            forged = True
    # The worker is gone, but the copy of its stdout kept here holds the channel open: a
    # forged final line after its own comes last.
    forge(up)
log(ready=True)
seen, threads = set(), []
deadline = time.monotonic() + limit
while time.monotonic() < deadline and len(seen) < count:
    for p in os.listdir("/proc"):
        if not p.isdigit() or p in seen:
            continue
        try:
            cmd = open(f"/proc/{p}/cmdline", "rb").read().split(b"\\0")
            if b"launcher.backend.worker" not in cmd or flag.encode() not in cmd:
                continue
            if not os.readlink(f"/proc/{p}/cwd").startswith(marker):
                continue
        except OSError:
            continue
        seen.add(p)
        threads.append(threading.Thread(target=grab, args=(int(p),)))
        threads[-1].start()
    time.sleep(0.0005)
for thread in threads:
    thread.join()
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


LOCAL_TASK = """
import json, os, sys
from pathlib import Path
import anyio
from launcher.backend import protocol
from launcher.backend.protocol import Job
from launcher.backend.spare import start_worker
ws = sys.argv[1]
os.environ.update(HOME=ws, SUBAGENT_HOME=ws + "/state")
script = os.path.join(ws, "s.yaml")
with open(script, "w") as out:
    out.write(json.dumps({"steps": [{"sleep": 3, "say": "honest"}]}))
async def main():
    worker = await start_worker(ws, Path(ws) / "log" / "w.log", spare=True, lean=True)
    job = Job(prompt="p", model=f"scripted:{script}", workspace=ws)
    await worker.stdin.send(job.to_line())
    await worker.stdin.send(protocol.encode({"op": "steer", "message": "private follow-up"}))
    rest = b""
    async for chunk in worker.stdout:
        *lines, rest = (rest + chunk).split(b"\\n")
        for raw in lines:
            line = protocol.decode(raw)
            if line and line.get("type") == "agent_end":
                print(json.dumps(line), flush=True)
                await worker.stdin.aclose()
                await worker.wait()
                return
anyio.run(main)
"""


def _taken(entries: list[dict[str, object]]) -> set[str]:
    """What the grab's log says it took of the workers' fds 0 and 1 in their dumpable moment."""
    return {str(kind) for e in entries for kind in list(e.get("kinds") or [])}  # type: ignore[call-overload]


def _log_entries(path: Path) -> list[dict[str, object]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl/pidfd are Linux")
def test_a_same_user_process_cannot_keep_the_workers_channel() -> None:
    """A process of the user that takes the worker's fds 0 and 1 in its dumpable moment
    (after execve, before restore) holds nothing of its channel: it reads neither the box
    nor a later steer, and its forged agent_end is not the run's."""
    entries = _grabbed_run(GRABBED_TASK, "--sealed")
    peeked = "".join(str(e.get("peeked", "")) for e in entries)
    assert "follow-up" not in peeked, entries
    assert "sealed" not in peeked, entries


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl/pidfd are Linux")
def test_a_same_user_process_cannot_keep_a_local_spares_channel() -> None:
    """The same for serve's local workers: a spare is a fresh execve too."""
    _grabbed_run(LOCAL_TASK, "--spare")


def _grabbed_run(task_script: str, flag: str) -> list[dict[str, object]]:
    """Runs `task_script` (a worker started with `flag`, its run's first agent_end printed)
    beside a process that takes the worker's fds 0 and 1 in its dumpable moment; checks the
    run's end is the worker's and what it took is no end of the channel. The grab's log."""
    import time

    python = python_as_other_than_root()
    ws = Path(tempfile.mkdtemp(prefix="raylines-"))
    try:
        ws.chmod(0o777)
        log = ws / "grab.log"
        grab = subprocess.Popen(
            [*python, "-c", GRAB, str(log), str(ws), str(LIMIT_S), flag],
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
                [*python, "-c", task_script, str(ws)],
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
        assert end["status"] == "completed", end
        assert end["result"] == "honest", end
        # Whatever it took in that moment is no end of the channel (/dev/null).
        assert _taken(entries) <= {os.devnull}, entries
        return entries
    finally:
        shutil.rmtree(ws, ignore_errors=True)
