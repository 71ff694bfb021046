"""A tool that registers while turn 2 runs is offered from turn 3 on, and callable there."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn_with_lazy

SCRIPT = """
steps:
  - call: [{tool: lazy__echo, args: {text: one}}]
  - sleep: 4
    call: [{tool: lazy__echo, args: {text: two}}]
  - call: [{tool_from: lazy/late, args: {n: 3}}]
  - say: done
"""


def test_tool_registered_during_turn_two_is_offered_and_callable_in_turn_three(
    tmp_path: Path,
) -> None:
    run, log = spawn_with_lazy(tmp_path, SCRIPT, "--at", "2:late")

    assert run.code == 0, run.stderr
    offered = run.offered()
    assert "lazy__late" not in offered[1]
    assert "lazy__late" not in offered[2]
    assert "lazy__late" in offered[3]
    changes = [e for e in run.of_type("tools_changed") if "lazy__late" in e["added"]]
    assert len(changes) == 1
    (late,) = run.result_of("lazy__late")
    assert late["is_error"] is False
    assert '"n": 3' in late["content"]
    assert [c["tool"] for c in call_log(log)] == ["echo", "echo", "late"]
