"""Whether a stored session's process is still alive: a lock file its writer holds.

The process that writes a session holds an exclusive `flock` on `sessions/ID/running.lock`
until the session ends; the kernel drops it when that process dies, SIGKILL included. A
session stored as `running` whose lock nobody holds is shown as `interrupted`, and may be
resumed; one whose lock is held is refused a second writer. A resume takes the lock before
it reads the session (`claim`), and its writer adopts it: checking and then locking left
a gap in which every one of several concurrent resumes ran. Stdlib only (`log` reads it).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from launcher import runtime
from launcher.events import RunStatus
from launcher.flock import try_lock, wait_lock
from launcher.state import PRIVATE_FILE_MODE

LOCK_NAME = "running.lock"
INTERRUPTED = RunStatus.INTERRUPTED
"""The status `log` shows for a session left `running` by a process that is gone."""
ACQUIRE_WAIT_S = 0.5
ACQUIRE_PAUSE_S = 0.01
"""A `log` probing the lock holds it for microseconds: a writer retries for up to 0.5 s."""


def lock_path(home: Path, session_id: str) -> Path:
    return home / "sessions" / session_id / LOCK_NAME


class RunLock:
    """The writer's side: held from the session's first row to its end (or the process's)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self) -> bool:
        """Take the lock (or keep it); False if another live process holds it (it is writing
        this session)."""
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE_MODE)
        if not wait_lock(fd, ACQUIRE_WAIT_S, poll_s=ACQUIRE_PAUSE_S):
            os.close(fd)
            return False
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None


def claim(home: Path, session_id: str) -> RunLock | None:
    """Take the session's lock for this process's coming run of it; None if it is running."""
    lock = RunLock(lock_path(home, session_id))
    if not lock.acquire():
        return None
    runtime.current().store.claimed[lock.path] = lock
    return lock


def take_claimed(path: Path, held: runtime.Store) -> RunLock | None:
    """The lock this process claimed at `path`, handed to the session's writer (once)."""
    return held.claimed.pop(path, None)


def unclaim(lock: RunLock) -> None:
    """Give back a claimed lock whose run will not happen."""
    claimed = runtime.current().store.claimed
    if claimed.get(lock.path) is lock:
        del claimed[lock.path]
    lock.release()


def is_alive(home: Path, session_id: str) -> bool:
    """True when a live process holds the session's lock (it is running now)."""
    try:
        fd = os.open(lock_path(home, session_id), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        return not try_lock(fd, shared=True)
    except OSError:
        return False
    finally:
        os.close(fd)


def mark_interrupted(home: Path, rows: Iterable[dict[str, Any]]) -> None:
    """Rows stored as `running` whose process is gone get the status `interrupted`."""
    for row in rows:
        if row.get("status") == RunStatus.RUNNING and not is_alive(home, row["id"]):
            row["status"] = INTERRUPTED
