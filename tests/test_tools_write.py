"""The write tool: creates files and parent directories, overwrites, refuses directories."""

from __future__ import annotations

from pathlib import Path

from tests.tools_support import run_tool


def test_write_creates_file_and_parent_dirs(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "write", path="a/b/c.txt", content="héllo\n")
    assert not result.is_error
    assert (tmp_path / "a" / "b" / "c.txt").read_text(encoding="utf-8") == "héllo\n"
    assert "created" in result.content
    assert "a/b/c.txt" in result.content


def test_write_overwrites_existing_file(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("old")
    result = run_tool(tmp_path, "write", path="f.txt", content="new")
    assert not result.is_error
    assert "overwrote" in result.content
    assert (tmp_path / "f.txt").read_text() == "new"


def test_write_to_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = run_tool(tmp_path, "write", path="d", content="x")
    assert result.is_error
    assert "is a directory" in result.content


def test_write_without_content_is_an_error(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "write", path="f.txt")
    assert result.is_error
    assert "'content'" in result.content
    assert not (tmp_path / "f.txt").exists()


def test_write_under_a_file_used_as_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    result = run_tool(tmp_path, "write", path="f/child.txt", content="x")
    assert result.is_error
    assert result.content.startswith("write: ")
