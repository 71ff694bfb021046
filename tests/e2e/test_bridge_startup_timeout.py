"""Servers start concurrently, each bounded by its startup_timeout: one that never answers
fails with that reason and its process is gone, and the session goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent, is_alive, read_pid, write_config

pytestmark = pytest.mark.e2e


def test_silent_servers_time_out_concurrently_and_are_stopped(
    tmp_path: Path, subagent: Subagent
) -> None:
    def silent(name: str) -> dict[str, object]:
        # Never speaks MCP and ignores stdin EOF; SIGTERM ends it.
        script = f'echo $$ > "{tmp_path / name}.pid"; exec sleep 300'
        return {"command": "sh", "args": ["-c", script], "startup_timeout": 1}

    servers = {name: silent(name) for name in ("mute1", "mute2")}
    config = write_config(tmp_path / "cfg", servers)

    run = subagent.run("tools", "--json", "--config-dir", str(config))

    assert run.code == 0, run.stderr
    for name in servers:
        state = run.json()["servers"][name]
        assert state["state"] == "failed"
        assert state["error"].startswith("no tool list within startup_timeout (1 s)")
    events = [e for e in subagent.events() if e["type"] == "server_state"]
    starts = [e["ts"] for e in events if e["state"] == "starting"]
    failures = [e["ts"] for e in events if e["state"] == "failed"]
    assert len(starts) == len(failures) == 2
    assert max(starts) < min(failures)  # both were starting at once
    assert [p for p in (read_pid(tmp_path / f"{n}.pid") for n in servers) if is_alive(p)] == []
