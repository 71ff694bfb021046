"""Tools on demand: the `tool_search` field, the search itself, and what a turn offers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.discovery import load_config
from launcher.config.tool_search_field import DEFAULT_THRESHOLD, threshold
from launcher.config.types import AgentSpec
from launcher.errors import ConfigError
from launcher.events import Event, ToolsLoaded
from launcher.tools.tool_search import by_pattern, by_words, tool_search_entry
from launcher.toolset.ondemand import TOOL_SEARCH, OnDemand
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.types import CALL_ID, ToolCaller, ToolDef, ToolEntry, ToolResult


def agent(field: str) -> AgentSpec:
    return parse_agent_text(f"---\nname: a\ntool_search: {field}\n---\nBody\n", "a.md")


@pytest.mark.parametrize(
    ("field", "value", "bytes_"),
    [("auto", DEFAULT_THRESHOLD, DEFAULT_THRESHOLD), ("on", 0, 0), ("off", "off", None)],
)
def test_field_values(field: str, value: object, bytes_: int | None) -> None:
    spec = agent(field)
    assert spec.tool_search == value
    assert threshold(spec.tool_search) == bytes_
    assert agent("12000").tool_search == 12000


def test_bad_value_names_file_line_and_field() -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agent_text("---\nname: a\n\ntool_search: lots\n---\n", "dir/a.md")
    text = str(caught.value)
    assert "dir/a.md" in text and ":4" in text and "tool_search" in text and "lots" in text


def test_omitted_field_takes_the_config_default_else_auto(tmp_path: Path) -> None:
    (tmp_path / "agents").mkdir()
    (tmp_path / "agents" / "own.md").write_text("---\nname: own\ntool_search: 5\n---\n")
    (tmp_path / "agents" / "plain.md").write_text("---\nname: plain\n---\n")
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {}, "tool_search": "off"}))
    config = load_config(tmp_path, cwd=tmp_path)
    assert config.tool_search == "off" and not config.warnings
    assert threshold(config.agents["own"].tool_search, config.tool_search) == 5
    assert threshold(config.agents["plain"].tool_search, config.tool_search) is None
    assert threshold(None, None) == DEFAULT_THRESHOLD


def _call(_: dict[str, Any]) -> Any:
    raise AssertionError("never called")


def entry(name: str, description: str = "", server: str = "s") -> ToolEntry:
    return ToolEntry(f"{server}__{name}", server, name, description, {"type": "object"}, _call)


TOOLS = [
    entry("list_issues", "List the issues of a repository."),
    entry("get_issue", "Read one issue."),
    entry("create_pr", "Open a pull request from a branch."),
    entry("ping", "Check the issue tracker answers."),
]


def test_words_rank_name_hits_first_and_drop_tools_without_any() -> None:
    found = by_words("Issue", 5)(TOOLS)
    assert [e.tool for e in found] == ["list_issues", "get_issue", "ping"]
    assert [e.tool for e in by_words("issue read", 1)(TOOLS)] == ["get_issue"]
    assert by_words("nothing here", 5)(TOOLS) == []


def test_pattern_is_re2_over_name_and_description() -> None:
    assert [e.tool for e in by_pattern("^s__(get|create)_", 5)(TOOLS)] == ["get_issue", "create_pr"]
    assert [e.tool for e in by_pattern("pull REQUEST", 5)(TOOLS)] == ["create_pr"]
    with pytest.raises(Exception, match="RE2"):
        by_pattern("(a)\\1", 5)


def make_caller(name: str) -> ToolCaller:
    async def call(_: dict[str, Any]) -> ToolResult:
        return ToolResult(name)

    return call


def ondemand(limit: int | None, gate: Any = None) -> tuple[OnDemand, list[Event]]:
    registry = ToolRegistry(gate=gate)
    defs = [ToolDef(e.tool, e.description) for e in TOOLS]
    registry.set_server_tools("s", defs, make_caller)
    events: list[Event] = []

    async def emit(event: Event) -> None:
        events.append(event)

    return OnDemand(registry, limit, lambda h: tool_search_entry(h, emit, name=TOOL_SEARCH)), events


def test_small_tool_sets_and_off_offer_everything() -> None:
    for limit in (None, 10_000):
        host, _ = ondemand(limit)
        assert host.offer() is host.registry.offer()
        assert TOOL_SEARCH not in host.offer().names


@pytest.mark.anyio
async def test_search_loads_for_the_next_offer_and_says_what_it_loaded() -> None:
    host, events = ondemand(0)
    before = host.offer()
    assert before.names == (TOOL_SEARCH,) and before.deferred == 4
    CALL_ID.set("call_9")
    with anyio.fail_after(5):
        result = await host.entry.run({"query": "pull request"})
        again = await host.entry.run({"query": "pull request"})
    assert "s__create_pr" in result.content and not result.is_error
    assert host.offer().names == (TOOL_SEARCH, "s__create_pr") and host.offer().deferred == 3
    (loaded,) = events
    assert isinstance(loaded, ToolsLoaded)
    assert (loaded.id, loaded.query, loaded.loaded) == ("call_9", "pull request", ["s__create_pr"])
    assert "s__create_pr" in again.content  # found again, nothing new to say
    assert host.admit(TOOL_SEARCH) is host.entry
    assert host.admit("s__create_pr") is host.registry.get("s__create_pr")


@pytest.mark.anyio
async def test_search_never_finds_a_tool_out_of_scope() -> None:
    def gate(e: ToolEntry) -> str | None:
        return "disallowed" if e.tool == "get_issue" else None

    host, _ = ondemand(0, gate)
    with anyio.fail_after(5):
        result = await host.entry.run({"pattern": "issue", "limit": 20})
    assert "s__get_issue" not in result.content
    assert "s__get_issue" not in host.offer().names
    assert host.admit("s__get_issue") == "disallowed"


@pytest.mark.anyio
async def test_bad_arguments_are_error_results() -> None:
    host, _ = ondemand(0)
    with anyio.fail_after(5):
        both = await host.entry.run({"query": "a", "pattern": "b"})
        neither = await host.entry.run({})
        bad = await host.entry.run({"pattern": "(?<=x)y"})
    assert both.is_error and neither.is_error and "exactly one" in both.content
    assert bad.is_error and "RE2" in bad.content


def test_tools_json_reports_what_waits_on_demand(tmp_path: Path) -> None:
    from launcher.cli.views import tools_report
    from launcher.run_plan import RunPlan
    from launcher.session import Session

    agent = AgentSpec(name="t", tool_search=0)
    session = Session(RunPlan(agent, {}, workspace=tmp_path, state_home=tmp_path / "st"))
    session.registry.set_server_tools(
        "s", [ToolDef(e.tool, e.description) for e in TOOLS], make_caller
    )
    report = tools_report(session)
    assert report["on_demand"] == {"threshold": 0, "deferred": len(TOOLS)}
    assert {t["name"] for t in report["active"]} >= {e.name for e in TOOLS}  # all in scope
    assert TOOL_SEARCH in session.offer().names
