"""`scripts/demo.sh` leaves its session where `subagent log` finds it, and says what the
refused `lazy__early` call shows: the veto at work."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import run_process

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SUBAGENT = ROOT / ".venv" / "bin" / "subagent"


@pytest.mark.skipif(not SUBAGENT.exists(), reason="the demo runs .venv/bin/subagent")
def test_the_demo_is_found_by_log_and_explains_the_veto(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "state")
    demo = run_process(["bash", "scripts/demo.sh", "--no-setup"], cwd=ROOT, env=env)
    assert demo.returncode == 0, demo.stderr
    assert "acme/widgets#1" in demo.stdout
    assert 'lazy__early: error Tool "lazy__early" is not available' in demo.stderr
    assert "call-time\nveto refused it" in demo.stderr
    assert "the lazy server was never started" in demo.stderr
    assert ".venv/bin/subagent log last" in demo.stderr
    log = run_process([SUBAGENT, "log", "last"], cwd=ROOT, env=env)
    assert log.returncode == 0, log.stderr
    assert "agent triage" in log.stdout and "lazy__early" in log.stdout
