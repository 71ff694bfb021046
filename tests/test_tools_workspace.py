"""Workspace path confinement: what resolves inside and what is refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from launcher.errors import ToolError
from launcher.tools.workspace import Workspace


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Workspace, Path]:
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (root / "inside.txt").write_text("ok")
    return Workspace(root), outside


def test_relative_path_resolves_inside(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    assert ws.resolve("inside.txt") == ws.root / "inside.txt"


def test_absolute_path_inside_is_allowed(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    assert ws.resolve(str(ws.root / "inside.txt")) == ws.root / "inside.txt"


def test_dot_resolves_to_root_and_displays_as_dot(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    assert ws.display(ws.resolve(".")) == "."


def test_nonexistent_nested_path_inside_is_allowed(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    assert ws.resolve("a/b/../c.txt") == ws.root / "a" / "c.txt"


def test_dotdot_escape_is_refused(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.resolve("../outside/secret.txt")


def test_absolute_path_outside_is_refused(layout: tuple[Workspace, Path]) -> None:
    ws, outside = layout
    with pytest.raises(ToolError, match="outside the workspace"):
        ws.resolve(str(outside / "secret.txt"))


def test_symlink_to_outside_file_is_refused_naming_the_symlink(
    layout: tuple[Workspace, Path],
) -> None:
    ws, outside = layout
    (ws.root / "link").symlink_to(outside / "secret.txt")
    with pytest.raises(ToolError, match="through a symlink"):
        ws.resolve("link")


def test_path_through_symlinked_dir_to_outside_is_refused(layout: tuple[Workspace, Path]) -> None:
    ws, outside = layout
    (ws.root / "dirlink").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError, match="through a symlink"):
        ws.resolve("dirlink/new.txt")


def test_dangling_symlink_to_outside_is_refused(layout: tuple[Workspace, Path]) -> None:
    ws, outside = layout
    (ws.root / "dangling").symlink_to(outside / "does-not-exist.txt")
    with pytest.raises(ToolError, match="through a symlink"):
        ws.resolve("dangling")


def test_symlink_inside_the_workspace_is_followed(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    (ws.root / "alias").symlink_to(ws.root / "inside.txt")
    assert ws.resolve("alias") == ws.root / "inside.txt"


def test_empty_path_is_refused(layout: tuple[Workspace, Path]) -> None:
    ws, _ = layout
    with pytest.raises(ToolError, match="empty"):
        ws.resolve("")


def test_symlinked_workspace_root_still_confines(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real, target_is_directory=True)
    ws = Workspace(tmp_path / "alias")
    assert ws.resolve("f.txt") == real / "f.txt"
    with pytest.raises(ToolError):
        ws.resolve("../x")


def test_the_state_home_inside_the_workspace_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session run in ~ has SUBAGENT_HOME (OAuth tokens, the guard's record) inside its
    workspace: the file tools neither read, list nor write it."""
    root = tmp_path / "ws"
    state = root / ".local/state/subagent"
    (state / "auth").mkdir(parents=True)
    (state / "auth/remote.json").write_text('{"access_token": "x"}')
    monkeypatch.setenv("SUBAGENT_HOME", str(state))
    ws = Workspace(root)
    token = ws.resolve(".local/state/subagent/auth/remote.json")
    assert not ws.contains(token) and not ws.contains(state)
    with pytest.raises(ToolError, match="refused"):
        ws.open(token, os.O_RDONLY)
    with pytest.raises(ToolError, match="refused"):
        ws.open(ws.resolve(".local/state/subagent/guard/x.json"), os.O_WRONLY | os.O_CREAT)
    assert ws.contains(ws.resolve(".local/state/other.txt"))


def test_the_homes_credentials_are_refused_when_the_workspace_is_the_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session run in ~: the file tools read no SSH key, cloud credential or Ray token
    there, as the shell cannot; the rest of the home is the workspace's."""
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh/id_rsa").write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    (home / ".aws").mkdir()
    (home / ".aws/credentials").write_text("[default]\naws_secret_access_key = x")
    (home / "notes.txt").write_text("mine")
    monkeypatch.setenv("HOME", str(home))
    ws = Workspace(home)
    for rel in (".ssh/id_rsa", ".aws/credentials"):
        path = ws.resolve(rel)
        assert not ws.contains(path), rel
        with pytest.raises(ToolError, match="refused"):
            ws.open(path, os.O_RDONLY)
    assert ws.contains(ws.resolve("notes.txt"))
