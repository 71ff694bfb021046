"""The shipped demo runs end to end from the repository root, exactly as the issue states it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.conftest import parse_events

ROOT = Path(__file__).resolve().parents[2]


def test_triage_demo_runs_against_the_github_stub(tmp_path: Path) -> None:
    env = {**os.environ, "SUBAGENT_HOME": str(tmp_path / "state"), "HOME": str(tmp_path)}
    env.pop("SUBAGENT_CONFIG_DIR", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "launcher.cli",
            "spawn",
            "--json",
            "--ext",
            "mcp-github",
            "--model",
            "scripted:configs/scripts/triage.yaml",
            "Triage the open issues",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    events = parse_events(proc.stdout)
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["is_error"] for r in results if r["name"] == "mcp-github__list_issues"] == [
        False,
        False,
    ]
    (issue,) = [r for r in results if r["name"] == "mcp-github__get_issue"]
    assert "Crash when widget size is zero" in issue["content"]
    (vetoed,) = [r for r in results if r["name"] == "lazy__early"]
    assert vetoed["is_error"] is True
    started = [
        e["server"] for e in events if e["type"] == "server_state" and e["state"] == "starting"
    ]
    assert started == ["mcp-github"]
    (end,) = [e for e in events if e["type"] == "agent_end"]
    assert end["status"] == "completed"
    assert "acme/widgets#1" in end["result"]
