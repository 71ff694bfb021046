"""A deny entry is never dropped: every spelling the docs list, any case, sanitized and
`__`-holding server names, rules finer than a tool; an allow entry we cannot honour
exactly refuses the agent. Scope is read through the real registry and naming."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.dialect import Dialect
from launcher.config.dialect_claude import CLAUDE
from launcher.config.dialect_pi import SUBAGENT
from launcher.config.discovery import load_config
from launcher.config.types import BUILTIN_TOOLS, AgentSpec, ServerSpec
from launcher.errors import ConfigError
from launcher.toolset.admission import admission
from launcher.toolset.naming import naming_for
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope
from launcher.toolset.types import ToolCaller, ToolDef, ToolEntry, ToolResult

SERVERS: dict[str, tuple[str, ...]] = {
    "gh.stub": ("create_issue", "list_issues"),
    "a__b": ("x", "y"),
    "plain": ("read", "READ", "Bash", "keep"),
}


async def _call(args: dict[str, Any]) -> ToolResult:
    return ToolResult("ok")


def _caller(name: str) -> ToolCaller:
    return _call


def offered(spec: AgentSpec) -> set[str]:
    """Every tool name the agent's model is offered, once every server has announced."""
    scope = ToolScope(spec)
    registry = ToolRegistry(
        gate=admission(scope), order=tuple(SERVERS), naming=naming_for(spec.dialect)
    )
    registry.add_local(
        ToolEntry(n, "builtin", n, "", {"type": "object"}, _call) for n in BUILTIN_TOOLS
    )
    for server, tools in SERVERS.items():
        registry.set_server_tools(server, [ToolDef(t) for t in tools], _caller)
    return {entry.name for entry in registry.entries()}


def agent(frontmatter: str, dialect: Dialect, warnings: list[str] | None = None) -> AgentSpec:
    text = f"---\n{frontmatter}\n---\nbody\n"
    return parse_agent_text(text, Path("/p/agents/a.md"), warnings, dialect)


@pytest.mark.parametrize(
    ("entry", "gone"),
    [
        ("mcp__gh_stub__create_issue", "mcp__gh_stub__create_issue"),
        ("mcp__a__b__x", "mcp__a__b__x"),
        ("ext:gh.stub/create_issue", "mcp__gh_stub__create_issue"),
        ("ext:gh_stub/create_issue", "mcp__gh_stub__create_issue"),
        ("gh.stub__create_issue", "mcp__gh_stub__create_issue"),
        ("gh_stub__create_issue", "mcp__gh_stub__create_issue"),
        ("a__b__x", "mcp__a__b__x"),
        ("MCP__GH_STUB__CREATE_ISSUE", "mcp__gh_stub__create_issue"),
        ("mcp__gh_stub__create_issue(owner:me)", "mcp__gh_stub__create_issue"),
        ("bash", "Bash"),
        ("write", "Write"),
        ("BASH", "Bash"),
        ("glob", "Glob"),
        ("Bash(rm:*)", "Bash"),
    ],
)
def test_a_claude_deny_entry_in_any_listed_spelling_denies(entry: str, gone: str) -> None:
    notes: list[str] = []
    wide = offered(agent("description: x", CLAUDE))
    assert gone in wide
    narrowed = offered(agent(f"disallowedTools: {json.dumps(entry)}", CLAUDE, notes))
    # A built-in's name also denies a server's tool of that name (`plain` has a `Bash`).
    assert narrowed == wide - {gone, f"mcp__plain__{gone}"}


@pytest.mark.parametrize(
    ("entry", "gone"),
    [
        ("mcp__gh_stub__create_issue", "gh_stub__create_issue"),
        ("ext:gh_stub/create_issue", "gh_stub__create_issue"),
        ("gh_stub__create_issue", "gh_stub__create_issue"),
        ("a__b__x", "a__b__x"),
        ("Write", "write"),
        ("Glob", "find"),
        ("mcp__gh_stub__create_issue(owner:me)", "gh_stub__create_issue"),
    ],
)
def test_our_deny_entry_in_any_listed_spelling_denies(entry: str, gone: str) -> None:
    wide = offered(agent("description: x", SUBAGENT))
    assert gone in wide
    assert offered(agent(f"disallowed_tools: {json.dumps(entry)}", SUBAGENT)) == wide - {gone}


def test_a_whole_server_deny_by_its_sanitized_name_denies_every_tool() -> None:
    names = offered(agent("disallowedTools: mcp__gh_stub", CLAUDE))
    assert not [name for name in names if "gh_stub" in name]
    assert "mcp__plain__keep" in names


@pytest.mark.parametrize("dialect", [CLAUDE, SUBAGENT], ids=lambda d: d.name)
def test_a_bare_builtin_name_also_denies_a_servers_tool_of_that_name(dialect: Dialect) -> None:
    field = "disallowedTools" if dialect is CLAUDE else "disallowed_tools"
    names = offered(agent(f"{field}: read, bash", dialect))
    prefix = "mcp__" if dialect is CLAUDE else ""
    assert not {f"{prefix}plain__read", f"{prefix}plain__READ", f"{prefix}plain__Bash"} & names
    assert f"{prefix}plain__keep" in names


def test_a_rule_denies_the_whole_tool_with_a_note() -> None:
    notes: list[str] = []
    agent("disallowedTools: mcp__gh_stub__create_issue(x), Bash(rm:*)", CLAUDE, notes)
    assert any("the whole mcp__gh_stub__create_issue tool is denied" in n for n in notes)
    assert any("the whole Bash tool is denied" in n for n in notes)


def test_a_name_that_is_no_tool_here_is_said_once() -> None:
    notes: list[str] = []
    agent("disallowedTools: WebFetch, WebFetch, Bash", CLAUDE, notes)
    said = [n for n in notes if "WebFetch" in n]
    assert len(said) == 1 and "nothing to deny" in said[0]


@pytest.mark.parametrize(
    "entry", ["Bash(git diff:*)", "mcp__github__", "mcp__github__list(x)", "Read(./src/**)"]
)
def test_an_allow_entry_we_cannot_honour_exactly_refuses_the_agent(entry: str) -> None:
    with pytest.raises(ConfigError) as caught:
        agent(f"tools: Read, {entry}", CLAUDE)
    assert caught.value.field == "tools"


def write_project(root: Path, agent_text: str) -> None:
    (root / ".claude" / "agents").mkdir(parents=True)
    (root / ".claude" / "agents" / "a.md").write_text(agent_text)
    (root / ".subagent").mkdir()
    servers = {name: {"command": "true"} for name in SERVERS}
    (root / ".subagent" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_a_deny_of_a_sanitized_name_is_not_said_to_name_no_server(tmp_path: Path) -> None:
    deny = "mcp__gh_stub__create_issue, mcp__a__b__x, mcp__nosuch__t, mcp__nosuch__t"
    write_project(tmp_path, f"---\ndisallowedTools: {deny}\n---\nbody\n")
    config = load_config(cwd=tmp_path, home=tmp_path / "home", env={})
    said = [w for w in config.warnings if "names no configured server" in w]
    assert len(said) == 1 and "mcp__nosuch__t" in said[0]


@pytest.mark.parametrize(
    ("dialect", "field"),
    [
        (SUBAGENT, "disallowedTools"),
        (SUBAGENT, "mcpServers"),
        (SUBAGENT, "maxTurns"),
        (SUBAGENT, "disalowed_tools"),
        (SUBAGENT, "Tools"),
        (SUBAGENT, "tool"),
        (CLAUDE, "disallowed_tools"),
        (CLAUDE, "disallowedtools"),
        (CLAUDE, "DisallowedTools"),
        (CLAUDE, "disalowedTools"),
        (CLAUDE, "allowed-tools"),
        (CLAUDE, "Tools"),
        (CLAUDE, "extensions"),
        (CLAUDE, "isolated"),
        (CLAUDE, "excludeTools"),
    ],
)
def test_a_field_that_looks_like_a_restriction_refuses_the_agent(
    dialect: Dialect, field: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        agent(f"description: x\n{field}: Bash", dialect)
    assert caught.value.line == 3
    assert "restriction" in caught.value.message


@pytest.mark.parametrize("field", ["category", "tags", "version", "author", "examples"])
def test_other_unknown_fields_are_only_warned_about(field: str) -> None:
    warnings: list[str] = []
    agent(f"description: x\n{field}: y", CLAUDE, warnings)
    assert any(f"unknown field '{field}'" in w for w in warnings)


@pytest.mark.parametrize("dialect", [CLAUDE, SUBAGENT], ids=lambda d: d.name)
@pytest.mark.parametrize("value", ["[]", '""', "none", "None", "''"])
def test_empty_tools_mean_nothing_in_every_dialect(dialect: Dialect, value: str) -> None:
    assert offered(agent(f"tools: {value}", dialect)) == set()


def test_our_tools_none_with_an_extensions_list_keeps_those_servers() -> None:
    names = offered(agent("tools: none\nextensions: [plain]", SUBAGENT))
    assert names == {"plain__read", "plain__READ", "plain__Bash", "plain__keep"}


@pytest.mark.parametrize("entry", ["mcp__gh_stub", "mcp__GH_STUB__*", "gh_stub__*"])
def test_a_server_denied_whole_by_its_exposed_name_never_starts(entry: str) -> None:
    spec = agent(f"disallowedTools: {json.dumps(entry)}", CLAUDE)
    servers = {name: ServerSpec(name, command="true") for name in SERVERS}
    assert ToolScope(spec).servers_to_start(servers) == ["a__b", "plain"]
