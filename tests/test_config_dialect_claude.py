"""Claude Code's agent files read into our AgentSpec: names mapped, narrowing never dropped."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.dialect_claude import CLAUDE
from launcher.config.types import AgentSpec
from launcher.errors import ConfigError
from launcher.toolset.scope import ToolScope


def claude(frontmatter: str, warnings: list[str] | None = None) -> AgentSpec:
    text = f"---\n{frontmatter}\n---\nbody\n"
    return parse_agent_text(text, Path("/p/.claude/agents/a.md"), warnings, CLAUDE)


def raws(spec: AgentSpec) -> list[str]:
    return [s.raw for s in spec.tools or ()]


def test_tool_names_map_to_builtins_and_mcp_names_to_ext_selectors() -> None:
    spec = claude(
        "tools: Read, Glob, LS, MultiEdit, mcp__github__list_issues, mcp__docs, mcp__g__get_*"
    )
    assert raws(spec) == [
        "read",
        "find",
        "ls",
        "edit",
        "ext:github/list_issues",
        "ext:docs",
        "ext:g/get_*",
    ]
    assert ToolScope(spec).builtin_names() == ("read", "edit", "find", "ls")
    assert spec.dialect == "claude"


def test_a_tool_list_without_mcp_names_starts_no_server() -> None:
    spec = claude("tools: Read, Grep")
    assert spec.extensions is False
    assert ToolScope(spec).servers_to_start({"github": object()}) == []  # type: ignore[dict-item]


def test_unknown_tools_are_named_once_and_an_emptied_allowlist_allows_nothing() -> None:
    warnings: list[str] = []
    spec = claude("tools: WebFetch, TodoWrite", warnings)
    assert [s.kind for s in spec.tools or ()] == ["none"]
    assert ToolScope(spec).builtin_names() == ()
    (line,) = [w for w in warnings if "WebFetch" in w]
    assert line.startswith("/p/.claude/agents/a.md:2: tools:") and "TodoWrite" in line


def test_disallowed_tools_win_and_a_partial_rule_denies_the_whole_tool() -> None:
    warnings: list[str] = []
    spec = claude("disallowedTools: Write, Bash(rm:*), mcp__github__create_issue", warnings)
    assert list(dict.fromkeys(s.raw for s in spec.disallowed_tools)) == [
        "write",
        "bash",
        "mcp__github__create_issue",
    ]
    assert "write" not in ToolScope(spec).builtin_names()
    assert any("whole Bash tool is denied" in w for w in warnings)


def test_a_partial_allow_rule_is_refused() -> None:
    with pytest.raises(ConfigError) as info:
        claude("tools: Read, Bash(git diff:*)")
    assert info.value.field == "tools" and info.value.line == 2


@pytest.mark.parametrize("mode", ["plan", "dontAsk", "somethingNew"])
def test_narrowing_permission_modes_refuse_the_agent(mode: str) -> None:
    with pytest.raises(ConfigError) as info:
        claude(f"name: a\npermissionMode: {mode}")
    assert info.value.field == "permissionMode" and info.value.line == 3
    assert str(info.value).startswith("/p/.claude/agents/a.md:3: field 'permissionMode'")


def test_fields_with_no_effect_are_listed_in_one_line() -> None:
    warnings: list[str] = []
    claude("color: blue\npermissionMode: acceptEdits\nskills: [x]\neffort: high", warnings)
    (line,) = warnings
    assert line.endswith("ignored: color, permissionMode: acceptEdits, skills, effort")


def test_model_aliases_inherit_and_environment_override(monkeypatch: pytest.MonkeyPatch) -> None:
    assert claude("model: sonnet").model == "anthropic:claude-sonnet-4-5"
    assert claude("model: inherit").model is None
    assert claude("model: claude-opus-4-1").model == "anthropic:claude-opus-4-1"
    monkeypatch.setenv("SUBAGENT_MODEL_HAIKU", "openai:gpt-4.1-mini")
    assert claude("model: haiku").model == "openai:gpt-4.1-mini"
    with pytest.raises(ConfigError) as info:
        claude("model: gpt4")
    assert info.value.field == "model"


def test_max_turns_errors_name_the_field_as_the_file_spells_it() -> None:
    assert claude("maxTurns: 5").max_turns == 5
    with pytest.raises(ConfigError) as info:
        claude("name: a\nmaxTurns: 0")
    assert info.value.field == "maxTurns" and info.value.line == 3


def test_mcp_servers_by_name_and_inline_are_the_only_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOLO_TOKEN", "s3cret")
    spec = claude(
        "mcpServers:\n  - github\n  - solo:\n      command: solo-server\n"
        "      env: {TOKEN: '${SOLO_TOKEN}'}"
    )
    assert spec.extensions == ("github", "solo")
    (solo,) = spec.servers
    assert solo.name == "solo" and solo.command == "solo-server"
    assert solo.env == {"TOKEN": "s3cret"} and "s3cret" in solo.secrets
    servers = {"github": object(), "docs": object(), "solo": solo}
    assert ToolScope(spec).servers_to_start(servers) == ["github", "solo"]  # type: ignore[arg-type]


def test_tools_without_mcp_names_narrow_mcp_servers_too() -> None:
    spec = claude("tools: Read\nmcpServers: [github]")
    assert spec.extensions is False


def test_bad_inline_server_names_file_line_and_field() -> None:
    with pytest.raises(ConfigError) as info:
        claude("name: a\nmcpServers:\n  - solo: {args: [x]}")
    assert info.value.field == "mcpServers" and info.value.line == 3
    assert "solo" in str(info.value)


def test_memory_background_and_isolation_are_honoured() -> None:
    spec = claude("memory: project\nbackground: true\nisolation: worktree")
    assert (spec.memory, spec.background, spec.isolation) == ("project", True, "worktree")
    with pytest.raises(ConfigError) as info:
        claude("isolation: container")
    assert info.value.field == "isolation"
