"""A glob that cannot be compiled is a tool error saying what is wrong, never an internal one."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tools_support import run_tool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.py").write_text("zebra\n")
    return tmp_path


@pytest.mark.parametrize("tool", ["find", "grep"])
def test_a_backwards_range_is_named_with_the_fix(tree: Path, tool: str) -> None:
    args = {"pattern": "[z-a]*"} if tool == "find" else {"pattern": "zebra", "glob": "[z-a]*"}

    result = run_tool(tree, tool, **args)

    assert result.is_error
    assert "internal error" not in result.content
    assert "'[z-a]*'" in result.content and "'z-a'" in result.content
    assert "a-z" in result.content  # the fix


@pytest.mark.parametrize("pattern", ["[!]", "src/[!]x]"])
def test_another_uncompilable_glob_is_named(tree: Path, pattern: str) -> None:
    result = run_tool(tree, "find", pattern=pattern)

    assert result.is_error
    assert "internal error" not in result.content
    assert f"invalid glob '{pattern}'" in result.content


@pytest.mark.parametrize("pattern", ["[a-z]*.py", "[!b-y]*", "[-a]*", "[a-]*"])
def test_ranges_that_run_forward_still_match(tree: Path, pattern: str) -> None:
    result = run_tool(tree, "find", pattern=pattern)

    assert not result.is_error and result.content == "a.py"
