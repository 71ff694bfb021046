"""A `required` server that crashes mid-run ends the run: agent_end `error` naming it, exit 1,
every other server closed, no process left. A non-required one only loses its tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import (
    Subagent,
    assert_all_gone,
    read_pid,
    scripted_spawn,
    stub,
    write_config,
)

pytestmark = pytest.mark.e2e

# The model "thinks" this long after the crash: the run must end long before it would.
THINK_S = 60.0
CRASH_SCRIPT = f"""steps:
  - call: [{{tool_from: crashy/crash, args: {{}}}}]
  - sleep: {THINK_S}
    say: "never reached"
"""


def _run(
    tmp_path: Path, subagent: Subagent, *, required: bool
) -> tuple[int, str, list[dict], list[int]]:
    crashy = stub(
        "faulty", "--crash-on-call", "--pidfile", str(tmp_path / "crashy.pid"), required=required
    )
    other = stub("faulty", "--pidfile", str(tmp_path / "other.pid"))
    config = write_config(tmp_path / "cfg", {"crashy": crashy, "other": other})
    script = tmp_path / "script.yaml"
    script.write_text(
        CRASH_SCRIPT if required else CRASH_SCRIPT.replace(f"sleep: {THINK_S}", "sleep: 0.1")
    )
    run = subagent.run(*scripted_spawn(config, script, "go"), timeout=THINK_S - 10)
    pids = [read_pid(tmp_path / "crashy.pid"), read_pid(tmp_path / "other.pid")]
    assert "Traceback" not in run.stderr
    return run.code, run.stdout, subagent.events(), pids


def test_required_server_crash_ends_the_run(tmp_path: Path, subagent: Subagent) -> None:
    code, out, events, pids = _run(tmp_path, subagent, required=True)

    assert code == 1
    assert '"status": "error"' in out and "crashy" in out  # what `spawn --json` prints
    ends = [e for e in events if e["type"] == "agent_end"]
    assert len(ends) == 1
    assert ends[0]["status"] == "error"
    assert "server 'crashy'" in ends[0]["error"]
    assert "required server failed" in ends[0]["error"]
    last = {e["server"]: e["state"] for e in events if e["type"] == "server_state"}
    assert last == {"crashy": "failed", "other": "closed"}
    assert events[-1]["type"] == "session_end"
    assert_all_gone(pids, tmp_path)


def test_optional_server_crash_lets_the_run_finish(tmp_path: Path, subagent: Subagent) -> None:
    code, _, events, pids = _run(tmp_path, subagent, required=False)

    assert code == 0
    ends = [e for e in events if e["type"] == "agent_end"]
    assert [e["status"] for e in ends] == ["completed"]
    assert_all_gone(pids, tmp_path)
