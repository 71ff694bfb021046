"""A tool whose description changes mid-session is reported under `changed`, with its new text."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.conftest import parse_events
from tests.e2e.spawn_support import spawn, stub, write_config

SCRIPT = """
steps:
  - sleep: 3
    call: [{tool: lazy__echo, args: {text: hi}}]
  - say: done
"""


def test_redescribed_tool_appears_under_changed_in_stream_and_record(tmp_path: Path) -> None:
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy", "--redescribe-at", "1:echo")})
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    state = tmp_path / "state"

    run = spawn(config, script, "--ext", "lazy", "go", state=state)

    assert run.code == 0, run.stderr
    changes = [e for e in run.of_type("tools_changed") if e["changed"]]
    assert len(changes) == 1
    assert changes[0] == {**changes[0], "source": "lazy", "changed": ["lazy__echo"], "added": []}
    # The session's own record holds the same event.
    (record,) = state.glob("sessions/*/events.jsonl")
    recorded = parse_events(record.read_text())
    assert any(e["type"] == "tools_changed" and e["changed"] == ["lazy__echo"] for e in recorded)
