"""A server's grandchild that leaves its process group (setsid, or a double fork into a new
session) still dies with the session: by the session cgroup's `cgroup.kill` where cgroup v2
is writable, else by the launcher as child subreaper plus the watchdog's record. After a
normal end, SIGINT, SIGTERM and SIGKILL of the launcher alike."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from launcher.procs.cgroup import OFF_ENV, create_session_cgroup, kill_cgroup
from tests.e2e.conftest import (
    CONNECT_LIMIT_S,
    RUN_LIMIT_S,
    Subagent,
    any_server_connected,
    assert_all_gone,
    is_alive,
    read_pid,
    signal_as_user,
    stub,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.e2e

HOWS = ["setsid", "double-fork"]
ENDS = ["normal", "SIGINT", "SIGTERM", "SIGKILL"]


def _cgroup_available() -> bool:
    probe = create_session_cgroup("probe")
    if probe is None:
        return False
    kill_cgroup(probe)
    return True


CGROUP = pytest.param(
    "cgroup",
    marks=pytest.mark.skipif(
        not _cgroup_available(), reason="no writable cgroup v2 with cgroup.kill here"
    ),
)
SUBREAPER = pytest.param(
    "subreaper",
    marks=pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="PR_SET_CHILD_SUBREAPER is Linux only"
    ),
)


def _end(subagent: Subagent, config: Path, end: str, env: dict[str, str]) -> None:
    if end == "normal":
        launcher = subagent.start("tools", "--config-dir", str(config), env=env)
        _, err = launcher.communicate(timeout=RUN_LIMIT_S)
        assert launcher.returncode == 0, err
        return
    launcher = subagent.start("tools", "--config-dir", str(config), "--settle", "600", env=env)
    try:
        assert wait_until(lambda: any_server_connected(subagent), CONNECT_LIMIT_S)
        signum = signal.Signals[end]
        signal_as_user(launcher, signum)
        launcher.communicate(timeout=RUN_LIMIT_S)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    expected = -signal.SIGKILL if end == "SIGKILL" else 128 + signal.Signals[end]
    assert launcher.returncode == expected


@pytest.mark.parametrize("sweep", [CGROUP, SUBREAPER])
@pytest.mark.parametrize("end", ENDS)
@pytest.mark.parametrize("how", HOWS)
def test_escaped_grandchild_dies_with_the_session(
    tmp_path: Path, subagent: Subagent, how: str, end: str, sweep: str
) -> None:
    escaped = tmp_path / "escaped.pid"
    server = stub(
        "faulty", "--escape", how, str(escaped), "--pidfile", str(tmp_path / "server.pid")
    )
    config = write_config(tmp_path / "cfg", {"server": server})
    env = {OFF_ENV: "off"} if sweep == "subreaper" else {}
    try:
        _end(subagent, config, end, env)
        pids = [read_pid(tmp_path / "server.pid"), read_pid(escaped)]
        assert_all_gone(pids, tmp_path)
    finally:
        if escaped.exists() and is_alive(pid := read_pid(escaped)):
            os.kill(pid, signal.SIGKILL)  # do not leave a sleeper behind a failed test
