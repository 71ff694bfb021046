"""The `subagent` built-in: children in their own workers, their own scope, a depth bound."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest

from tests.e2e.conftest import (
    Subagent,
    assert_all_gone,
    parse_events,
    read_pid,
    stub,
    wait_until,
    write_config,
)

pytestmark = pytest.mark.e2e

NESTED_LIMIT_S = 120.0
"""A parent and up to two nested workers, each a Python process, on a loaded 2-core box."""


def agent(name: str, script: Path, *, tools: str, extra: str = "") -> str:
    head = f"name: {name}\nmodel: scripted:{script}\ntools: {tools}\n{extra}"
    return f"---\n{head}---\nYou are {name}.\n"


def script(root: Path, name: str, text: str) -> Path:
    path = root / f"{name}.yaml"
    path.write_text(text)
    return path


def delegating(root: Path, target: str, then: str = "done") -> Path:
    return script(
        root,
        f"to-{target}",
        f"steps:\n  - call: [{{tool: subagent, args: {{agent: {target}, prompt: go}}}}]\n"
        f"  - say: {then}\n",
    )


def records(subagent: Subagent) -> dict[str, list[dict]]:
    """Each recorded session's events, keyed by its agent name."""
    out: dict[str, list[dict]] = {}
    for session in subagent.sessions():
        events = subagent.events(session)
        start = next(e for e in events if e["type"] == "session_start")
        out[start["agent"]] = events
    return out


def results_of(run_stdout: str, name: str) -> list[dict]:
    return [e for e in parse_events(run_stdout) if e["type"] == "tool_result" and e["name"] == name]


def test_a_child_runs_with_its_own_scope_and_answers_the_parent(
    tmp_path: Path, subagent: Subagent
) -> None:
    child_script = script(
        tmp_path, "child", "steps:\n  - call: [{tool: lazy__echo, args: {text: hi}}]\n"
        "  - say: child says hi\n",
    )  # fmt: skip
    config = write_config(
        tmp_path / "cfg",
        {"lazy": stub("lazy")},
        {
            "parent": agent(
                "parent", delegating(tmp_path, "child"), tools="read, subagent",
                extra="allowed_subagents: [child]\nextensions: false\n",
            ),
            "child": agent("child", child_script, tools="ext:lazy"),
        },
    )  # fmt: skip
    run = subagent.run("spawn", "--json", "--config-dir", str(config), "parent", "go")
    assert run.code == 0, run.stderr
    (answer,) = results_of(run.stdout, "subagent")
    assert answer["is_error"] is False
    assert answer["content"] == "child says hi"
    sessions = records(subagent)
    assert set(sessions) == {"parent", "child"}
    offered = [e["tools"] for e in sessions["child"] if e["type"] == "turn_start"]
    # The child's scope is its own file's: its server's tool, none of the parent's.
    assert "lazy__echo" in offered[0]
    assert "read" not in offered[0] and "subagent" not in offered[0]
    parent_offered = next(e["tools"] for e in sessions["parent"] if e["type"] == "turn_start")
    assert parent_offered == ["read", "subagent"]


def test_subagent_is_off_unless_named_and_allowed_subagents_is_enforced(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(
        tmp_path / "cfg",
        {},
        {
            "parent": agent(
                "parent", delegating(tmp_path, "other"), tools="subagent",
                extra="allowed_subagents: [child]\n",
            ),
            "child": agent("child", script(tmp_path, "c", "steps:\n  - say: hi\n"), tools="read"),
            "other": agent("other", script(tmp_path, "o", "steps:\n  - say: hi\n"), tools="read"),
        },
    )  # fmt: skip
    run = subagent.run("spawn", "--json", "--config-dir", str(config), "parent", "go")
    assert run.code == 0, run.stderr
    (refused,) = results_of(run.stdout, "subagent")
    assert refused["is_error"] is True
    assert "not one of this agent's allowed_subagents" in refused["content"]
    assert set(records(subagent)) == {"parent"}  # `other` never started
    # An agent that does not name it never gets it.
    listed = subagent.run("tools", "--json", "--config-dir", str(config), "child")
    assert "subagent" not in [t["name"] for t in json.loads(listed.stdout)["active"]]


def test_max_depth_refuses_a_grandchild(tmp_path: Path, subagent: Subagent) -> None:
    config = write_config(
        tmp_path / "cfg",
        {},
        {
            "top": agent(
                "top", delegating(tmp_path, "mid"), tools="subagent",
                extra="allowed_subagents: [mid]\nmax_depth: 1\n",
            ),
            "mid": agent(
                "mid", delegating(tmp_path, "leaf", then="mid done"), tools="subagent",
                extra="allowed_subagents: [leaf]\n",
            ),
            "leaf": agent("leaf", script(tmp_path, "l", "steps:\n  - say: leaf\n"), tools="read"),
        },
    )  # fmt: skip
    run = subagent.run("spawn", "--json", "--config-dir", str(config), "top", "go")
    assert run.code == 0, run.stderr
    (answer,) = results_of(run.stdout, "subagent")
    assert answer["content"] == "mid done"
    mid = records(subagent)["mid"]
    (deeper,) = [e for e in mid if e["type"] == "tool_result" and e["name"] == "subagent"]
    assert deeper["is_error"] is True
    assert "max_depth 1 reached" in deeper["content"]
    assert set(records(subagent)) == {"top", "mid"}


def test_sigkill_of_the_top_launcher_leaves_no_descendant(
    tmp_path: Path, subagent: Subagent
) -> None:
    pidfile = tmp_path / "lazy.pid"
    config = write_config(
        tmp_path / "cfg",
        {"lazy": stub("lazy", "--pidfile", str(pidfile))},
        {
            "top": agent(
                "top", delegating(tmp_path, "mid"), tools="subagent",
                extra="allowed_subagents: [mid]\n",
            ),
            "mid": agent(
                "mid", delegating(tmp_path, "leaf"), tools="subagent",
                extra="allowed_subagents: [leaf]\n",
            ),
            "leaf": agent(
                "leaf", script(tmp_path, "l", "steps:\n  - sleep: 120\n    say: never\n"),
                tools="ext:lazy",
            ),
        },
    )  # fmt: skip
    top = subagent.start("spawn", "--json", "--config-dir", str(config), "top", "go")
    try:
        assert wait_until(pidfile.exists, NESTED_LIMIT_S), "the grandchild's server never started"
        server = read_pid(pidfile)
        top.send_signal(signal.SIGKILL)
        top.wait(timeout=10)
    finally:
        if top.poll() is None:
            top.kill()
            top.wait()
    assert_all_gone([server], tmp_path)
