"""The find tool: glob matching by name or relative path, bounded, skipping .git."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.tools.search import MAX_FIND_RESULTS, compile_glob
from tests.tools_support import run_tool


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in ["a.py", "src/b.py", "src/pkg/c.py", "src/pkg/d.txt", ".git/objects/x.py"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    return tmp_path


def test_find_name_glob_matches_at_any_depth_and_skips_git(tree: Path) -> None:
    result = run_tool(tree, "find", pattern="*.py")
    assert result.content.splitlines() == ["a.py", "src/b.py", "src/pkg/c.py"]


def test_find_path_glob_with_double_star(tree: Path) -> None:
    result = run_tool(tree, "find", pattern="src/**/*.py")
    assert result.content.splitlines() == ["src/b.py", "src/pkg/c.py"]


def test_find_under_a_subdirectory_reports_workspace_paths(tree: Path) -> None:
    result = run_tool(tree, "find", pattern="*", path="src/pkg")
    assert result.content.splitlines() == ["src/pkg/c.py", "src/pkg/d.txt"]


def test_find_marks_directories(tree: Path) -> None:
    assert run_tool(tree, "find", pattern="pkg").content == "src/pkg/"


def test_find_without_matches_is_not_an_error(tree: Path) -> None:
    result = run_tool(tree, "find", pattern="*.rs")
    assert not result.is_error
    assert "No paths match" in result.content


def test_find_in_missing_directory_is_an_error(tree: Path) -> None:
    result = run_tool(tree, "find", pattern="*", path="nope")
    assert result.is_error
    assert "not found" in result.content


def test_find_without_pattern_is_an_error(tree: Path) -> None:
    result = run_tool(tree, "find")
    assert result.is_error
    assert "'pattern'" in result.content


def test_find_result_count_is_bounded(tmp_path: Path) -> None:
    for i in range(MAX_FIND_RESULTS + 5):
        (tmp_path / f"f{i}.txt").write_text("")
    result = run_tool(tmp_path, "find", pattern="*.txt")
    lines = result.content.splitlines()
    assert len(lines) == MAX_FIND_RESULTS + 1
    assert "stopped after" in lines[-1]


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("a/*.py", "a/b/c.py", False),
        ("a/**/c.py", "a/c.py", True),
        ("test_[!x]?.py", "test_ab.py", True),
        ("test_[!x]?.py", "test_xb.py", False),
    ],
)
def test_glob_matching_rules(pattern: str, path: str, expected: bool) -> None:
    assert compile_glob(pattern)(path) is expected
