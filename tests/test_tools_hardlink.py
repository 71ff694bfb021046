"""A hard link names a file that may live outside the workspace: file tools refuse it."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from launcher.tools import memory_entries
from tests.tools_support import run_tool

SECRET = "outside-secret"


@pytest.fixture
def linked(tmp_path: Path) -> Path:
    """A workspace whose `link.txt` is a hard link to a file outside it."""
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET + "\n")
    os.link(outside, root / "link.txt")
    return root


def test_read_of_hard_linked_file_is_refused(linked: Path) -> None:
    result = run_tool(linked, "read", path="link.txt")
    assert result.is_error
    assert "2 hard links" in result.content
    assert SECRET not in result.content


@pytest.mark.parametrize(
    ("tool", "extra"),
    [("write", {"content": "pwned"}), ("edit", {"old": SECRET, "new": "pwned"})],
)
def test_change_of_hard_linked_file_is_refused(
    linked: Path, tool: str, extra: dict[str, str]
) -> None:
    result = run_tool(linked, tool, path="link.txt", **extra)
    assert result.is_error
    assert "hard links" in result.content
    assert (linked.parent / "outside.txt").read_text() == SECRET + "\n"


def test_grep_skips_hard_linked_files(linked: Path) -> None:
    (linked / "mine.txt").write_text(SECRET + " of my own\n")
    result = run_tool(linked, "grep", pattern=SECRET)
    assert result.content.splitlines() == [f"mine.txt:1:{SECRET} of my own"]


def test_memory_hard_linked_outside_is_neither_read_nor_written(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text(SECRET)
    mem = tmp_path / "ws" / ".subagent" / "memory" / "scout"
    mem.mkdir(parents=True)
    os.link(outside, mem / "notes.md")
    tools = {e.name: e for e in memory_entries("scout", "project", tmp_path / "ws", tmp_path)}

    read = anyio.run(tools["memory_read"].call, {"key": "notes"})
    write = anyio.run(tools["memory_write"].call, {"key": "notes", "content": "PWNED"})

    assert read.is_error and SECRET not in read.content
    assert write.is_error and "hard links" in write.content
    assert outside.read_text() == SECRET


def test_single_link_file_is_still_written_and_read(tmp_path: Path) -> None:
    assert not run_tool(tmp_path, "write", path="a.txt", content="hello\n").is_error
    assert "hello" in run_tool(tmp_path, "read", path="a.txt").content
