"""The read tool: numbered lines, offset/limit windows, and its refusals."""

from __future__ import annotations

from pathlib import Path

from launcher.tools.files import MAX_FILE_BYTES
from tests.tools_support import call, run_tool, tools


def test_read_returns_lines_numbered_from_one(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    result = run_tool(tmp_path, "read", path="a.txt")
    assert not result.is_error
    assert result.content == "     1\talpha\n     2\tbeta"


def test_read_window_says_how_to_continue(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("".join(f"line{i}\n" for i in range(1, 11)))
    result = run_tool(tmp_path, "read", path="a.txt", offset=3, limit=2)
    lines = result.content.splitlines()
    assert lines[:2] == ["     3\tline3", "     4\tline4"]
    assert "continue with offset=5" in lines[2]


def test_read_offset_past_end_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    result = run_tool(tmp_path, "read", path="a.txt", offset=5)
    assert result.is_error
    assert "past the end" in result.content


def test_read_empty_file_says_so(tmp_path: Path) -> None:
    (tmp_path / "e.txt").write_text("")
    result = run_tool(tmp_path, "read", path="e.txt")
    assert not result.is_error
    assert "empty" in result.content


def test_read_missing_file_is_an_error(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "read", path="nope.txt")
    assert result.is_error
    assert "not found: nope.txt" in result.content


def test_read_directory_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    result = run_tool(tmp_path, "read", path="d")
    assert result.is_error
    assert "is a directory" in result.content


def test_read_binary_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"\x7fELF\x00\x01\x02")
    result = run_tool(tmp_path, "read", path="b.bin")
    assert result.is_error
    assert "binary" in result.content


def test_read_huge_file_is_refused(tmp_path: Path) -> None:
    with (tmp_path / "big.log").open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)  # sparse: no real disk use
    result = run_tool(tmp_path, "read", path="big.log")
    assert result.is_error
    assert "limit" in result.content


def test_read_output_is_capped_at_a_line_boundary(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x" * 100 + "\n" + ("y" * 100 + "\n") * 50)
    result = call(tools(tmp_path, output_cap=1000)["read"], path="a.txt")
    assert len(result.content) <= 1000
    assert "output cap" in result.content
    assert "continue with offset=" in result.content


def test_read_bad_arguments_are_errors_not_exceptions(tmp_path: Path) -> None:
    read = tools(tmp_path)["read"]
    assert "missing required argument 'path'" in call(read).content
    assert "must be an integer" in call(read, path="a", offset="x").content
    assert "at least 1" in call(read, path="a", offset=0).content
