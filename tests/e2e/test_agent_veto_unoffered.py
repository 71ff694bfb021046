"""The veto refuses a tool the turn did not offer, even when it registered mid-turn in scope."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn_with_lazy, touch_at_turn

SCRIPT = """
steps:
  - sleep: 3
    call: [{tool_from: lazy/late, args: {n: 1}}]
  - call: [{tool_from: lazy/late, args: {n: 2}}]
  - say: done
"""
"""Turn 1's model thinks 3 s: the time the late tool has to reach the session."""


def test_tool_registered_during_turn_one_is_refused_in_turn_one_and_runs_in_turn_two(
    tmp_path: Path,
) -> None:
    # The stub adds `late` once turn 1 started, so after turn 1's offer however slow the box.
    go = tmp_path / "late.go"
    run, log = spawn_with_lazy(
        tmp_path, SCRIPT, "--at-file", f"{go}:late", touch=touch_at_turn(1, go)
    )

    assert run.code == 0, run.stderr
    offered = run.offered()
    assert "lazy__late" not in offered[1]
    assert "lazy__late" in offered[2]
    # It registered while turn 1's model was thinking: in scope, but never offered there.
    kinds = [(e["type"], e.get("turn")) for e in run.events]
    arrived = next(
        i
        for i, e in enumerate(run.events)
        if e["type"] == "tools_changed" and "lazy__late" in e["added"]
    )
    assert kinds.index(("turn_start", 1)) < arrived < kinds.index(("tool_call", 1))
    first, second = run.result_of("lazy__late")
    assert first["is_error"] is True
    assert "not available" in first["content"]
    assert second["is_error"] is False
    assert [c["arguments"] for c in call_log(log) if c["tool"] == "late"] == [{"n": 2}]
