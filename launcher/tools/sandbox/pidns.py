"""The PID namespace an unprivileged launcher's commands run in, and its init.

The holder (privileges.py) makes it once its read-only world is ready and forks its init,
pid 1 in there; the fork server enters it, so every command, and all that a command
starts (double forks, `setsid`, a process that re-forks itself every few microseconds),
is in it. When the init dies the kernel SIGKILLs every process in the namespace, and the
init's own exit completes only once they are all gone: ending the session's processes is
one signal and one wait, with no scan for pids to race. The init dies with the holder
(parent-death signal, and the holder's pipe reaching EOF), so a launcher killed outright
ends the namespace too; the launcher and its watchdog kill it before any put-back.

The init also mounts a fresh /proc there (read-only, like every other mount of the
holder's world), so a command sees its own processes, under the pids it can signal;
where the kernel refuses it (a /proc partly hidden by the container), /proc stays the
host's. Stdlib only: the holder loads it by path.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import signal
from typing import NoReturn

CLONE_NEWPID = 0x20000000
PR_SET_PDEATHSIG = 1
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
END_LIMIT_S = 60.0
"""How long the namespace's processes may take to die once its init is killed."""

_libc = ctypes.CDLL(None, use_errno=True)


def start() -> tuple[int | None, str | None]:
    """In the holder, its world ready: make the namespace and fork its init. (The init's
    pid, or None; why there is no namespace or no fresh /proc, or None.)"""
    if _libc.unshare(CLONE_NEWPID) != 0:
        code = ctypes.get_errno()
        return None, f"no PID namespace (unshare: {os.strerror(code)})"
    alive_r, alive_w = os.pipe()  # the holder keeps alive_w: the init ends at its EOF
    said_r, said_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(alive_w)
        os.close(said_r)
        _init(alive_r, said_w)
    os.close(alive_r)
    os.close(said_w)
    try:
        said = os.read(said_r, 4096).decode(errors="replace")
    finally:
        os.close(said_r)
    if not said:
        return None, "no PID namespace (its init died at once)"
    problem = json.loads(said).get("proc")
    return pid, None if problem is None else f"/proc is the host's ({problem})"


def _init(alive: int, said: int) -> NoReturn:
    try:
        _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # The orphans of the namespace are adopted here: the kernel reaps them at once.
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the launcher's pipes to the holder stay the holder's
            os.dup2(null, fd)
        os.close(null)
        problem = _fresh_proc()
        os.write(said, json.dumps({"proc": problem}).encode())
        os.close(said)
        # The holder's end closes when it exits, however it dies.
        while os.read(alive, 1):
            pass
    finally:
        os._exit(0)


def _fresh_proc() -> str | None:
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    if _libc.mount(b"proc", b"/proc", b"proc", ctypes.c_ulong(flags), None) != 0:
        return f"mount: {os.strerror(ctypes.get_errno())}"
    return None


def end(pidfd: int, limit_s: float = END_LIMIT_S) -> bool:
    """Kill the namespace's init by its pidfd and wait (at most `limit_s`) until it, and so
    every process in the namespace, is gone; whether it is."""
    with contextlib.suppress(ProcessLookupError):
        signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    readable, _, _ = select.select([pidfd], [], [], limit_s)
    return bool(readable)
