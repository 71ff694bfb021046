"""A lock is enforced at run time: unpinned or changed server tools are muted, never called."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import Subagent
from tests.e2e.spawn_support import call_log, spawn, stub, touch_at_turn, write_config

pytestmark = pytest.mark.e2e

CALL_LATE = """
steps:
  - call: [{tool: lazy__late, args: {x: 1}}]
  - say: done
"""

REDESCRIBED_MID_RUN = """
steps:
  - call: [{tool: lazy__echo, args: {text: before}}]
  - sleep: 3
    call: [{tool: lazy__sleep, args: {seconds: 0}}]
  - call: [{tool: lazy__echo, args: {text: after}}]
  - say: done
"""
"""The stub re-describes echo once turn 2 started (turn 1's echo call is done by then);
turn 2's model thinks 3 s, the time the change has to reach the session before turn 3."""


def lock_base(subagent: Subagent, tmp_path: Path, *drift: str, log: Path | None = None) -> Path:
    """A config locked on the plain lazy stub, then re-pointed at one that drifts."""
    config = write_config(tmp_path / "cfg", {"lazy": stub("lazy")})
    run = subagent.run("lock", "--config-dir", str(config))
    assert run.code == 0, run.stderr
    log_args = ("--call-log", str(log)) if log else ()
    return write_config(config, {"lazy": stub("lazy", *drift, *log_args)})


def test_tools_json_mutes_unpinned_and_changed_tools_with_their_reasons(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = lock_base(subagent, tmp_path, "--at", "0:late", "--redescribe-at", "0.1:echo")
    args = ("tools", "--json", "--settle", "1.5", "--config-dir", str(config))

    report = subagent.run(*args).json()

    active = [t["name"] for t in report["active"] if t["server"]]
    assert active == ["lazy__sleep"]
    muted = {t["name"]: t["reason"] for t in report["muted"]}
    assert muted == {"lazy__echo": "changed since lock", "lazy__late": "not in lock"}
    assert "read" in [t["name"] for t in report["active"]]  # built-ins are not locked

    unlocked = subagent.run(*args, "--no-lock").json()
    names = {t["name"] for t in unlocked["active"]}
    assert {"lazy__echo", "lazy__sleep", "lazy__late"} <= names
    assert unlocked["muted"] == []


def test_spawn_never_offers_or_calls_an_unpinned_tool(tmp_path: Path, subagent: Subagent) -> None:
    log = tmp_path / "lazy.calls"
    config = lock_base(subagent, tmp_path, "--at", "0:late", log=log)
    script = tmp_path / "s.yaml"
    script.write_text(CALL_LATE)

    run = spawn(config, script, "go", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    (turn1,) = [e for e in run.of_type("turn_start") if e["turn"] == 1]
    assert "lazy__echo" in turn1["tools"]
    assert "lazy__late" not in turn1["tools"]
    (result,) = run.result_of("lazy__late")
    assert result["is_error"] is True
    assert call_log(log) == []  # the server never saw the call

    free = spawn(config, script, "--no-lock", "go", state=tmp_path / "state")

    assert free.code == 0, free.stderr
    (turn1,) = [e for e in free.of_type("turn_start") if e["turn"] == 1]
    assert "lazy__late" in turn1["tools"]
    (result,) = free.result_of("lazy__late")
    assert result["is_error"] is False
    assert [c["tool"] for c in call_log(log)] == ["late"]


def test_a_mid_session_redescribe_mutes_the_tool_from_the_next_turn(
    tmp_path: Path, subagent: Subagent
) -> None:
    log = tmp_path / "lazy.calls"
    go = tmp_path / "redescribe.go"
    config = lock_base(subagent, tmp_path, "--redescribe-at-file", f"{go}:echo", log=log)
    script = tmp_path / "s.yaml"
    script.write_text(REDESCRIBED_MID_RUN)

    run = spawn(config, script, "go", state=tmp_path / "state", touch=touch_at_turn(2, go))

    assert run.code == 0, run.stderr
    offered = run.offered()
    assert "lazy__echo" in offered[1]
    assert "lazy__echo" not in offered[3]
    assert "lazy__sleep" in offered[3]
    changed = [e for e in run.of_type("tools_changed") if "lazy__echo" in e["changed"]]
    assert changed, "the re-description reached the session"
    first, second = run.result_of("lazy__echo")
    assert first["is_error"] is False and first["content"] == "before"
    assert second["is_error"] is True
    assert [c["tool"] for c in call_log(log) if c["tool"] == "echo"] == ["echo"]
