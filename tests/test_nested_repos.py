"""The defusing of git repositories the model made (launcher/trust/nested.py): what an
adversary swaps in under the walk and the rewrite."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from launcher.trust import gitwalk, nested
from launcher.trust.nested import NestedGuard


def _git(*args: str, cwd: Path) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _workspace(tmp_path: Path) -> tuple[Path, NestedGuard]:
    ws = tmp_path / "ws"
    ws.mkdir()
    _git("init", "-q", cwd=ws)
    _git("config", "core.pager", "cat", cwd=ws)  # the user's own: never touched
    return ws, NestedGuard.start(ws)


def test_a_config_swapped_for_a_link_is_replaced_not_followed(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    _git("init", "-q", "sub", cwd=ws)
    victim = tmp_path / "victim.cfg"
    victim.write_text("[core]\n\tfsmonitor = touch x\n")
    config = ws / "sub/.git/config"
    config.unlink()
    config.symlink_to(victim)
    said = guard.check()
    assert said == ["sub/.git (config (not a plain file, unreadable or too large: emptied))"]
    assert victim.read_text() == "[core]\n\tfsmonitor = touch x\n"
    assert not config.is_symlink() and "fsmonitor" not in config.read_text()


def test_a_nested_git_link_to_the_users_repository_is_not_followed(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    (ws / "sub").mkdir()
    (ws / "sub/.git").symlink_to(ws / ".git")
    assert guard.check() == []  # it points at the user's own repository, protected apart
    _git("init", "-q", "--bare", ".git/modules/m", cwd=ws)  # a submodule's, made now
    _git("config", "core.pager", "x", cwd=ws / ".git/modules/m")
    assert guard.check() == [".git/modules/m (config: core.pager)"]
    assert _git("config", "core.pager", cwd=ws).strip() == "cat"


def test_a_git_file_pointing_outside_and_a_fifo_are_removed(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    for name in ("a", "b", "c"):
        (ws / name).mkdir()
    (ws / "a/.git").write_text(f"gitdir: {tmp_path}\n")
    os.mkfifo(ws / "b/.git")
    (ws / "c/.git").symlink_to("/")
    said = guard.check()
    assert len(said) == 3, said
    assert not any(os.path.lexists(ws / n / ".git") for n in "abc")


def test_a_huge_config_is_emptied(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    _git("init", "-q", "--bare", "b", cwd=ws)
    with open(ws / "b/config", "a") as file:
        file.write("[core]\n\tpager = x\n" + "#" * (nested.MAX_CONFIG_BYTES + 1) + "\n")
    said = guard.check()
    assert said == ["b (config (not a plain file, unreadable or too large: emptied))"], said
    assert (ws / "b/config").read_bytes() == b""


def test_the_workspace_itself_made_a_bare_repository_is_defused(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    guard = NestedGuard.start(ws)
    _git("init", "-q", "--bare", ".", cwd=ws)
    _git("config", "core.fsmonitor", "touch x", cwd=ws)
    assert guard.check() == [". (config: core.fsmonitor)"]


def test_a_walk_cut_short_is_said_and_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, guard = _workspace(tmp_path)
    monkeypatch.setattr(gitwalk, "MAX_WALK_DEPTH", 3)
    deep = ws / "d1/d2/d3/d4/d5"
    deep.mkdir(parents=True)
    _git("init", "-q", cwd=deep)
    said = guard.check()
    assert said == ["d1/d2/d3/d4 (the walk for git repositories stopped there: too large)"]
    assert guard.cut == "d1/d2/d3/d4"


def test_a_changed_preexisting_repository_is_defused_an_unchanged_one_left(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name in ("kept", "changed"):
        _git("init", "-q", name, cwd=ws)
        _git("config", "core.pager", "cat", cwd=ws / name)
    guard = NestedGuard.start(ws)
    _git("config", "core.editor", "vi", cwd=ws / "changed")
    assert guard.check() == ["changed/.git (config: core.editor, core.pager)"]
    assert _git("config", "core.pager", cwd=ws / "kept").strip() == "cat"


def test_sessions_sharing_a_workspace_share_its_first_note(tmp_path: Path) -> None:
    """A session starting while a sibling's model has made a repository never takes it
    for the user's."""
    from launcher.trust import Place, Protected
    from launcher.trust.guard import Guard

    ws = tmp_path / "ws"
    ws.mkdir()
    places = Protected((Place(ws, ".mcp.json"),))
    first = Guard(places, home=tmp_path / "home", workspace=ws)
    _git("init", "-q", "planted", cwd=ws)
    _git("config", "core.pager", "x", cwd=ws / "planted")
    second = Guard(places, home=tmp_path / "home", workspace=ws)
    try:
        assert second.nested is first.nested and second.nested is not None
        assert NestedGuard.of(ws, second.nested).check() == ["planted/.git (config: core.pager)"]
    finally:
        second.release()
        first.release()
