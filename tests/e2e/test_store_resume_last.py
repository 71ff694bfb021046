"""`last` is the last session the user started: never a nested child that ended after it;
serve's `resume: "last"` is the last session that serve started for its own host."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.e2e.conftest import Subagent, write_config
from tests.e2e.test_nested_subagents import agent, delegating, script
from tests.e2e.test_serve import LIMIT_S, serve, structured

pytestmark = pytest.mark.e2e


def test_resume_last_continues_the_parent_not_its_nested_child(
    tmp_path: Path, subagent: Subagent
) -> None:
    child = script(tmp_path, "child", "steps:\n  - say: child answer\n")
    config = write_config(
        tmp_path / "cfg",
        {},
        {
            "parent": agent(
                "parent", delegating(tmp_path, "child"), tools="subagent",
                extra="allowed_subagents: [child]\nextensions: false\n",
            ),
            "child": agent("child", child, tools="read", extra="extensions: false\n"),
        },
    )  # fmt: skip
    cfg = ("--config-dir", str(config))
    assert subagent.run("spawn", *cfg, "parent", "go").code == 0
    stored = {s["agent"]: s["id"] for s in json.loads(subagent.run("log", "--json").stdout)}
    assert set(stored) == {"parent", "child"}  # the child's session is stored too

    shown = json.loads(subagent.run("log", "last", "--json").stdout)
    run = subagent.run("spawn", "--json", *cfg, "--resume", "last", "and then?")

    assert shown["id"] == stored["parent"]
    assert run.code == 0, run.stderr
    (start,) = [e for e in run.json_lines() if e["type"] == "session_start"]
    assert (start["session_id"], start["agent"]) == (stored["parent"], "parent")


@pytest.mark.anyio
async def test_serve_resumes_its_own_hosts_last_session_not_another_hosts(
    tmp_path: Path,
) -> None:
    quick = {"prompt": "go", "ext": ["lazy"], "model": f"scripted:{tmp_path / 'quick.yaml'}"}
    with anyio.fail_after(LIMIT_S * 2):
        async with serve(tmp_path) as host_a, serve(tmp_path) as host_b:
            nothing = await host_b.call_tool("spawn_subagent", {"prompt": "x", "resume": "last"})
            mine = structured(await host_a.call_tool("spawn_subagent", quick))["session_id"]
            theirs = structured(await host_b.call_tool("spawn_subagent", quick))["session_id"]

            again = await host_a.call_tool(
                "spawn_subagent", {**quick, "prompt": "and then?", "resume": "last"}
            )

    assert nothing.is_error and "last" in nothing.content[0].text
    assert mine != theirs
    assert not again.is_error, again.content
    assert structured(again)["session_id"] == mine
