"""A bash tool call's processes die with the launcher, even when it is killed with SIGKILL."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, assert_all_gone, read_pid, wait_until, write_config

pytestmark = pytest.mark.e2e


def test_sigkill_of_launcher_mid_bash_call_leaves_no_process(
    tmp_path: Path, subagent: Subagent
) -> None:
    pidfile = subagent.cwd / "sleep.pid"  # in the workspace: the sandboxed shell writes only there
    script = tmp_path / "s.yaml"
    script.write_text(
        "steps:\n"
        # The pid as the host sees it ($! is one of the commands' PID namespace).
        "  - call: [{tool: bash, args: {command: 'sh -c \"read -r p _ </proc/self/stat;"
        f" echo \\$p > {pidfile}; exec sleep 300\" & wait'}}}}]\n"
        "  - say: never\n"
    )
    config = write_config(tmp_path / "cfg", {})
    launcher = subagent.start(
        "spawn", "--config-dir", str(config), "--model", f"scripted:{script}", "go"
    )
    try:
        assert wait_until(pidfile.exists, 30), "the bash call never started"
        assert wait_until(lambda: pidfile.read_text().strip() != "", 5)
        sleeper = read_pid(pidfile)
        launcher.send_signal(signal.SIGKILL)
        launcher.wait(timeout=10)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
    assert_all_gone([sleeper], tmp_path)
