"""The grep tool: regex over text files, path:line:text output, bounded, skips binary/.git."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.tools.search import MAX_GREP_MATCHES
from tests.tools_support import call, run_tool, tools


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("import os\ndef Needle():\n    pass\n")
    (tmp_path / "notes.md").write_text("a needle here\n")
    (tmp_path / "blob.bin").write_bytes(b"needle\x00\x01")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("needle\n")
    return tmp_path


def test_grep_reports_path_line_and_text(tree: Path) -> None:
    result = run_tool(tree, "grep", pattern="needle")
    assert not result.is_error
    assert result.content.splitlines() == ["notes.md:1:a needle here"]


def test_grep_ignore_case(tree: Path) -> None:
    result = run_tool(tree, "grep", pattern="needle", ignore_case=True)
    assert result.content.splitlines() == ["notes.md:1:a needle here", "src/a.py:2:def Needle():"]


def test_grep_glob_filters_files(tree: Path) -> None:
    result = run_tool(tree, "grep", pattern="e", glob="*.py")
    assert all(line.startswith("src/a.py:") for line in result.content.splitlines())


def test_grep_single_file_path(tree: Path) -> None:
    assert (
        run_tool(tree, "grep", pattern="^import", path="src/a.py").content == "src/a.py:1:import os"
    )


def test_grep_without_matches_is_not_an_error(tree: Path) -> None:
    result = run_tool(tree, "grep", pattern="absent-word")
    assert not result.is_error
    assert "No matches" in result.content


def test_grep_invalid_regex_is_an_error(tree: Path) -> None:
    result = run_tool(tree, "grep", pattern="(unclosed")
    assert result.is_error
    assert "invalid regular expression" in result.content


def test_grep_missing_path_is_an_error(tree: Path) -> None:
    result = run_tool(tree, "grep", pattern="x", path="nope")
    assert result.is_error
    assert "not found" in result.content


def test_grep_match_count_is_bounded(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text("hit\n" * (MAX_GREP_MATCHES + 10))
    lines = run_tool(tmp_path, "grep", pattern="hit").content.splitlines()
    assert len(lines) == MAX_GREP_MATCHES + 1
    assert "stopped after" in lines[-1]


def test_grep_output_is_capped(tmp_path: Path) -> None:
    (tmp_path / "many.txt").write_text(("hit " + "x" * 80 + "\n") * 100)
    result = call(tools(tmp_path, output_cap=1000)["grep"], pattern="hit")
    assert len(result.content) <= 1000
    assert "stopped after" in result.content
