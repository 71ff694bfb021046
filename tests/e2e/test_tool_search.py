"""Tools on demand: a tool `tool_search` finds is offered from the next turn and callable; an
out-of-scope tool is never found, and its call never reaches the server."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.spawn_support import call_log, spawn, stub, write_config

AGENT = """---
name: finder
tools: read, ext:lazy
disallowed_tools: ext:lazy/tool_0003
tool_search: on
---
You find tools.
"""
SCRIPT = """
steps:
  - call: [{tool: tool_search, args: {query: echo, limit: 1}},
           {tool: tool_search, args: {pattern: "tool_0003|other"}}]
  - call: [{tool: lazy__echo, args: {text: hi}}, {tool: lazy__tool_0003, args: {}}]
  - say: done
"""


def test_a_found_tool_is_callable_and_an_out_of_scope_one_is_neither_found_nor_called(
    tmp_path: Path,
) -> None:
    log, other_log = tmp_path / "calls", tmp_path / "other-calls"
    servers = {
        "lazy": stub("lazy", "--count", "5", "--call-log", str(log)),
        "other": stub("lazy", "--call-log", str(other_log)),
    }
    config = write_config(tmp_path / "cfg", servers, {"finder": AGENT})
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    run = spawn(config, script, "--agent", "finder", "go", state=tmp_path / "state")

    assert run.code == 0, run.stderr
    first, second, third = run.of_type("turn_start")
    assert first["tools"] == ["read", "tool_search"]
    assert first["deferred"] == 6  # echo, sleep and four of the five fillers
    found, nothing = run.result_of("tool_search")
    assert "lazy__echo" in found["content"] and "other" not in found["content"]
    assert nothing["content"].startswith("No tool matches")
    (loaded,) = run.of_type("tools_loaded")
    assert loaded["loaded"] == ["lazy__echo"] and loaded["query"] == "echo"
    assert second["tools"] == ["read", "tool_search", "lazy__echo"]
    assert second["deferred"] == 5
    assert "lazy__tool_0003" not in second["tools"] + third["tools"]

    (echo,) = run.result_of("lazy__echo")
    assert echo["is_error"] is False and echo["content"] == "hi"
    (refused,) = run.result_of("lazy__tool_0003")
    assert refused["is_error"] is True and "not available" in refused["content"]
    assert [c["tool"] for c in call_log(log)] == ["echo"]  # the refused call never arrived
    assert call_log(other_log) == []  # not selected: never started, never called
