"""Every file tool refuses paths that leave the workspace, whatever the route."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.tools_support import run_tool

SECRET = "top-secret-content"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (root / "file_link").symlink_to(outside / "secret.txt")
    (root / "dir_link").symlink_to(outside, target_is_directory=True)
    return root


def _outside_abs(ws: Path) -> str:
    return str(ws.parent / "outside" / "secret.txt")


ROUTES = ["../outside/secret.txt", "ABS", "file_link", "dir_link/secret.txt"]
DIR_ROUTES = ["../outside", "ABSDIR", "dir_link"]


def _path(ws: Path, route: str) -> str:
    if route == "ABS":
        return _outside_abs(ws)
    if route == "ABSDIR":
        return str(ws.parent / "outside")
    return route


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [
        ("read", {}),
        ("write", {"content": "pwned"}),
        ("edit", {"old": SECRET, "new": "pwned"}),
    ],
)
def test_file_tool_refuses_escape(ws: Path, route: str, tool: str, extra: dict[str, Any]) -> None:
    result = run_tool(ws, tool, path=_path(ws, route), **extra)
    assert result.is_error
    assert "outside the workspace" in result.content
    assert SECRET not in result.content
    assert (ws.parent / "outside" / "secret.txt").read_text() == SECRET + "\n"


@pytest.mark.parametrize("route", DIR_ROUTES)
@pytest.mark.parametrize(
    ("tool", "extra"),
    [("ls", {}), ("grep", {"pattern": "secret"}), ("find", {"pattern": "*"})],
)
def test_dir_tool_refuses_escape(ws: Path, route: str, tool: str, extra: dict[str, Any]) -> None:
    result = run_tool(ws, tool, path=_path(ws, route), **extra)
    assert result.is_error
    assert "outside the workspace" in result.content
    assert "secret.txt" not in result.content


def test_grep_over_workspace_skips_symlinks_to_outside(ws: Path) -> None:
    (ws / "mine.txt").write_text("a secret of my own\n")
    result = run_tool(ws, "grep", pattern="secret")
    assert not result.is_error
    assert "mine.txt:1:" in result.content
    assert SECRET not in result.content


def test_find_over_workspace_does_not_list_or_descend_outside_links(ws: Path) -> None:
    (ws / "mine.txt").write_text("x")
    result = run_tool(ws, "find", pattern="*")
    assert result.content.splitlines() == ["mine.txt"]


def test_write_through_dangling_symlink_to_outside_is_refused(ws: Path) -> None:
    target = ws.parent / "outside" / "created.txt"
    (ws / "dangling").symlink_to(target)
    result = run_tool(ws, "write", path="dangling", content="x")
    assert result.is_error
    assert not target.exists()
