"""An unprivileged launcher's commands start inside the holder's namespaces from the
session's fork server: with no capability at all (the user namespace's full bounding set
emptied), holding no handle on the namespaces or the server, unable to reach or steer the
holder or the server; a holder killed mid-session neither frees the next command nor
hangs it, and a killed server is an error result, never a hang nor a command outside."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from launcher.tools.sandbox import mechanism_problem
from tests.e2e.conftest import parse_events
from tests.e2e.spawn_support import write_config
from tests.e2e.test_sandbox_attrs_unprivileged import SHELL_AGENT, _run_as_user
from tests.e2e.test_sandbox_protected import holder_problem
from tests.e2e.unprivileged import NOBODY, shared_dir, user_prefix

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(mechanism_problem() is not None, reason=f"{mechanism_problem()}"),
]

RUN_LIMIT_S = 120.0
WAIT_S = 60.0

# Finds this session's holder (its command line names the workspace) and the fork server
# (this command's parent), then tries every way at them a command of the same user has:
# signals, their namespace, memory, environment and descriptor files (the server's socket
# among them), entering their namespaces, ptrace, and a pidfd's descriptor theft.
REACH = """
import ctypes, os, signal, sys
ws = os.getcwd()
targets = []
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            line = open(f"/proc/{d}/cmdline", "rb").read().decode(errors="replace")
        except OSError:
            continue
        if "privileges.py" in line and ws in line:
            targets.append(("holder", int(d)))
        if "forkserver.py" in line and int(d) == os.getppid():
            targets.append(("server", int(d)))
print("targets", " ".join(sorted(name for name, _ in targets)))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for name, pid in targets:
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        try:
            os.kill(pid, sig)
            print(name, "signal", int(sig), "delivered")
        except OSError as exc:
            print(name, "signal", int(sig), "refused", exc.errno)
    for entry in ("ns/user", "ns/mnt", "mem", "environ", "fd/0", "fd/3"):
        try:
            fd = os.open(f"/proc/{pid}/{entry}", os.O_RDONLY)
        except OSError as exc:
            print(name, entry, "refused", exc.errno)
            continue
        print(name, entry, "opened", "setns", libc.setns(fd, 0))
    print(name, "ptrace", libc.ptrace(16, pid, 0, 0), ctypes.get_errno())  # PTRACE_ATTACH
    pidfd = os.pidfd_open(pid)
    got = libc.syscall(438, pidfd, 3, 0)  # pidfd_getfd: the server's socket
    print(name, "pidfd_getfd", got, ctypes.get_errno())
"""


def _ready() -> list[str]:
    prefix, why_not = user_prefix()
    if why_not is not None:
        pytest.skip(why_not)
    problem = holder_problem()
    if problem is not None:
        pytest.skip(f"no holder namespace for an unprivileged launcher: {problem}")
    return prefix


def _world() -> Path:
    root = shared_dir()
    for d in ("ws", "state", "home", "outside"):
        (root / d).mkdir()
    (root / "outside" / "victim").write_text("x")
    return root


def test_an_unprivileged_command_holds_no_capability_nor_namespace_handle() -> None:
    """Entering a user namespace hands the bounding set back in full; it is emptied before
    exec, and the namespace descriptors stay the launcher's (close-on-exec)."""
    prefix = _ready()
    root = _world()
    try:
        out = _run_as_user(
            root,
            prefix,
            [
                "grep -E '^(CapBnd|CapEff|CapPrm|NoNewPrivs)' /proc/self/status",
                "for f in /proc/self/fd/*; do readlink $f; done; echo listed",
                f"chmod 777 {root}/outside/victim; echo chmod $?",
            ],
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert len(out) == 3, out
    assert "CapBnd:\t0000000000000000" in out[0], out[0]
    assert "CapEff:\t0000000000000000" in out[0] and "NoNewPrivs:\t1" in out[0], out[0]
    assert "listed" in out[1] and "user:[" not in out[1] and "mnt:[" not in out[1], out[1]
    assert out[2].rstrip().endswith("chmod 1"), out[2]


def test_a_command_cannot_reach_nor_steer_the_holder_or_the_server() -> None:
    """The holder is outside the commands' Landlock domain; the server shares it, and is
    held by its own seccomp filter and by being non-dumpable: every attempt is refused,
    and the next command still starts, read-only outside. In the commands' own PID
    namespace neither is in sight: only its init, a fork of the holder (pid 1), which
    refuses them all the same."""
    prefix = _ready()
    root = _world()
    try:
        (root / "ws" / "reach.py").write_text(REACH)
        victim = root / "outside" / "victim"
        out = _run_as_user(
            root,
            prefix,
            ["python3 reach.py", f"chmod 777 {victim}; echo chmod $?; echo alive"],
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert len(out) == 2, out
    found = out[0].split("\n", 1)[0].split()[1:]
    # Found: the attempts were real (the holder: its fork, the namespace's init).
    assert found in (["holder", "server"], ["holder"]), out[0]
    assert "delivered" not in out[0] and "opened" not in out[0], out[0]
    for name in found:
        assert out[0].count(f"{name} signal") == 2, out[0]
        assert f"{name} ptrace -1 1" in out[0], out[0]  # EPERM
        assert f"{name} pidfd_getfd -1" in out[0], out[0]
    assert out[0].count("refused") == 8 * len(found), out[0]
    assert "chmod 1" in out[1] and "alive" in out[1], out[1]


def test_a_killed_holder_ends_the_commands_and_neither_frees_nor_hangs_the_next() -> None:
    """The commands' PID namespace dies with its holder: the running command ends with it,
    and the next one is an error result naming why, in time, never a command outside."""
    out = _kill_mid_session(_holders_of)
    assert len(out) == 2 and "waited" not in out[0], out
    assert "PID namespace has ended" in out[1] and "chmod" not in out[1], out[1]


def test_a_killed_fork_server_is_an_error_result_not_a_hang() -> None:
    """The server killed under a running command: that call and the next end as error
    results naming it, in time, and nothing runs outside the namespaces."""
    out = _kill_mid_session(_server_of)
    assert len(out) == 2, out
    assert "fork server is gone" in out[0], out[0]
    assert "fork server is gone" in out[1] and "chmod" not in out[1], out[1]


def _kill_mid_session(find: Callable[[Path], list[int]]) -> list[str]:
    """A session whose first command waits while the test SIGKILLs what `find` names;
    its second command tries a chmod outside. The two results' texts."""
    prefix = _ready()
    root = _world()
    ws, victim = root / "ws", root / "outside" / "victim"
    wait_killed = (
        "touch started; for i in $(seq 1200); do [ -e killed ] && break; sleep 0.1;"
        " done; echo waited"
    )
    commands = [wait_killed, f"chmod 777 {victim}; echo chmod $?; pwd"]
    steps = [{"call": [{"tool": "bash", "args": {"command": c}}]} for c in commands]
    script = root / "script.json"
    script.write_text(json.dumps({"steps": [*steps, {"say": "done"}]}))
    config = write_config(root / "cfg", {}, {"shell": SHELL_AGENT})
    if os.geteuid() == 0:
        for path in [root, *root.rglob("*")]:
            os.lchown(path, NOBODY, NOBODY)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root / "home"),
        "SUBAGENT_HOME": str(root / "state"),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    argv = ["spawn", "--json", "--config-dir", str(config), "--model", f"scripted:{script}"]
    argv += ["--workspace", str(ws), "shell", "go"]
    run = subprocess.Popen(
        [*prefix, sys.executable, "-m", "launcher.cli", *argv],
        cwd=ws,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while not (ws / "started").exists():
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the first command never started"
            time.sleep(0.05)
        victims = find(ws)
        assert len(victims) == 1, victims
        os.kill(victims[0], signal.SIGKILL)
        while find(ws):
            assert time.monotonic() < deadline + WAIT_S, "it outlived SIGKILL"
            time.sleep(0.05)
        (ws / "killed").touch()
        stdout, stderr = run.communicate(timeout=RUN_LIMIT_S)
        assert victim.stat().st_mode & 0o777 != 0o777
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        shutil.rmtree(root, ignore_errors=True)
    assert run.returncode == 0, stderr
    return [str(e["content"]) for e in parse_events(stdout) if e["type"] == "tool_result"]


def _server_of(ws: Path) -> list[int]:
    """The live fork server that started the first command (its parent, seen from here:
    inside its PID namespace the command's parent is out of sight)."""
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().decode(errors="replace")
            if "echo waited" not in line or (entry / "cwd").resolve() != ws.resolve():
                continue
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            if "forkserver.py" in Path(f"/proc/{parent}/cmdline").read_text(errors="replace"):
                return [parent]
        except (OSError, ValueError):
            continue
    return []


def _holders_of(ws: Path) -> list[int]:
    """Live holder processes whose command line names `ws`: not the init of the commands'
    PID namespace (a fork of the holder, so the same command line; pid 1 in there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            line = (entry / "cmdline").read_bytes().decode(errors="replace")
            status = (entry / "status").read_text()
        except OSError:
            continue
        nspid = [ln.split()[1:] for ln in status.splitlines() if ln.startswith("NSpid:")]
        if "privileges.py" in line and str(ws) in line and nspid and len(nspid[0]) == 1:
            found.append(int(entry.name))
    return found
