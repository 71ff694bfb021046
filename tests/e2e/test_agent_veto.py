"""The call-time veto, end to end: a vetoed call is an error result and never reaches a server."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn, stub, write_config

AGENT = """---
name: narrow
tools: ext:alpha/echo
disallowed_tools: ext:alpha/sleep
---
Narrow agent.
"""

SCRIPT = """
steps:
  - call:
      - {tool: alpha__echo, args: {text: allowed}}
      - {tool: alpha__sleep, args: {seconds: 0}}
      - {tool: alpha__early, args: {}}
      - {tool: beta__echo, args: {text: other server}}
      - {tool: no_such_tool, args: {}}
  - say: done
"""


def test_turn_one_veto_refuses_muted_and_unselected_tools_before_any_server(tmp_path: Path) -> None:
    alpha_log, beta_log = tmp_path / "alpha.calls", tmp_path / "beta.calls"
    config = write_config(
        tmp_path / "cfg",
        {
            "alpha": stub("lazy", "--at", "0:early", "--call-log", str(alpha_log)),
            "beta": stub(
                "lazy", "--call-log", str(beta_log), "--marker", str(tmp_path / "beta.started")
            ),
        },
        {"narrow": AGENT},
    )
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)

    run = spawn(config, script, "narrow", "go", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    (turn1,) = [e for e in run.of_type("turn_start") if e["turn"] == 1]
    assert turn1["tools"] == ["alpha__echo"]
    results = {e["name"]: e for e in run.of_type("tool_result")}
    assert results["alpha__echo"]["is_error"] is False
    assert results["alpha__echo"]["content"] == "allowed"
    for name in ("alpha__sleep", "alpha__early", "beta__echo", "no_such_tool"):
        assert results[name]["is_error"] is True
        assert results[name]["content"] == f'Tool "{name}" is not available to this sub-agent.'
    # The server's own log: only the allowed call arrived; beta never even started.
    assert [c["tool"] for c in call_log(alpha_log)] == ["echo"]
    assert call_log(beta_log) == []
    assert not (tmp_path / "beta.started").exists()
    assert run.end()["status"] == "completed"
