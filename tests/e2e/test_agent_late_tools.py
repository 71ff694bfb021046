"""A tool that registers while turn 2 runs is offered from turn 3 on, and callable there."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn_with_lazy, touch_at_turn

SCRIPT = """
steps:
  - call: [{tool: lazy__echo, args: {text: one}}]
  - sleep: 4
    call: [{tool: lazy__echo, args: {text: two}}]
  - call: [{tool_from: lazy/late, args: {n: 3}}]
  - say: done
"""
"""Turn 2's model thinks 4 s: the time the late tool has to reach the session."""


def test_tool_registered_during_turn_two_is_offered_and_callable_in_turn_three(
    tmp_path: Path,
) -> None:
    # The stub adds `late` once turn 2 started, so after turn 2's offer however slow the box.
    go = tmp_path / "late.go"
    run, log = spawn_with_lazy(
        tmp_path, SCRIPT, "--at-file", f"{go}:late", touch=touch_at_turn(2, go)
    )

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
