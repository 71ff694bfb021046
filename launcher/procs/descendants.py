"""Linux /proc bookkeeping for the subreaper sweep: which processes descend from the
launcher, including ones that left their group with setsid() (stdlib only)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Stat:
    """The /proc/PID/stat fields the sweep needs."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    start: int  # in clock ticks since boot: with the pid, names one process for ever
    zombie: bool = False


def read_stat(pid: int, *, zombies: bool = False) -> Stat | None:
    """One process's stat, or None when it is gone (or a zombie, unless `zombies`: a zombie
    has nothing left to kill, but still tells which session and group it was in)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is parenthesised and may hold spaces or parentheses itself.
    fields = text.rsplit(")", 1)[1].split()
    zombie = fields[0] in ("Z", "X")
    if zombie and not zombies:
        return None
    return Stat(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]), zombie)


def all_stats() -> list[Stat]:
    """Every live process we can see."""
    out = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            stat = read_stat(int(entry.name))
            if stat is not None:
                out.append(stat)
    return out


def child_pids(pid: int) -> list[int] | None:
    """`pid`'s children, from each of its threads' /proc children list: one small read, so
    a process that re-forks every few milliseconds is still caught alive. None where the
    kernel has no such list (then walk all of /proc)."""
    out: list[int] = []
    try:
        tasks = list((PROC / str(pid) / "task").iterdir())
    except OSError:
        return [] if (PROC / "self" / "task").exists() else None
    for task in tasks:
        try:
            out.extend(int(p) for p in (task / "children").read_text().split())
        except FileNotFoundError:
            if not (task / "stat").exists():
                continue  # the thread ended
            return None
        except OSError:
            continue
    return out


def children_of(stats: list[Stat]) -> dict[int, list[Stat]]:
    """Each parent pid's live children."""
    children: dict[int, list[Stat]] = {}
    for stat in stats:
        children.setdefault(stat.ppid, []).append(stat)
    return children


def subtree(roots: list[Stat], children: dict[int, list[Stat]], skip: set[int]) -> list[Stat]:
    """`roots` and everything below them, except the pids in `skip` (and their subtrees)."""
    seen: dict[int, Stat] = {}
    while roots:
        stat = roots.pop()
        if stat.pid in seen or stat.pid in skip:
            continue
        seen[stat.pid] = stat
        roots.extend(children.get(stat.pid, []))
    return list(seen.values())


def below(pid: int, skip: set[int], *, zombies: bool = False) -> list[Stat]:
    """Every descendant of `pid` (not `pid` itself), the pids in `skip` and theirs aside."""
    if child_pids(pid) is None:
        stats = all_stats()
        return subtree(list(children_of(stats).get(pid, [])), children_of(stats), skip)
    seen: dict[int, Stat] = {}
    todo = [pid]
    while todo:
        parent = todo.pop()
        for child in child_pids(parent) or []:
            if child in seen or child in skip:
                continue
            stat = read_stat(child, zombies=zombies)
            if stat is not None:
                seen[child] = stat
                todo.append(child)
    return list(seen.values())


KILL_PASSES_S = 2.0
"""After the launcher died: how long to keep sweeping for processes forked mid-sweep."""
PASS_PAUSE_S = 0.02
QUIET_PASSES = 3
"""Passes in a row that find nothing before the sweep believes it."""


class Record:
    """Every process the launcher started or adopted, kept across scans: once the launcher
    is gone they re-parent to init, and only this record still knows they were ours.

    The launcher is a child subreaper, so whatever leaves its process group or session
    (setsid, a double fork, a daemon) is still its descendant until it is killed. The
    record keeps each one's (pid, start time), and the sessions and groups they belong to:
    a process that re-forks faster than the scan runs is found again by those.
    """

    def __init__(self) -> None:
        self.known: dict[int, int] = {}  # pid -> start time
        self.sessions: set[int] = set()
        self.groups: set[int] = set()
        self.since = 0  # the launcher's start: nothing older was ever ours

    def scan(self, launcher: int) -> None:
        """Record every descendant of `launcher` (this process, the watchdog, aside)."""
        own = read_stat(launcher)
        if own is None:
            return  # the launcher is gone: its orphans are nobody's descendants now
        me = os.getpid()
        self.since = own.start
        # Zombies too: a re-forking process's dead generations name its session.
        found = below(launcher, {me}, zombies=True)
        for pid, start in list(self.known.items()):
            if (read_stat(pid) or Stat(0, 0, 0, 0, -1)).start != start:
                del self.known[pid]  # gone (or its pid reused)
        # An id with no member left can only come back as another process's (pid reuse).
        live = all_stats()
        self.sessions &= {s.sid for s in live}
        self.groups &= {s.pgid for s in live}
        mine = {own.sid, own.pgid, me}  # the user's terminal session is not ours to end
        for stat in found:
            if not stat.zombie:
                self.known[stat.pid] = stat.start
            self.sessions |= {stat.sid} - mine
            self.groups |= {stat.pgid} - mine

    def _targets(self, zombies: set[int]) -> list[Stat]:
        """Live processes to kill, plus (as zombies, added to `zombies`) any new dead one in
        a recorded session: a sign that something there is still forking."""
        me = os.getpid()
        out = []
        for entry in PROC.iterdir():
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            s = read_stat(int(entry.name), zombies=True)
            if s is None or not (
                self.known.get(s.pid) == s.start
                or (s.start >= self.since and (s.sid in self.sessions or s.pgid in self.groups))
            ):
                continue
            if not s.zombie:
                out.append(s)
            elif s.pid not in zombies:
                zombies.add(s.pid)
                out.append(s)
        return out

    def kill(self, limit_s: float = KILL_PASSES_S) -> None:
        """SIGKILL every recorded process that is still the one recorded, and every process
        since in a recorded session or group; again until passes find none (bounded)."""
        deadline = time.monotonic() + limit_s
        zombies: set[int] = set()
        quiet = 0
        # A walk of /proc can miss a process that re-forks faster than the walk: only
        # several quiet passes in a row mean nothing is left.
        while quiet < QUIET_PASSES and time.monotonic() < deadline:
            targets = self._targets(zombies)
            quiet = 0 if targets else quiet + 1
            for stat in targets:
                with contextlib.suppress(OSError):
                    os.kill(stat.pid, signal.SIGKILL)
            time.sleep(PASS_PAUSE_S)
