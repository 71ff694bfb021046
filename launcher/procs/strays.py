"""The launcher's own sweep of what its sessions left behind, where no cgroup holds them.

Without a cgroup the launcher is a child subreaper: a process that leaves its group and
session (`setsid -f`, a double fork, a daemon such as a tmux server) is re-parented to the
launcher when its parent exits, never to init. So when the last session of this process
ends, every child of the launcher that it did not start on purpose (those are noted here
as they start) is such an orphan, and it is ended with everything below it. A launcher
killed outright cannot do this: its watchdog's record does it then (descendants.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

from launcher import runtime
from launcher.procs.descendants import QUIET_PASSES, Stat, below, read_stat

SWEEP_S = 2.0
"""How long the sweep keeps ending orphans that fork while it runs (a re-forking loop)."""
PAUSE_S = 0.005
PRUNE_AT = 256
"""Started children remembered before the gone ones are forgotten."""


def _held() -> runtime.Children:
    """This process's count of children started on purpose and of subreaping sessions."""
    return runtime.current().children


def note_child(pid: int) -> None:
    """`pid` was started on purpose (a server, a bash group, a worker, the watchdog)."""
    stat = read_stat(pid, zombies=True)  # one that failed at once is still ours to wait for
    if stat is not None:
        held = _held()
        with held.lock:
            held.started[pid] = stat.start
            if len(held.started) > PRUNE_AT:  # a long serve starts a worker per sub-agent
                _prune(held)


def _prune(held: runtime.Children) -> None:
    """Forget started children that are gone (a zombie is kept: its waiter reaps it)."""
    for pid, start in list(held.started.items()):
        if (read_stat(pid, zombies=True) or Stat(0, 0, 0, 0, -1)).start != start:
            del held.started[pid]


def session_opened() -> None:
    """A session of this process relies on the subreaper sweep."""
    held = _held()
    with held.lock:
        held.subreaping += 1


def session_closed() -> bool:
    """A session ended; True when it was the last one (then `sweep()`)."""
    held = _held()
    with held.lock:
        held.subreaping = max(0, held.subreaping - 1)
        return held.subreaping == 0


def _orphans() -> list[Stat]:
    me = os.getpid()
    held = _held()
    with held.lock:
        _prune(held)
        started = dict(held.started)
    # Everything below an on-purpose child is its own business (its group's ladder).
    return below(me, {p for p, start in started.items()})


def sweep(limit_s: float = SWEEP_S) -> list[int]:
    """SIGKILL every orphan this process adopted and all below it, again until none is
    left (bounded), then reap them; returns the pids ended."""
    deadline = time.monotonic() + limit_s
    ended: set[int] = set()
    quiet = 0
    # One quiet pass could have missed a process caught between two forks; a few cannot.
    while quiet < QUIET_PASSES and time.monotonic() < deadline:
        orphans = _orphans()
        quiet = 0 if orphans else quiet + 1
        for stat in orphans:
            with contextlib.suppress(OSError):
                os.kill(stat.pid, signal.SIGKILL)
            ended.add(stat.pid)
        if quiet == 0 or quiet < QUIET_PASSES:
            time.sleep(PAUSE_S)
    _reap(ended | _adopted_zombies(), deadline)
    return sorted(ended)


def _adopted_zombies() -> set[int]:
    """Orphans that died on their own while adopted: still ours to reap."""
    me = os.getpid()
    held = _held()
    with held.lock:
        started = set(held.started)
    return {s.pid for s in below(me, set(), zombies=True) if s.zombie and s.ppid == me} - started


def _reap(pids: set[int], deadline: float) -> None:
    """Collect the ended orphans that were our children (no zombie left behind); only
    these pids: the event loop waits for the children it started itself."""
    waiting = set(pids)
    while waiting and time.monotonic() <= deadline + PAUSE_S * 10:
        for pid in list(waiting):
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                waiting.discard(pid)  # not ours (a grandchild its own parent reaps)
                continue
            if done:
                waiting.discard(pid)
        if waiting:
            time.sleep(PAUSE_S)
