"""Our own format is pi-subagents' frontmatter: its scope rules and its other fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_text
from launcher.config.dialect_pi import PI
from launcher.config.types import AgentSpec
from launcher.errors import ConfigError
from launcher.toolset.admission import admission
from launcher.toolset.scope import DISALLOWED, ToolScope
from launcher.toolset.types import ToolEntry, ToolResult


def pi(frontmatter: str, warnings: list[str] | None = None) -> AgentSpec:
    return parse_agent_text(f"---\n{frontmatter}\n---\nbody\n", Path("/p/a.md"), warnings, PI)


async def _call(arguments: dict) -> ToolResult:
    return ToolResult("")


def tool(server: str, name: str) -> ToolEntry:
    return ToolEntry(f"{server}__{name}", server, name, "", {"type": "object"}, _call)


def test_a_bare_name_in_disallowed_tools_denies_that_tool_on_every_server() -> None:
    scope = ToolScope(pi("tools: '*, ext:alpha'\ndisallowed_tools: alpha_write, bash"))
    assert scope.gate(tool("alpha", "alpha_write")) == DISALLOWED
    assert scope.gate(tool("beta", "alpha_write")) == DISALLOWED
    assert admission(scope)(tool("alpha", "alpha_read")) is None
    assert "bash" not in scope.builtin_names()


def test_exclude_extensions_beats_an_ext_selector_and_the_server_never_starts() -> None:
    spec = pi("extensions: alpha, beta\nexclude_extensions: beta\ntools: '*, ext:beta'")
    scope = ToolScope(spec)
    assert admission(scope)(tool("beta", "beta_tool")) == DISALLOWED
    servers = {"alpha": object(), "beta": object()}
    assert scope.servers_to_start(servers) == []  # type: ignore[arg-type]


def test_display_name_isolation_and_background_are_read() -> None:
    spec = pi("display_name: Scout\nisolation: worktree\nrun_in_background: true")
    assert (spec.display_name, spec.isolation, spec.background) == ("Scout", "worktree", True)
    assert pi("enabled: false").enabled is False


def test_pi_fields_with_no_effect_are_listed_and_unknown_ones_warned() -> None:
    warnings: list[str] = []
    pi("prompt_mode: append\nskills: x\nthinking: high\nexpect_tools_present: read", warnings)
    assert any(w.endswith("ignored: prompt_mode, skills, thinking") for w in warnings)
    assert any("unknown field 'expect_tools_present'" in w for w in warnings)


def test_inherit_extensions_is_extensions() -> None:
    assert pi("inherit_extensions: alpha").extensions == ("alpha",)
    assert pi("extensions: alpha, beta\ninherit_extensions: beta").extensions == ("beta",)


def test_scripted_model_path_is_relative_to_the_agent_file(tmp_path: Path) -> None:
    spec = parse_agent_text("---\nmodel: scripted:../s.yaml\n---\n", tmp_path / "agents" / "a.md")
    assert spec.model == f"scripted:{tmp_path / 'agents' / '..' / 's.yaml'}"
    absolute = parse_agent_text("---\nmodel: scripted:/x/s.yaml\n---\n", tmp_path / "a.md")
    assert absolute.model == "scripted:/x/s.yaml"


def test_bad_enabled_value_names_the_field() -> None:
    with pytest.raises(ConfigError) as info:
        pi("name: a\nenabled: maybe")
    assert (info.value.field, info.value.line) == ("enabled", 3)


def test_allowed_subagents_in_pi_spellings() -> None:
    assert pi("allowed_subagents: none").allowed_subagents == ()
    assert pi("allowed_subagents: false").allowed_subagents == ()
    assert pi("allowed_subagents: a, b").allowed_subagents == ("a", "b")
    with pytest.raises(ConfigError) as info:
        pi("allowed_subagents: all")
    assert info.value.field == "allowed_subagents"
