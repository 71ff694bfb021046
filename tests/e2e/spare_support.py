"""Find serve's spare workers from outside, by process name and parent (as `ps` would)."""

from __future__ import annotations

from pathlib import Path

from launcher.backend.spare import SPARE_NAME, WARMING_NAME
from tests.e2e.conftest import is_alive


def process_name(pid: int) -> str | None:
    """/proc/PID/comm, or None when the process is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def is_spare(pid: int) -> bool:
    """Whether `pid` is a spare worker (still importing, or waiting for its job)."""
    return process_name(pid) in (SPARE_NAME, WARMING_NAME)


PPID_FIELD = 1
PGID_FIELD = 2
"""Positions in /proc/PID/stat after the parenthesised name: state, ppid, pgrp, ..."""


def _live_where(field: int, value: int) -> list[int]:
    """Live processes (zombies count as gone, as in conftest) whose stat `field` is `value`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[field]) == value and is_alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def children(parent: int) -> list[int]:
    """Live processes whose parent is `parent`."""
    return _live_where(PPID_FIELD, parent)


def group_members(pgid: int) -> list[int]:
    """Live processes of process group `pgid`."""
    return _live_where(PGID_FIELD, pgid)


def spares_of(parent: int, *, ready: bool = False) -> list[int]:
    """`parent`'s spare workers; `ready`: only those done importing, waiting for a job."""
    names = (SPARE_NAME,) if ready else (SPARE_NAME, WARMING_NAME)
    return [pid for pid in children(parent) if process_name(pid) in names]


def serve_pid(marker: Path) -> int | None:
    """The pid of the `subagent serve` whose command line names `marker` (its config dir)."""
    needle = str(marker).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"launcher.cli" in cmdline and b"serve" in cmdline and needle in cmdline:
            if is_alive(int(entry.name)):
                return int(entry.name)
    return None
