"""Linux /proc bookkeeping for the subreaper sweep: which processes descend from a
session's guarded groups, including ones that left them with setsid() (stdlib only)."""

from __future__ import annotations

import contextlib
import os
import signal
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


def read_stat(pid: int) -> Stat | None:
    """One process's stat, or None when it is gone (or a zombie: nothing left to kill)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # The command name is parenthesised and may hold spaces or parentheses itself.
    fields = text.rsplit(")", 1)[1].split()
    if fields[0] in ("Z", "X"):
        return None
    return Stat(pid, int(fields[1]), int(fields[2]), int(fields[3]), int(fields[19]))


def all_stats() -> list[Stat]:
    """Every live process we can see."""
    out = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            stat = read_stat(int(entry.name))
            if stat is not None:
                out.append(stat)
    return out


class Record:
    """The session's processes seen so far, kept across scans: once the launcher is gone
    they re-parent to init, and only this record still knows they were ours."""

    def __init__(self) -> None:
        self.known: dict[int, int] = {}  # pid -> start time

    def scan(self, launcher: int, guarded: set[int]) -> None:
        """Record every descendant of a guarded group's leader, and every orphan the
        launcher adopted that is in a session of its own making (escaped by setsid)."""
        with contextlib.suppress(RuntimeError):  # `guarded` changed under us: next scan
            guarded = set(guarded)
        stats = all_stats()
        me = os.getpid()
        own = read_stat(launcher)
        children: dict[int, list[Stat]] = {}
        for stat in stats:
            children.setdefault(stat.ppid, []).append(stat)
        roots = [s for s in stats if s.pid in guarded or self.known.get(s.pid) == s.start]
        for stat in children.get(launcher, []):
            foreign_session = own is not None and stat.sid not in (stat.pid, own.sid)
            if stat.pid != me and foreign_session:
                roots.append(stat)  # a double fork's grandchild, adopted by the launcher
        seen: dict[int, int] = {}
        while roots:
            stat = roots.pop()
            if stat.pid in seen or stat.pid in (me, launcher):
                continue
            seen[stat.pid] = stat.start
            roots.extend(children.get(stat.pid, []))
        for pid, start in list(self.known.items()):
            if pid not in seen and (read_stat(pid) or Stat(0, 0, 0, 0, -1)).start != start:
                del self.known[pid]  # gone (or its pid reused)
        self.known.update(seen)

    def kill(self) -> None:
        """SIGKILL every recorded process that is still the one recorded."""
        for pid, start in self.known.items():
            stat = read_stat(pid)
            if stat is not None and stat.start == start:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
