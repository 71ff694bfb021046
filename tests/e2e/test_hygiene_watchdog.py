"""The session watchdog kills every group it still guards when the launcher's pipe closes
(however the launcher died), and leaves released groups alone."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from launcher.procs.watchdog import Watchdog
from tests.e2e.conftest import is_alive, wait_until

pytestmark = pytest.mark.e2e


def _group() -> subprocess.Popen[bytes]:
    """A process group of two: a shell and its `sleep` child."""
    return subprocess.Popen(
        ["sh", "-c", "sleep 300 & wait"], start_new_session=True, stdin=subprocess.DEVNULL
    )


def test_watchdog_kills_guarded_groups_and_spares_released_ones() -> None:
    guarded, released = _group(), _group()
    watchdog = Watchdog()
    try:
        watchdog.guard(guarded.pid)
        watchdog.guard(released.pid)
        watchdog.release(released.pid)
        watchdog.close()  # the pipe closes, as when the launcher is SIGKILLed

        assert guarded.wait(timeout=5) == -signal.SIGKILL
        assert wait_until(lambda: _group_gone(guarded.pid), 2.0)
        assert is_alive(released.pid)
    finally:
        for proc in (guarded, released):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _group_gone(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return True
    # Members may linger as zombies (nobody reaps orphans here): those count as gone.
    members = [
        int(p)
        for p in os.listdir("/proc")
        if p.isdigit() and _pgid_of(int(p)) == pgid and is_alive(int(p))
    ]
    return not members


def _pgid_of(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None
