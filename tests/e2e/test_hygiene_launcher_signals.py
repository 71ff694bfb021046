"""Signals to the launcher mid-session (SIGINT, SIGTERM, SIGHUP, SIGKILL): every server and
grandchild dies, even a server that ignores SIGTERM and stdin EOF; all but SIGKILL end the
session cleanly."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from tests.e2e import conftest as e2e

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize(
    "signum",
    [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL],
    ids=lambda s: s.name,
)
def test_signal_to_launcher_leaves_no_process(
    tmp_path: Path, subagent: e2e.Subagent, signum: signal.Signals
) -> None:
    # SIGINT gets a well-behaved server (a quick test); the others one that ignores SIGTERM
    # and stdin EOF, which only the group SIGKILL (shutdown or watchdog) ends.
    stubborn = () if signum == signal.SIGINT else ("--ignore-sigterm",)
    server = e2e.stub(
        "faulty",
        *stubborn,
        *("--grandchild", str(tmp_path / "gc.pid"), "--pidfile", str(tmp_path / "server.pid")),
    )
    config = e2e.write_config(tmp_path / "cfg", {"server": server})
    launcher = subagent.start("tools", "--config-dir", str(config), "--settle", "600")
    try:
        assert e2e.wait_until(lambda: e2e.any_server_connected(subagent), e2e.CONNECT_LIMIT_S), (
            "never connected"
        )
        pids = [e2e.read_pid(tmp_path / "server.pid"), e2e.read_pid(tmp_path / "gc.pid")]
        e2e.signal_as_user(launcher, signum)
        if signum == signal.SIGTERM:
            # A second one during the ~4 s escalation must not cut the shutdown short.
            time.sleep(0.5)
            launcher.send_signal(signum)
        _, err = launcher.communicate(timeout=e2e.RUN_LIMIT_S)
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()

    e2e.assert_all_gone(pids, tmp_path)
    if signum == signal.SIGKILL:
        assert launcher.returncode == -signal.SIGKILL
        return
    assert launcher.returncode == 128 + signum
    assert f"interrupted ({signum.name}); session closed" in err
    assert "Traceback" not in err
    events = subagent.events()
    states = [e["state"] for e in events if e["type"] == "server_state"]
    assert states == ["starting", "connected", "closed"]
    assert events[-1]["type"] == "session_end"
