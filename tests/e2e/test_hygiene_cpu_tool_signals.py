"""SIGINT and SIGTERM end a session while a built-in tool burns CPU in its thread: the call
is abandoned, the session closes (its server ends with it) and the launcher exits 128 + N.

Before, the session waited for the tool's thread to return, which a runaway search never
does: only SIGKILL ended the launcher (issue 23 item 1)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import (
    RUN_LIMIT_S,
    assert_all_gone,
    read_pid,
    signal_as_user,
    stub,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.e2e

STARTED_LIMIT_S = 60.0
"""The driver imports the session's modules and connects one SDK stub on a loaded box."""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_signal_ends_a_session_whose_builtin_tool_spins(
    tmp_path: Path, signum: signal.Signals
) -> None:
    server = stub("faulty", "--pidfile", str(tmp_path / "server.pid"))
    config = write_config(tmp_path / "cfg", {"server": server})
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "f.txt").write_text("x\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "home")
    driver = subprocess.Popen(
        [sys.executable, "-m", "tests.e2e.cpu_tool_driver", str(config), str(workspace)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=Path(__file__).parents[2],
        start_new_session=True,
    )
    try:
        assert driver.stdout is not None
        line = driver.stdout.readline()  # blocks until the tool spins (or the driver dies)
        assert line == "spinning\n", driver.communicate(timeout=RUN_LIMIT_S)
        assert wait_until(lambda: (tmp_path / "server.pid").exists(), STARTED_LIMIT_S)
        signal_as_user(driver, signum)
        try:
            _, err = driver.communicate(timeout=RUN_LIMIT_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{signum.name} did not end a session whose built-in tool spins")
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
    assert driver.returncode == 128 + signum, err
    assert f"interrupted ({signum.name}); session closed" in err
    assert "Traceback" not in err
    assert_all_gone([read_pid(tmp_path / "server.pid")], tmp_path)
