"""Real runs' event streams and serve's run results hold to the published events schema,
with no key the schema does not name."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.e2e.conftest import Subagent, scripted_spawn, stub, write_config
from tests.worktree_support import make_repo

pytestmark = pytest.mark.e2e

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "docs" / "events.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
LIMIT_S = 90.0


def check(line: dict[str, Any], definition: str | None = None) -> None:
    """`line` validates, and every key it has is one its definition names."""
    name = definition or line["type"]
    assert name in SCHEMA["$defs"], f"no schema for event type {name!r}"
    if definition is None:
        VALIDATOR.validate(line)
    else:
        one = {k: v for k, v in SCHEMA.items() if k != "oneOf"} | {"$ref": f"#/$defs/{name}"}
        jsonschema.Draft202012Validator(one).validate(line)
    extra = set(line) - set(SCHEMA["$defs"][name]["properties"])
    assert not extra, f"{name} has keys the schema does not name: {extra}"


def run_script(tmp_path: Path, calls: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.yaml"
    path.write_text(json.dumps({"steps": [{"call": calls}, {"say": "done"}]}))
    return path


def test_a_spawn_stream_and_its_events_file_hold_to_the_schema(
    tmp_path: Path, subagent: Subagent
) -> None:
    config = write_config(
        tmp_path / "cfg",
        {"gh": stub("github"), "broken": {"command": str(tmp_path / "missing")}},
    )
    script = run_script(
        tmp_path,
        [
            {"tool_from": "gh/list_issues", "args": {"state": "open"}},
            {"tool": "no_such_tool", "args": {}},
            {"tool": "read", "args": {"path": "nowhere.txt"}},
        ],
    )
    run = subagent.run(*scripted_spawn(config, script, "list the issues"))
    assert run.code == 0, run.stderr
    streamed = run.json_lines()
    seen = {e["type"] for e in streamed}
    assert {
        "session_start",
        "server_state",
        "tools_changed",
        "agent_start",
        "user_message",
        "turn_start",
        "tool_call",
        "tool_result",
        "assistant_message",
        "turn_end",
        "agent_end",
        "session_end",
    } <= seen, seen
    for line in [*streamed, *subagent.events()]:
        check(line)
    (start,) = [e for e in streamed if e["type"] == "session_start"]
    assert start["schema_version"] == int(SCHEMA["$id"].rsplit("v", 1)[1])


def test_an_isolated_run_ends_with_a_worktree_event_that_holds(
    tmp_path: Path, subagent: Subagent
) -> None:
    repo = make_repo(tmp_path / "repo", {"README.md": "hello\n"})
    config = write_config(tmp_path / "cfg", {})
    script = run_script(tmp_path, [{"tool": "write", "args": {"path": "new.txt", "content": "x"}}])
    run = subagent.run(
        *scripted_spawn(config, script, "--workspace", str(repo), "--isolation", "worktree", "go")
    )
    assert run.code == 0, run.stderr
    lines = run.json_lines()
    assert lines[-1]["type"] == "worktree" and lines[-1]["changed"] is True
    for line in lines:
        check(line)


@pytest.mark.anyio
async def test_serve_run_results_hold_to_the_run_result_definition(tmp_path: Path) -> None:
    config = write_config(
        tmp_path / "cfg",
        {},
        {"helper": f"---\nname: helper\nmodel: scripted:{tmp_path / 'say.yaml'}\n---\nHelp.\n"},
    )
    (tmp_path / "say.yaml").write_text("steps:\n  - say: done\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(tmp_path / "state")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(config)],
        env=env,
        cwd=str(tmp_path),
    )
    with anyio.fail_after(LIMIT_S), (tmp_path / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            ran = await c.call_tool("spawn_subagent", {"prompt": "go", "agent": "helper"})
            assert ran.structured_content is not None, ran
            check(ran.structured_content, "run_result")
            agent_id = ran.structured_content["agent_id"]
            got = await c.call_tool("get_subagent_result", {"agent_id": agent_id})
            assert got.structured_content is not None, got
            check(got.structured_content, "run_result")
