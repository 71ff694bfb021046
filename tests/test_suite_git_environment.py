"""The suite's git calls never act on the repository of whoever started it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.worktree_support import git, make_repo

ROOT = Path(__file__).resolve().parents[1]


def test_a_callers_index_file_is_not_where_the_tests_stage(tmp_path: Path) -> None:
    callers = make_repo(tmp_path / "callers", {"kept.txt": "kept\n"})
    index = callers / ".git" / "index"
    before = index.read_bytes()
    env = {**os.environ, "GIT_INDEX_FILE": str(index), "GIT_DIR": str(callers / ".git")}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "stages_a_file",
         str(Path(__file__))],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert index.read_bytes() == before
    assert git(callers, "ls-files") == "kept.txt\n"


def test_a_test_repository_stages_a_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    assert git(repo, "ls-files") == "a.txt\nb.txt\n"
