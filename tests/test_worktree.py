"""`isolation: worktree`: the git work of one isolated run (real git, in a temp directory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher.backend.protocol import RunState
from launcher.config.agents import parse_agent_text
from launcher.engines.tasks import BadLine, parse_task
from launcher.errors import ConfigError, UsageError
from launcher.events import WorktreeEnd
from launcher.worktree import (
    check_isolation,
    create_worktree,
    describe,
    finish_worktree,
    isolated_workspace,
)
from tests.worktree_support import branches, git, make_repo, worktree_paths


def test_a_workspace_outside_git_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UsageError) as caught:
        create_worktree(plain, label="x", home=tmp_path / "home")
    assert caught.value.exit_code == 2
    assert f"{plain} is not in one" in str(caught.value)


def test_a_repository_without_a_commit_is_a_usage_error(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    with pytest.raises(UsageError, match="has no commit yet"):
        create_worktree(repo, label="x", home=tmp_path / "home")


def test_set_up_only_reads_the_users_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    before = (git(repo, "for-each-ref"), git(repo, "count-objects", "-v"), worktree_paths(repo))
    tree = create_worktree(repo, label="agent", home=tmp_path / "home")
    assert (git(repo, "for-each-ref"), git(repo, "count-objects", "-v")) == before[:2]
    assert worktree_paths(repo) == before[2]  # no linked worktree: a repository of its own
    assert (tree.path / ".git").is_dir()
    assert (tree.workspace / "a.txt").read_text() == "one\n"
    borrowed = (tree.path / ".git" / "objects" / "info" / "alternates").read_text().split()
    assert borrowed == [str((repo / ".git" / "objects").resolve())]
    assert git(tree.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == tree.branch
    assert git(tree.path, "rev-parse", "HEAD").strip() == tree.base
    assert git(tree.path, "status", "--porcelain") == ""
    assert not (tree.path / ".git" / "hooks").exists()  # no template copied in


def test_an_unchanged_worktree_is_removed_and_no_branch_is_made(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    tree = create_worktree(repo, label="agent", home=tmp_path / "home")

    end = finish_worktree(tree)

    assert end.changed is False and end.path is None and end.error is None
    assert worktree_paths(repo) == [repo.resolve()]
    assert branches(repo) == []
    assert not tree.path.exists()
    assert [p.name for p in tree.path.parent.iterdir()] == []  # the finishing git dir is gone


def test_a_changed_worktree_is_fetched_as_its_branch_and_left_staged(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"src/a.txt": "one\n", "b.txt": "b\n"})
    tree = create_worktree(repo / "src", label="task 1/x", home=tmp_path / "home")
    assert tree.workspace == tree.path / "src"  # the same sub-directory, in its repository
    assert tree.branch.startswith("subagent/task-1-x-")
    (tree.workspace / "a.txt").write_text("two\n")
    (tree.workspace / "new.txt").write_text("new\n")  # untracked files count too

    end = finish_worktree(tree)

    assert end.changed is True and end.path == str(tree.path) and end.error is None
    assert "src/a.txt" in end.diffstat and "src/new.txt" in end.diffstat
    assert "2 files changed" in end.diffstat
    assert (repo / "src" / "a.txt").read_text() == "one\n"
    assert git(repo, "status", "--porcelain") == ""
    assert branches(repo) == [tree.branch]
    # The user's branch holds the change, in objects the user's repository now has.
    assert git(repo, "show", f"{tree.branch}:src/a.txt") == "two\n"
    assert git(repo, "rev-parse", f"{tree.branch}^").strip() == tree.base
    assert git(repo, "fsck", "--no-dangling").strip() == ""
    # In the run's repository the same change is staged, not committed.
    assert git(tree.path, "rev-parse", "HEAD").strip() == tree.base
    assert git(tree.path, "diff", "--cached", "--stat").rstrip() == end.diffstat
    staged = git(tree.path, "status", "--porcelain").splitlines()
    assert staged == ["M  src/a.txt", "A  src/new.txt"]
    text = describe(end)
    assert tree.branch in text and "2 files changed" in text and "staged, not committed" in text


def test_a_commit_of_the_run_counts_as_a_change_and_reaches_the_branch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    tree = create_worktree(repo, label="x", home=tmp_path / "home")
    (tree.path / "a.txt").write_text("two\n")
    git(tree.path, "commit", "--quiet", "-am", "by the agent")
    own = git(tree.path, "rev-parse", "HEAD").strip()
    (tree.path / "c.txt").write_text("staged\n")
    end = finish_worktree(tree)
    assert end.changed is True and end.error is None
    assert "a.txt" in end.diffstat and "c.txt" in end.diffstat
    # The run's own commit, then one commit carrying what it left uncommitted.
    assert git(repo, "rev-parse", f"{tree.branch}^").strip() == own
    assert git(repo, "log", "--format=%s", "-1", own).strip() == "by the agent"
    assert git(tree.path, "diff", "--cached", "--name-only").split() == ["c.txt"]


def test_a_sha256_repository_gets_a_sha256_repository_of_its_own(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet", "--object-format=sha256")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "--quiet", "-m", "first")
    tree = create_worktree(repo, label="x", home=tmp_path / "home")
    (tree.workspace / "a.txt").write_text("two\n")
    end = finish_worktree(tree)
    assert end.error is None and "a.txt" in end.diffstat
    assert len(git(repo, "rev-parse", tree.branch).strip()) == 64


def test_a_commit_alone_is_the_branch_itself(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    tree = create_worktree(repo, label="x", home=tmp_path / "home")
    (tree.path / "a.txt").write_text("two\n")
    git(tree.path, "commit", "--quiet", "-am", "by the agent")
    end = finish_worktree(tree)
    assert end.changed is True and "a.txt" in end.diffstat
    assert git(repo, "rev-parse", tree.branch) == git(tree.path, "rev-parse", "HEAD")


def test_the_run_leaving_by_an_exception_still_finishes_the_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    ends: list[WorktreeEnd] = []
    with pytest.raises(KeyboardInterrupt):
        with isolated_workspace(repo, "worktree", label="x", report=ends.append) as where:
            assert where != repo
            raise KeyboardInterrupt
    assert [e.changed for e in ends] == [False]
    assert worktree_paths(repo) == [repo.resolve()]


def test_no_isolation_is_the_workspace_itself(tmp_path: Path) -> None:
    ends: list[WorktreeEnd] = []
    with isolated_workspace(tmp_path, None, label="x", report=ends.append) as where:
        assert where == tmp_path
    assert ends == []


def test_the_isolation_field_and_option_accept_only_worktree(tmp_path: Path) -> None:
    spec = parse_agent_text("---\nisolation: worktree\n---\nhi\n", tmp_path / "a.md")
    assert spec.isolation == "worktree"
    assert parse_agent_text("---\nname: b\n---\n", tmp_path / "b.md").isolation is None
    with pytest.raises(ConfigError) as caught:
        parse_agent_text("---\nname: c\nisolation: yes\n---\n", tmp_path / "c.md")
    assert "c.md:3: field 'isolation'" in str(caught.value)
    assert check_isolation("worktree") == "worktree"
    with pytest.raises(UsageError, match="--isolation: expected worktree"):
        check_isolation("container")


def test_a_task_line_may_name_its_isolation() -> None:
    task = parse_task('{"id": "a", "prompt": "p", "isolation": "worktree"}', 1)
    assert not isinstance(task, BadLine) and task.isolation == "worktree"
    bad = parse_task('{"id": "a", "prompt": "p", "isolation": "vm"}', 4)
    assert isinstance(bad, BadLine) and "field 'isolation'" in str(bad) and "line 4" in str(bad)


def test_a_drivers_result_text_ends_with_the_worktree() -> None:
    state = RunState()
    state.observe({"type": "agent_end", "status": "completed", "result": "done"})
    end = WorktreeEnd(branch="subagent/t0-abc", path="/w", base="b", changed=True, diffstat="x")
    state.observe(end.to_dict())
    assert state.worktree is not None and state.worktree["branch"] == "subagent/t0-abc"
    assert state.result.startswith("done\n\nworktree: branch subagent/t0-abc at /w")


@pytest.mark.parametrize("tidy", [None, ["pack-refs", "--all"], ["gc", "--quiet"]])
def test_the_runs_commits_are_taken_from_loose_or_packed_refs_and_objects(
    tmp_path: Path, tidy: list[str] | None
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    tree = create_worktree(repo, label="x", home=tmp_path / "home")
    (tree.path / "a.txt").write_text("two\n")
    git(tree.path, "commit", "--quiet", "-am", "by the agent")
    own = git(tree.path, "rev-parse", "HEAD").strip()
    if tidy:  # the run packed its refs, or its objects, itself
        git(tree.path, *tidy)
    end = finish_worktree(tree)
    assert end.changed is True and end.error is None, end
    assert git(repo, "rev-parse", tree.branch).strip() == own
    assert git(repo, "show", f"{tree.branch}:a.txt") == "two\n"


def test_a_linked_worktree_the_user_made_is_isolated_from_too(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "sub/b.txt": "b\n"})
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "--quiet", "-b", "side", str(linked))
    tree = create_worktree(linked / "sub", label="x", home=tmp_path / "home")
    assert tree.repo == linked and tree.workspace == tree.path / "sub"
    (tree.workspace / "b.txt").write_text("changed\n")
    end = finish_worktree(tree)
    assert end.error is None and "sub/b.txt" in end.diffstat
    assert git(repo, "show", f"{tree.branch}:sub/b.txt") == "changed\n"


def test_a_gitdir_file_whose_repository_does_not_name_it_back_is_refused(tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other", {"a.txt": "one\n"})
    planted = tmp_path / "ws"
    planted.mkdir()
    (planted / ".git").write_text(f"gitdir: {other}/.git\n")
    with pytest.raises(UsageError, match="does not name"):
        create_worktree(planted, label="x", home=tmp_path / "home")
    assert not list((tmp_path / "home").glob("worktrees/*"))
