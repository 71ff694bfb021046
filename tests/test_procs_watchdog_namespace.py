"""The watchdog ends a PID namespace it was told of (`!PID`: its init) when the launcher
dies, and waits for it before anything else; a launcher that closed cleanly ends its
namespaces itself."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfd, Linux")

LIMIT_S = 60.0


def _watchdog_told(pid: int, *, clean: bool) -> None:
    lines = f"!{pid}\n" + (".\n" if clean else "")
    watchdog = subprocess.Popen(
        [sys.executable, "-P", "-m", "launcher.procs.watchdog"],
        stdin=subprocess.PIPE,
        start_new_session=True,
    )
    watchdog.communicate(lines.encode(), timeout=LIMIT_S)  # then EOF: the launcher is gone


def test_a_dead_launchers_namespace_init_is_killed_and_waited_for() -> None:
    init = subprocess.Popen(["sleep", "300"])
    try:
        _watchdog_told(init.pid, clean=False)
        # The watchdog exited only once the init was gone (it waits on its pidfd).
        assert init.poll() == -signal.SIGKILL
    finally:
        if init.poll() is None:
            init.kill()
            init.wait()


def test_a_clean_launcher_ends_its_namespace_itself() -> None:
    init = subprocess.Popen(["sleep", "300"])
    try:
        _watchdog_told(init.pid, clean=True)
        assert init.poll() is None
    finally:
        init.kill()
        init.wait()
