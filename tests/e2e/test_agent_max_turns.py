"""At max_turns the agent gets one wrap-up turn without tools, then stops with `max_turns`."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import spawn, stub, write_config

SCRIPT = """
steps:
  - call: [{tool: lazy__echo, args: {text: a}}]
  - call: [{tool: lazy__echo, args: {text: b}}]
  - call: [{tool: lazy__echo, args: {text: c}}]
  - say: never reached
"""


def test_max_turns_ends_with_a_tool_free_wrap_up_turn(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")})
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)

    run = spawn(config, script, "--max-turns", "2", "go", state=tmp_path / "state")

    assert run.code == 1
    starts = run.of_type("turn_start")
    assert [e["turn"] for e in starts] == [1, 2, 3]
    assert starts[2]["tools"] == []
    assert len(run.of_type("tool_result")) == 2  # the wrap-up turn's calls are not run
    end = run.end()
    assert end["status"] == "max_turns"
    assert end["usage"]["turns"] == 3
    assert run.events[-1]["type"] == "session_end"
