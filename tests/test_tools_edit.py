"""The edit tool: exact single replacement, replace_all, and every refusal."""

from __future__ import annotations

from pathlib import Path

from tests.tools_support import run_tool


def test_edit_replaces_a_unique_match(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a = 1\nb = 2\n")
    result = run_tool(tmp_path, "edit", path="f.py", old="b = 2", new="b = 3")
    assert not result.is_error
    assert "Replaced 1 occurrence" in result.content
    assert (tmp_path / "f.py").read_text() == "a = 1\nb = 3\n"


def test_edit_refuses_multiple_matches_and_says_how_many(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x\nx\nx\n")
    result = run_tool(tmp_path, "edit", path="f.py", old="x", new="y")
    assert result.is_error
    assert "3 times" in result.content
    assert (tmp_path / "f.py").read_text() == "x\nx\nx\n"


def test_edit_replace_all_replaces_every_match(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x\nx\nx\n")
    result = run_tool(tmp_path, "edit", path="f.py", old="x", new="y", replace_all=True)
    assert not result.is_error
    assert "Replaced 3 occurrences" in result.content
    assert (tmp_path / "f.py").read_text() == "y\ny\ny\n"


def test_edit_refuses_absent_old_string(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("abc\n")
    result = run_tool(tmp_path, "edit", path="f.py", old="zzz", new="y")
    assert result.is_error
    assert "0 matches" in result.content


def test_edit_refuses_empty_old_string(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("abc\n")
    result = run_tool(tmp_path, "edit", path="f.py", old="", new="y")
    assert result.is_error
    assert "empty" in result.content


def test_edit_refuses_identical_old_and_new(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("abc\n")
    result = run_tool(tmp_path, "edit", path="f.py", old="abc", new="abc")
    assert result.is_error
    assert "identical" in result.content


def test_edit_missing_file_is_an_error(tmp_path: Path) -> None:
    result = run_tool(tmp_path, "edit", path="nope.py", old="a", new="b")
    assert result.is_error
    assert "not found" in result.content


def test_edit_preserves_crlf_line_endings(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"one\r\ntwo\r\n")
    result = run_tool(tmp_path, "edit", path="f.txt", old="two", new="2")
    assert not result.is_error
    assert (tmp_path / "f.txt").read_bytes() == b"one\r\n2\r\n"


def test_edit_refuses_invalid_utf8_instead_of_mangling_it(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"caf\xe9 abc\n")
    result = run_tool(tmp_path, "edit", path="f.txt", old="abc", new="x")
    assert result.is_error
    assert "UTF-8" in result.content
    assert (tmp_path / "f.txt").read_bytes() == b"caf\xe9 abc\n"


def test_edit_refuses_binary_file(tmp_path: Path) -> None:
    (tmp_path / "f.bin").write_bytes(b"ab\x00cd")
    result = run_tool(tmp_path, "edit", path="f.bin", old="ab", new="x")
    assert result.is_error
    assert "binary" in result.content
