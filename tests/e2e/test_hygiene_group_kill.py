"""SIGKILL to the launcher's whole process group (a CI job cancel) leaves no server and no
grandchild: the watchdog runs in its own session, so it survives to kill them."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.e2e.conftest import (
    CONNECT_LIMIT_S,
    RUN_LIMIT_S,
    Subagent,
    any_server_connected,
    assert_all_gone,
    read_pid,
    stub,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.e2e


def test_sigkill_to_launcher_group_leaves_no_server_or_grandchild(
    tmp_path: Path, subagent: Subagent
) -> None:
    server = stub(
        "faulty",
        *("--grandchild", str(tmp_path / "gc.pid"), "--pidfile", str(tmp_path / "server.pid")),
    )
    config = write_config(tmp_path / "cfg", {"server": server})
    # `start` runs the launcher as its own session and group leader, as `setsid` would.
    launcher = subagent.start("tools", "--config-dir", str(config), "--settle", "30")
    try:
        assert wait_until(lambda: any_server_connected(subagent), CONNECT_LIMIT_S), (
            "never connected"
        )
        pids = [read_pid(tmp_path / "server.pid"), read_pid(tmp_path / "gc.pid")]
        os.killpg(launcher.pid, signal.SIGKILL)
        launcher.communicate(timeout=RUN_LIMIT_S)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()

    assert launcher.returncode == -signal.SIGKILL
    assert_all_gone(pids, tmp_path)
