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
import sys
import time
from typing import NoReturn

CLONE_NEWPID = 0x20000000
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PR_SET_PDEATHSIG = 1
MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
END_LIMIT_S = 60.0
"""How long the namespace's processes may take to die once its init is killed."""
DYING_S = 10.0
"""How long an init whose pipes closed may take to be gone (its namespace emptied)."""

_libc = ctypes.CDLL(None, use_errno=True)


def start(ask: int, answer: int) -> tuple[int | None, str | None]:
    """In the holder, its world ready: make the namespace and fork its init, which serves
    `ask`/`answer` (the launcher's pipes: see `Init`). (The init's pid, or None; why there
    is no namespace or no fresh /proc, or None.)"""
    if _libc.unshare(CLONE_NEWPID) != 0:
        code = ctypes.get_errno()
        return None, f"no PID namespace (unshare: {os.strerror(code)})"
    alive_r, alive_w = os.pipe()  # the holder keeps alive_w: the init ends at its EOF
    said_r, said_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(alive_w)
        os.close(said_r)
        _init(alive_r, said_w, ask, answer, fresh_proc=True)
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


def _init(
    alive: int | None, said: int | None, ask: int, answer: int, *, fresh_proc: bool
) -> NoReturn:
    try:
        _libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        # The orphans of the namespace are adopted here: the kernel reaps them at once.
        signal.signal(signal.SIGCHLD, signal.SIG_IGN)
        # No handler a command's signal could run (an init ignores the default ones).
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):  # the launcher's pipes to the holder stay the holder's
            os.dup2(null, fd)
        os.close(null)
        problem = _fresh_proc() if fresh_proc else None
        if said is not None:
            os.write(said, json.dumps({"proc": problem}).encode())
            os.close(said)
        if not fresh_proc:  # root's: a /proc of its own, for its sweep alone
            problem = _private_proc()
        _serve(ask, answer, alive, own_proc=problem is None)
    finally:
        os._exit(0)


def _serve(ask: int, answer: int, alive: int | None, *, own_proc: bool) -> None:
    """Until the holder (`alive`) or the launcher (`ask`) is gone: each byte asked is a
    sweep of the namespace, answered by one byte once it holds no process but this one."""
    watched = [ask] if alive is None else [ask, alive]
    while True:
        readable, _, _ = select.select(watched, [], [])
        if alive in readable and not os.read(alive, 1):
            return
        if ask in readable:
            if not os.read(ask, 1):
                return
            os.write(answer, b"1" if _sweep(own_proc) else b"0")


def _sweep(own_proc: bool, limit_s: float = END_LIMIT_S) -> bool:
    """SIGKILL every process of this namespace but its init (this one), until none is
    left; whether none is, within `limit_s`. `kill(-1)` from a namespace's init reaches
    all of that namespace and nothing outside it, in one pass a fork cannot slip through
    (a child forked by a process with a fatal signal pending is never born). A process
    killed counts until it is reaped, so "none signalled" is "all gone"; a zombie whose
    parent is outside (a command's leader, the launcher's to reap) runs nothing, so where
    this init sees its namespace's own /proc (`own_proc`), zombies alone are gone too."""
    deadline = time.monotonic() + limit_s
    pause = 0.0005
    while True:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            return True
        except PermissionError:  # a process this init may not signal: not ours to end
            return False
        if own_proc and _zombies_only():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def _zombies_only() -> bool:
    """Whether every process of this /proc but pid 1 is a zombie (or gone)."""
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == "1":
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # gone meanwhile
        if state not in (b"Z", b"X"):
            return False
    return True


def _private_proc() -> str | None:
    """A mount namespace of this init's own with this namespace's /proc (the commands keep
    theirs); None, or what failed."""
    if _libc.unshare(CLONE_NEWNS) != 0:
        return f"unshare: {os.strerror(ctypes.get_errno())}"
    private = MS_REC | MS_PRIVATE
    if _libc.mount(b"none", b"/", None, ctypes.c_ulong(private), None) != 0:
        return f"mount: {os.strerror(ctypes.get_errno())}"
    return _fresh_proc()


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


def pidns_line(problem: str) -> str:
    """What a run says, once, when its commands get no PID namespace or /proc of their own."""
    if problem.startswith("/proc"):
        return f"{problem}: commands see every process, under pids they cannot signal"
    return f"{problem}: a process a command leaves may outlive the session"


class Init:
    """The launcher's end of a namespace's init: `sweep` after each command, `end` at the
    session's end (or the holder's death)."""

    def __init__(self, pid: int, pidfd: int, ask: int, answer: int, *, child: bool = False) -> None:
        self.pid, self.pidfd, self._ask, self._answer = pid, pidfd, ask, answer
        self._child = child  # this process's own child (root's): reaped once gone

    def sweep(self, limit_s: float = END_LIMIT_S) -> bool:
        """Kill every process of the namespace but the init and wait (bounded) until they
        are gone; whether they are (True when the init is gone: the namespace went with it;
        False when it does not answer)."""
        try:
            os.write(self._ask, b"k")
            readable, _, _ = select.select([self._answer], [], [], limit_s + 5.0)
            if readable and os.read(self._answer, 1) == b"1":
                return True
        except OSError:
            pass
        # A dead init's exit completes only once every process of its namespace is gone
        # (its pipes close before: give a dying one a moment).
        gone, _, _ = select.select([self.pidfd], [], [], DYING_S)
        return bool(gone)

    def end(self, limit_s: float = END_LIMIT_S) -> bool:
        """Kill the init, so the whole namespace, and wait until it is gone."""
        gone = end(self.pidfd, limit_s)
        if gone and self._child:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, os.WNOHANG)
        return gone

    def close(self) -> None:
        """Close the launcher's descriptors (the init ends at the ask pipe's EOF)."""
        for fd in (self._ask, self._answer, self.pidfd):
            with contextlib.suppress(OSError):
                os.close(fd)


def start_here() -> Init | str:
    """Root's confined thread, before it drops its capabilities: make the commands' PID
    namespace for the processes this thread starts, and start its init there (the first
    of them, so pid 1). The init, or why there is none."""
    import subprocess

    if _libc.unshare(CLONE_NEWPID) != 0:
        return f"no PID namespace (unshare: {os.strerror(ctypes.get_errno())})"
    theirs, ours = pipes()
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", __file__, *map(str, theirs)],
            pass_fds=theirs,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        pidfd = os.pidfd_open(process.pid)
    except OSError as exc:
        for fd in ours:
            os.close(fd)
        return f"no PID namespace (its init: {exc})"
    finally:
        for fd in theirs:
            os.close(fd)
    process.returncode = 0  # reaped by `Init.end`, not by Popen's bookkeeping
    return Init(process.pid, pidfd, *ours, child=True)


def pipes() -> tuple[tuple[int, int], tuple[int, int]]:
    """(ask, answer) pipes between the launcher and an init: the init's ends inheritable
    (to pass), the launcher's close-on-exec. ((init's ask, init's answer), (ours...))"""
    ask_r, ask_w = os.pipe2(os.O_CLOEXEC)
    answer_r, answer_w = os.pipe2(os.O_CLOEXEC)
    return (ask_r, answer_w), (ask_w, answer_r)


def main(argv: list[str]) -> int:
    """`python -I -S pidns.py ASK ANSWER`: root's init, started by its confined thread
    right after it made the commands' PID namespace (so it is pid 1 there)."""
    _init(None, None, int(argv[0]), int(argv[1]), fresh_proc=False)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
