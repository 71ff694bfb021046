"""Agent frontmatter for delegation: `allowed_subagents`, `max_depth`, and the opt-in tool."""

from __future__ import annotations

import pytest

from launcher.config.agents import parse_agent_text
from launcher.errors import ConfigError
from launcher.toolset.scope import ToolScope


def test_fields_parse_and_default() -> None:
    spec = parse_agent_text("---\nallowed_subagents: a, b\nmax_depth: 0\n---\n", "x.md")
    assert spec.allowed_subagents == ("a", "b")
    assert spec.max_depth == 0
    assert parse_agent_text("---\nname: y\n---\n", "y.md").max_depth == 2


@pytest.mark.parametrize(
    ("text", "field"),
    [("allowed_subagents: 3", "allowed_subagents"), ("max_depth: -1", "max_depth")],
)
def test_bad_values_name_the_field(text: str, field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_agent_text(f"---\n{text}\n---\n", "bad.md")
    assert caught.value.field == field
    assert "bad.md" in str(caught.value)


def test_delegation_only_when_named() -> None:
    named = parse_agent_text("---\ntools: [read, subagent]\n---\n", "a.md")
    star = parse_agent_text("---\ntools: '*'\n---\n", "b.md")
    omitted = parse_agent_text("---\nname: c\n---\n", "c.md")
    assert "subagent" in ToolScope(named).builtin_names()
    assert "subagent" not in ToolScope(star).builtin_names()
    assert "subagent" not in ToolScope(omitted).builtin_names()
