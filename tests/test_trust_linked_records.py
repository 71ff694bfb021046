"""A session in a main checkout and the user's linked worktrees: their index, HEAD and logs
are the user's git's to write, and only what decides what git runs there is put back."""

from __future__ import annotations

from pathlib import Path

from launcher.trust import protected_set
from launcher.trust.guard import Guard
from tests.worktree_support import git, make_repo


def test_a_linked_worktrees_staged_change_survives_the_main_checkouts_put_back(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(linked))
    guard = Guard(protected_set(repo))
    try:
        (linked / "a.txt").write_text("the user's change\n")
        git(linked, "add", "a.txt")  # the user stages in their worktree while a session runs
        guard.restore()  # what follows every shell command of the session's model
        assert git(linked, "status", "--porcelain") == "M  a.txt\n"
    finally:
        guard.release()


def test_what_decides_what_git_runs_in_a_linked_worktree_is_still_put_back(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "linked"))
    record = repo / ".git" / "worktrees" / "linked"
    commondir = (record / "commondir").read_text()
    guard = Guard(protected_set(repo))
    try:
        (record / "commondir").write_text(f"{tmp_path}/evil\n")
        (record / "config.worktree").write_text("[core]\n\tfsmonitor = touch x\n")
        planted = repo / ".git" / "worktrees" / "planted"
        planted.mkdir()
        (planted / "commondir").write_text(f"{tmp_path}/evil\n")
        guard.restore()
        assert (record / "commondir").read_text() == commondir
        assert not (record / "config.worktree").exists()
        assert not planted.exists()
    finally:
        guard.release()
