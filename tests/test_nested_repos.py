"""The defusing of git repositories the model made (launcher/trust/nested.py): what an
adversary swaps in under the walk and the rewrite."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
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
    assert guard.check() == []  # nothing reached was defused: "defused" is not said
    assert guard.cut == "d1/d2/d3/d4"
    line = guard.cut_line()
    assert line is not None and "cut at d1/d2/d3/d4 (too deep)" in line
    assert "NOT checked or defused" in line


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


def _poison(gitdir: Path) -> None:
    (gitdir / "config").write_text("[core]\n\tfsmonitor = touch /tmp/pwned\n")
    (gitdir / "hooks").mkdir(exist_ok=True)
    (gitdir / "hooks/pre-commit").write_text("#!/bin/sh\ntouch /tmp/pwned\n")


def test_a_common_dir_without_head_is_defused(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    _git("init", "-q", "--bare", "x", cwd=ws)
    _poison(ws / "x")
    (ws / "x/HEAD").unlink()  # git's discovery in sub/ still reads x/config and x/hooks
    (ws / "sub/.git").mkdir(parents=True)
    (ws / "sub/.git/HEAD").write_text("ref: refs/heads/main\n")
    (ws / "sub/.git/commondir").write_text("../../x\n")
    said = guard.check()
    assert said == ["sub/.git (commondir (names no git repository: x))"]
    assert not (ws / "sub/.git/commondir").exists()  # cut off: x (maybe the user's) untouched
    assert (ws / "x/hooks/pre-commit").exists()
    done = subprocess.run(["git", "rev-parse", "--git-dir"], cwd=ws / "sub", capture_output=True)
    assert not done.stdout.strip().endswith(b"x")  # git no longer takes x for sub's
    (ws / "sub/.git/commondir").write_text("../../x\n")  # put back later: cut off again
    assert guard.check() == ["sub/.git (commondir (names no git repository: x))"]


def test_a_git_dir_inside_the_workspaces_own_git_is_cut_off(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    _git("init", "-q", "--bare", ".git/evil", cwd=ws)
    _poison(ws / ".git/evil")
    for name in ("sub", "sub2", "sub3"):
        (ws / name).mkdir()
    (ws / "sub/.git").write_text("gitdir: ../.git/evil\n")
    (ws / "sub2/.git").symlink_to("../.git/evil")
    (ws / "sub3/.git").mkdir()
    (ws / "sub3/.git/HEAD").write_text("ref: refs/heads/main\n")
    (ws / "sub3/.git/commondir").write_text("../../.git/evil\n")
    said = guard.check()
    assert said == [
        "sub3/.git (commondir (into the workspace's own .git))",
        "sub/.git (removed: not a pointer into the workspace)",
        "sub2/.git (removed: not a pointer into the workspace)",
    ]
    assert not os.path.lexists(ws / "sub/.git") and not os.path.lexists(ws / "sub2/.git")
    assert not (ws / "sub3/.git/commondir").exists()
    assert _git("config", "core.pager", cwd=ws).strip() == "cat"  # the user's: untouched


def test_a_linked_worktree_of_the_users_repository_keeps_its_git_file(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    _git(
        "-c",
        "user.name=u",
        "-c",
        "user.email=u@x",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "i",
        cwd=ws,
    )
    _git("worktree", "add", "-q", "wt", cwd=ws)  # git's own layout: the back-link names wt/.git
    assert guard.check() == []
    assert (ws / "wt/.git").is_file()
    (ws / "wt2").mkdir()  # a pointer into .git/worktrees/wt that git's back-link does not name
    (ws / "wt2/.git").write_text("gitdir: ../.git/worktrees/wt\n")
    assert guard.check() == ["wt2/.git (removed: not a pointer into the workspace)"]


def test_a_cut_walk_still_defuses_the_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws, guard = _workspace(tmp_path)
    monkeypatch.setattr(gitwalk, "MAX_WALK_DEPTH", 3)
    (ws / "d1/d2/d3/d4/d5").mkdir(parents=True)
    for i in range(12):
        _git("init", "-q", f"r{i:02}", cwd=ws)
        _git("config", "core.pager", "x", cwd=ws / f"r{i:02}")
    _git("init", "-q", "--bare", ".git/modules/m", cwd=ws)  # walked after the workspace
    _git("config", "core.pager", "x", cwd=ws / ".git/modules/m")
    said = guard.check()
    assert said == [".git/modules/m (config: core.pager)"] + [
        f"r{i:02}/.git (config: core.pager)" for i in range(12)
    ]
    assert guard.cut is not None and guard.why == "too deep"


def test_a_walk_past_its_time_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _ws, guard = _workspace(tmp_path)
    monkeypatch.setattr(gitwalk, "MAX_WALK_SECONDS", -1.0)
    assert guard.check() == []
    assert guard.cut == "." and guard.why == "it took too long"


def test_names_said_are_escaped(tmp_path: Path) -> None:
    ws, guard = _workspace(tmp_path)
    for raw in (b"bad\xffname", b"\x1b]0;PWNED\x07\x1b[2J\nsubagent: all clean\x1b[8m"):
        where = os.path.join(os.fsencode(ws), raw)
        os.mkdir(where)
        _git("init", "-q", cwd=Path(os.fsdecode(where)))
        _git("config", "core.pager", "x", cwd=Path(os.fsdecode(where)))
    said = guard.check()
    assert len(said) == 2
    for line in said:
        line.encode("utf-8")  # no lone surrogate: the events writer and stderr take it
        assert all(c.isprintable() for c in line), line
    assert "bad\\xffname/.git (config: core.pager)" in said
    assert (
        "\\x1b]0;PWNED\\x07\\x1b[2J\\nsubagent: all clean\\x1b[8m/.git (config: core.pager)" in said
    )


_UNREADABLE = """
import os, subprocess, sys
from pathlib import Path
from launcher.trust.nested import NestedGuard
ws = Path(sys.argv[1])
guard = NestedGuard.start(ws)
(ws / "locked").mkdir()
subprocess.run(["git", "init", "-q", str(ws / "locked/zz")], check=True)
subprocess.run(["git", "-C", str(ws / "locked/zz"), "config", "core.pager", "x"], check=True)
os.chmod(ws / "locked", 0o111)  # the model's: exec-only, the user can still cd into zz
print(guard.check(), guard.cut)
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
def test_an_unreadable_directory_of_the_users_own_is_opened_and_walked(tmp_path: Path) -> None:
    """As a plain user with no capability at all (one that reads past modes would hide it)."""
    home = Path(tempfile.mkdtemp(prefix="subagent-walk-"))
    try:
        os.chmod(home, 0o755)
        os.chown(home, 65534, 65534)
        drop = ["--reuid", "65534", "--regid", "65534", "--clear-groups"]
        drop += ["--inh-caps=-all", "--bounding-set=-all"]
        root = str(Path(__file__).resolve().parents[1])
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": root, "HOME": str(home)}
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        done = subprocess.run(
            ["setpriv", *drop, "/usr/bin/python3", "-c", _UNREADABLE, str(home)],
            capture_output=True,
            text=True,
            env=env,
            cwd=home,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "['locked/zz/.git (config: core.pager)'] None"
    finally:
        shutil.rmtree(home, ignore_errors=True)
