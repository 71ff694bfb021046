"""Hook matchers read as Claude Code's hooks reference says: all, exact names, or a regex."""

from __future__ import annotations

import re

import pytest

from launcher.hooks.matcher import compile_matcher, matches


@pytest.mark.parametrize("matcher", [None, "", "*", "  "])
def test_empty_or_star_matches_every_tool(matcher: str | None) -> None:
    assert matches(matcher, "Bash")
    assert matches(matcher, "mcp__github__create_issue")


def test_a_plain_name_is_exact() -> None:
    assert matches("Bash", "Bash")
    assert not matches("Bash", "BashOutput")
    assert not matches("Bash", "bash")


@pytest.mark.parametrize("matcher", ["Edit|Write", "Edit, Write", "Edit , Write", "Edit| Write"])
def test_a_list_of_names_matches_each_exactly(matcher: str) -> None:
    assert matches(matcher, "Edit")
    assert matches(matcher, "Write")
    assert not matches(matcher, "NotebookEdit")
    assert not matches(matcher, "MultiEdit")


def test_a_hyphenated_name_is_exact() -> None:
    assert matches("code-reviewer", "code-reviewer")
    assert not matches("code-reviewer", "senior-code-reviewer")


def test_a_server_prefix_alone_matches_no_tool() -> None:
    # Claude Code: `mcp__memory` is an exact string and matches no tool; `.*` is needed.
    assert not matches("mcp__memory", "mcp__memory__create_entities")
    assert matches("mcp__memory__.*", "mcp__memory__create_entities")
    assert not matches("mcp__memory__.*", "mcp__filesystem__read_file")


def test_a_regex_is_unanchored() -> None:
    assert matches("Edit.*", "NotebookEdit")
    assert matches("^Notebook", "NotebookEdit")
    assert not matches("^Edit$", "NotebookEdit")
    assert matches("mcp__.*__write.*", "mcp__fs__write_file")


def test_javascript_named_groups_are_read() -> None:
    assert matches("(?<srv>mcp__gh)__.*", "mcp__gh__list_issues")
    assert matches("(?<!Multi)Edit$", "Edit")
    assert not matches("(?<!Multi)Edit$", "MultiEdit")


def test_a_broken_regex_raises() -> None:
    with pytest.raises(re.error):
        compile_matcher("Bash(")
