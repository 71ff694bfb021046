"""Agent files: frontmatter fields, defaults and warnings."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.config.agents import parse_agent_file, parse_agent_text
from launcher.config.types import Selector
from launcher.errors import ConfigError

FULL = """---
name: reviewer
description: Reviews code.
model: openai:gpt-4.1-mini
tools: read, grep, ext:github/list_*
extensions: [github, docs]
disallowed_tools:
  - bash
  - github__delete_*
isolated: false
memory: project
max_turns: 7
---

You review code.
"""


def test_every_field_is_parsed(tmp_path: Path) -> None:
    path = tmp_path / "reviewer.md"
    path.write_text(FULL)
    spec = parse_agent_file(path)
    assert spec.name == "reviewer"
    assert spec.description == "Reviews code."
    assert spec.model == "openai:gpt-4.1-mini"
    assert spec.tools == (
        Selector(kind="builtin", name="read", raw="read"),
        Selector(kind="builtin", name="grep", raw="grep"),
        Selector(kind="ext", server="github", tool="list_*", raw="ext:github/list_*"),
    )
    assert spec.extensions == ("github", "docs")
    assert list(dict.fromkeys(s.raw for s in spec.disallowed_tools)) == ["bash", "github__delete_*"]
    assert spec.isolated is False
    assert spec.memory == "project"
    assert spec.max_turns == 7
    assert spec.prompt == "You review code."
    assert spec.source == path


def test_omitted_fields_take_defaults_and_name_comes_from_stem() -> None:
    spec = parse_agent_text("---\ndescription: d\n---\nbody\n", Path("/x/my-agent.md"))
    assert spec.name == "my-agent"
    assert spec.tools is None
    assert spec.extensions is True
    assert spec.disallowed_tools == ()
    assert (spec.isolated, spec.memory, spec.max_turns, spec.model) == (False, None, None, None)


def test_file_without_frontmatter_is_all_prompt() -> None:
    spec = parse_agent_text("Just a prompt.\n---\nmore\n", Path("/x/plain.md"))
    assert spec.name == "plain"
    assert spec.prompt == "Just a prompt.\n---\nmore"


def test_extensions_accepts_false_and_csv() -> None:
    off = parse_agent_text("---\nextensions: false\n---\n", Path("a.md"))
    csv = parse_agent_text("---\nextensions: github, docs\n---\n", Path("a.md"))
    assert off.extensions is False
    assert csv.extensions == ("github", "docs")


def test_isolated_true_and_tools_list() -> None:
    spec = parse_agent_text("---\nisolated: true\ntools: [ls, find]\n---\n", Path("a.md"))
    assert spec.isolated is True
    assert [s.name for s in spec.tools or ()] == ["ls", "find"]


def test_a_null_restriction_is_refused_not_read_as_omitted() -> None:
    for field in ("tools", "extensions"):
        with pytest.raises(ConfigError, match="no value"):
            parse_agent_text(f"---\n{field}:\n---\n", Path("a.md"))


def test_quoted_star_selects_all() -> None:
    spec = parse_agent_text('---\ntools: "*"\n---\n', Path("a.md"))
    assert [s.kind for s in spec.tools or ()] == ["all"]


def test_model_inherit_means_default_model() -> None:
    assert parse_agent_text("---\nmodel: inherit\n---\n", Path("a.md")).model is None


def test_unknown_field_is_a_warning_with_line_and_hint() -> None:
    warnings: list[str] = []
    text = "---\nname: a\nshade: blue\ndisplayName: A\n---\n"
    spec = parse_agent_text(text, Path("/x/a.md"), warnings)
    assert spec.name == "a"
    assert warnings[0].startswith("/x/a.md:3: unknown field 'shade'")
    assert "/x/a.md:4:" in warnings[1] and "did you mean 'display_name'" in warnings[1]


def test_crlf_and_bom_are_accepted() -> None:
    spec = parse_agent_text("\ufeff---\r\nname: w\r\n---\r\nhi\r\n", Path("a.md"))
    assert (spec.name, spec.prompt) == ("w", "hi")
