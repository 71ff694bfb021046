"""Memory tools: per-scope directories, listing, reading, writing, key confinement."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.config.types import MEMORY_TOOLS, MemoryScope
from launcher.tools import memory_entries
from launcher.toolset.types import ToolEntry, ToolResult


def _tools(tmp_path: Path, scope: MemoryScope, agent: str = "scout") -> dict[str, ToolEntry]:
    entries = memory_entries(agent, scope, tmp_path / "ws", tmp_path / "home")
    return {e.name: e for e in entries}


def _call(entry: ToolEntry, **args: object) -> ToolResult:
    return anyio.run(entry.call, args)


@pytest.mark.parametrize(
    ("scope", "where"),
    [
        ("project", "ws/.subagent/memory/scout"),
        ("local", "ws/.subagent/memory-local/scout"),
        ("user", "home/.config/subagent/memory/scout"),
    ],
)
def test_memory_write_stores_in_the_scope_directory(
    tmp_path: Path, scope: MemoryScope, where: str
) -> None:
    tools = _tools(tmp_path, scope)
    result = _call(tools["memory_write"], key="build", content="use make")
    assert not result.is_error
    assert (tmp_path / where / "build.md").read_text() == "use make"
    assert _call(tools["memory_read"], key="build").content == "use make"


def test_memory_entries_are_the_memory_tools(tmp_path: Path) -> None:
    entries = memory_entries("scout", "project", tmp_path, tmp_path)
    assert tuple(e.name for e in entries) == MEMORY_TOOLS
    assert all(e.source == "memory" and e.server is None for e in entries)


def test_memory_read_without_key_lists_keys(tmp_path: Path) -> None:
    tools = _tools(tmp_path, "project")
    assert "No memories" in _call(tools["memory_read"]).content
    _call(tools["memory_write"], key="b", content="2")
    _call(tools["memory_write"], key="a", content="1")
    assert _call(tools["memory_read"]).content.splitlines()[1:] == ["a", "b"]


def test_memory_is_per_agent(tmp_path: Path) -> None:
    _call(_tools(tmp_path, "user", "one")["memory_write"], key="k", content="v")
    result = _call(_tools(tmp_path, "user", "two")["memory_read"], key="k")
    assert result.is_error


def test_memory_read_unknown_key_is_an_error_listing_keys(tmp_path: Path) -> None:
    tools = _tools(tmp_path, "local")
    _call(tools["memory_write"], key="known", content="x")
    result = _call(tools["memory_read"], key="other")
    assert result.is_error
    assert "known" in result.content


@pytest.mark.parametrize("key", ["../escape", "a/b", "..", ".hidden", "", "a\\b", "x..y"])
def test_memory_keys_cannot_escape(tmp_path: Path, key: str) -> None:
    tools = _tools(tmp_path, "project")
    result = _call(tools["memory_write"], key=key, content="x")
    assert result.is_error
    assert "invalid memory key" in result.content
    assert _call(tools["memory_read"], key=key).is_error
    assert not (tmp_path / "escape.md").exists()


def test_memory_write_requires_content(tmp_path: Path) -> None:
    result = _call(_tools(tmp_path, "project")["memory_write"], key="k")
    assert result.is_error
    assert "'content'" in result.content


def test_memory_write_refuses_oversized_content(tmp_path: Path) -> None:
    result = _call(_tools(tmp_path, "project")["memory_write"], key="k", content="x" * 70_000)
    assert result.is_error
    assert "limit" in result.content


def test_agent_name_with_separators_stays_inside_memory_dir(tmp_path: Path) -> None:
    tools = _tools(tmp_path, "project", agent="../../evil")
    _call(tools["memory_write"], key="k", content="v")
    assert list((tmp_path / "ws" / ".subagent" / "memory").rglob("k.md"))


def test_memory_file_symlinked_outside_is_neither_read_nor_written(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    mem = tmp_path / "ws" / ".subagent" / "memory" / "scout"
    mem.mkdir(parents=True)
    (mem / "notes.md").symlink_to(secret)
    tools = _tools(tmp_path, "project")

    read = _call(tools["memory_read"], key="notes")
    write = _call(tools["memory_write"], key="notes", content="PWNED")

    assert read.is_error and "SECRET" not in read.content
    assert write.is_error
    assert secret.read_text() == "SECRET"


def test_memory_directory_symlinked_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("SECRET")
    base = tmp_path / "ws" / ".subagent" / "memory"
    base.mkdir(parents=True)
    (base / "scout").symlink_to(outside, target_is_directory=True)
    tools = _tools(tmp_path, "project")

    read = _call(tools["memory_read"], key="notes")
    write = _call(tools["memory_write"], key="other", content="PWNED")

    assert read.is_error and "SECRET" not in read.content
    assert write.is_error
    assert not (outside / "other.md").exists()
