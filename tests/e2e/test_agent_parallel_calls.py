"""One turn's tool calls run in parallel: both calls start before either finishes."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn, stub, write_config

SCRIPT = """
steps:
  - call:
      - {tool: lazy__sleep, args: {seconds: 1}}
      - {tool: lazy__sleep, args: {seconds: 1}}
  - say: done
"""


def test_two_sleeping_calls_overlap(tmp_path: Path) -> None:
    log = tmp_path / "calls"
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy", "--call-log", str(log))})
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)

    run = spawn(config, script, "go", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    kinds = [e["type"] for e in run.events if e["type"] in ("tool_call", "tool_result")]
    # Sequential execution would interleave call, result, call, result.
    assert kinds == ["tool_call", "tool_call", "tool_result", "tool_result"]
    received = [c["ts"] for c in call_log(log)]
    first_result_ts = min(e["ts"] for e in run.of_type("tool_result"))
    assert len(received) == 2
    # The server saw the second call before the first one's 1 s sleep ended.
    assert max(received) < first_result_ts
    assert all(not e["is_error"] for e in run.of_type("tool_result"))
