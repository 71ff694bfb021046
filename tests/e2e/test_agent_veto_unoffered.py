"""The veto refuses a tool the turn did not offer, even when it registered mid-turn in scope."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn_with_lazy

SCRIPT = """
steps:
  - sleep: 3
    call: [{tool_from: lazy/late, args: {n: 1}}]
  - call: [{tool_from: lazy/late, args: {n: 2}}]
  - say: done
"""


def test_tool_registered_during_turn_one_is_refused_in_turn_one_and_runs_in_turn_two(
    tmp_path: Path,
) -> None:
    run, log = spawn_with_lazy(tmp_path, SCRIPT, "--at", "1:late")

    assert run.code == 0, run.stderr
    offered = run.offered()
    assert "lazy__late" not in offered[1]
    assert "lazy__late" in offered[2]
    # It registered while turn 1's model was thinking: in scope, but never offered there.
    assert any("lazy__late" in e["added"] for e in run.of_type("tools_changed"))
    first, second = run.result_of("lazy__late")
    assert first["is_error"] is True
    assert "not available" in first["content"]
    assert second["is_error"] is False
    assert [c["arguments"] for c in call_log(log) if c["tool"] == "late"] == [{"n": 2}]
