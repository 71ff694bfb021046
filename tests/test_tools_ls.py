"""The ls tool: sorted entries with kind markers, bounded, and its refusals."""

from __future__ import annotations

from pathlib import Path

from tests.tools_support import call, run_tool, tools


def test_ls_lists_sorted_entries_with_markers(tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("x")
    (tmp_path / "a_dir").mkdir()
    (tmp_path / "c_link").symlink_to(tmp_path / "b.txt")
    result = run_tool(tmp_path, "ls")
    assert not result.is_error
    assert result.content.splitlines() == ["a_dir/", "b.txt", "c_link@"]


def test_ls_of_subdirectory(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "inner.txt").write_text("x")
    assert run_tool(tmp_path, "ls", path="d").content == "inner.txt"


def test_ls_of_empty_directory_says_so(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = run_tool(tmp_path, "ls", path="d")
    assert not result.is_error
    assert "empty" in result.content


def test_ls_of_missing_path_is_an_error(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "ls", path="nope")
    assert result.is_error
    assert "not found" in result.content


def test_ls_of_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    result = run_tool(tmp_path, "ls", path="f")
    assert result.is_error
    assert "not a directory" in result.content


def test_ls_output_is_capped_with_a_count(tmp_path: Path) -> None:
    for i in range(100):
        (tmp_path / f"file_{i:03}.txt").write_text("")
    result = call(tools(tmp_path, output_cap=500)["ls"])
    assert len(result.content) <= 500
    assert "more entries not shown" in result.content
