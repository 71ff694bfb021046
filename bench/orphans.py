"""Orphan checks: is a pid still running, and reaping what a benchmark left behind."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state not in ("Z", "X")
    except (OSError, IndexError):
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def read_pids(pidfile: Path) -> list[int]:
    """The pids a fast stub wrote with `--pidfile` (server first, then its grandchild)."""
    try:
        return [int(p) for p in pidfile.read_text().split()]
    except (OSError, ValueError):
        return []


def reap(pids: list[int]) -> None:
    """SIGKILL pids this benchmark started and found still running."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
