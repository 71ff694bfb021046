"""The hardened git helper: what a repository, its config or the caller's environment name
is never executed (real git, in a temp directory)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from launcher.errors import RunError
from launcher.gitcmd import DIFF_FLAGS, HARDENING, git_argv, git_environment, run_git
from tests.worktree_support import git, make_repo


def marker_command(mark: Path) -> str:
    """A shell command that leaves `mark` behind if anything runs it."""
    return f"touch {mark}; false"


def executable(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_every_pin_is_on_the_command_line() -> None:
    argv = git_argv(["status"])
    assert os.path.isabs(argv[0]) and argv[-1] == "status"
    assert argv[1:3] == ["--no-pager", "--no-replace-objects"]
    pins = {argv[i + 1] for i, item in enumerate(argv) if item == "-c"}
    assert {f"{k}={v}" for k, v in HARDENING} == pins
    assert "core.hooksPath=/dev/null" in pins and "core.fsmonitor=false" in pins
    assert not any(p.startswith("safe.directory") for p in pins)


def test_the_callers_git_variables_and_secrets_stay_behind(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name in ("GIT_DIR", "GIT_CONFIG_PARAMETERS", "GIT_EXEC_PATH", "GIT_SSH_COMMAND"):
        monkeypatch.setenv(name, str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-123")
    monkeypatch.setenv("PATH", f".:bin:{os.environ['PATH']}")
    env = git_environment({"GIT_WORK_TREE": "/w"})
    assert "GIT_DIR" not in env and "GIT_EXEC_PATH" not in env and "GIT_SSH_COMMAND" not in env
    assert "GIT_CONFIG_PARAMETERS" not in env and "OPENAI_API_KEY" not in env
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null" and env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_WORK_TREE"] == "/w"
    assert all(os.path.isabs(p) for p in env["PATH"].split(os.pathsep))


def test_a_repositorys_fsmonitor_hooks_and_diff_drivers_never_run(tmp_path: Path) -> None:
    """(Filter drivers are named by the repository's attributes, so no pin reaches them: the
    launcher never reads a work tree through an untrusted config, see test_worktree.py.)"""
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n", "b.bin": "b\n"})
    marks = {name: tmp_path / f"ran-{name}" for name in ("fsmonitor", "hook", "diff")}
    git(repo, "config", "core.fsmonitor", marker_command(marks["fsmonitor"]))
    for hook in ("post-checkout", "post-index-change", "reference-transaction", "pre-commit"):
        executable(repo / ".git" / "hooks" / hook, f"#!/bin/sh\n{marker_command(marks['hook'])}\n")
    (repo / ".gitattributes").write_text("* diff=evil\n")
    git(repo, "config", "diff.evil.textconv", marker_command(marks["diff"]))
    git(repo, "config", "diff.evil.command", marker_command(marks["diff"]))
    git(repo, "config", "diff.external", marker_command(marks["diff"]))
    (repo / "a.txt").write_text("two\n")

    run_git("status", "--porcelain", cwd=repo)
    run_git("diff", *DIFF_FLAGS, "HEAD", cwd=repo)
    run_git("diff", "--stat", *DIFF_FLAGS, "HEAD", "HEAD~0^{tree}", cwd=repo)
    run_git("update-ref", "refs/heads/other", "HEAD", cwd=repo)
    run_git("checkout", "--quiet", "-b", "side", cwd=repo)

    assert {name for name, mark in marks.items() if mark.exists()} == set()


def test_global_config_and_a_git_in_the_working_directory_are_ignored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    mark = tmp_path / "ran"
    global_config = tmp_path / "global.gitconfig"
    global_config.write_text(f"[core]\n\tfsmonitor = {marker_command(mark)}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(global_config))
    executable(repo / "git", f"#!/bin/sh\n{marker_command(mark)}\n")  # on a relative PATH
    monkeypatch.setenv("PATH", f".:{os.environ['PATH']}")
    (repo / "a.txt").write_text("two\n")
    assert run_git("status", "--porcelain", cwd=repo).split() == ["M", "a.txt", "??", "git"]
    assert not mark.exists()


def test_a_transport_other_than_local_files_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "one\n"})
    mark = tmp_path / "ran"
    with pytest.raises(RunError, match="transport 'ext' not allowed"):
        run_git("fetch", f"ext::sh -c touch% {mark}", cwd=repo)
    with pytest.raises(RunError, match="transport 'ssh' not allowed"):
        run_git("-c", f"core.sshCommand={marker_command(mark)}", "fetch", "h:r", cwd=repo)
    assert not mark.exists()


def test_a_failure_is_a_run_error_with_gits_message(tmp_path: Path) -> None:
    with pytest.raises(RunError) as caught:
        run_git("rev-parse", "--show-toplevel", cwd=tmp_path)
    assert f"git rev-parse in {tmp_path}: fatal: not a git repository" in str(caught.value)
