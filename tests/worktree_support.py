"""A small git repository for isolation tests, and what git says about it afterwards."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.name=subagent tests", "-c", "user.email=tests@example.invalid")


def git(repo: Path, *args: str) -> str:
    """Run git in `repo`; its stdout (a failure raises, with git's message)."""
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=repo, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def make_repo(root: Path, files: dict[str, str]) -> Path:
    """A repository at `root` with `files` committed on its first commit."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "--quiet", "--initial-branch=main")
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    git(root, "add", "--all")
    git(root, "commit", "--quiet", "-m", "first")
    return root


def worktree_paths(repo: Path) -> list[Path]:
    """Every worktree `git worktree list` shows, the main checkout first."""
    out = git(repo, "worktree", "list", "--porcelain")
    return [
        Path(line.split(" ", 1)[1]) for line in out.splitlines() if line.startswith("worktree ")
    ]


def branches(repo: Path, pattern: str = "subagent/*") -> list[str]:
    """Local branch names matching `pattern`, sorted."""
    out = git(repo, "branch", "--list", "--format=%(refname:short)", pattern)
    return sorted(line for line in out.splitlines() if line)
