"""`isolation: worktree`: a run works in a fresh git worktree of the workspace's repository.

The worktree starts from the repository's HEAD on a new branch `subagent/LABEL-HEX`, in
`SUBAGENT_HOME/worktrees/` (outside the user's checkout, which stays untouched). After
the run its changes are staged in the worktree's own index (nothing is committed) and
summed up as a diff stat; a worktree with no change is removed, and its branch deleted.
"""

from __future__ import annotations

import contextlib
import fcntl
import re
import secrets
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from launcher.config.types import ISOLATION_MODES
from launcher.errors import RunError, UsageError
from launcher.events import WorktreeEnd
from launcher.gitcmd import DIFF_FLAGS, run_git
from launcher.state import private_dir, private_opener, state_home

BRANCH_PREFIX = "subagent/"
LABEL_MAX = 40
"""Branch names stay readable; the random suffix keeps them unique."""


@dataclass(frozen=True)
class Worktree:
    """A worktree made for one run: where it is, its branch, and the commit it started from."""

    repo: Path
    path: Path
    branch: str
    base: str
    workspace: Path
    """Where the run works: the worktree, or the same sub-directory the workspace was."""


def check_isolation(value: str | None) -> str | None:
    """`value` if it names an isolation mode (or is None); UsageError otherwise."""
    if value is not None and value not in ISOLATION_MODES:
        raise UsageError(f"--isolation: expected {' or '.join(ISOLATION_MODES)}, got '{value}'")
    return value


def _git(cwd: Path, *args: str) -> str:
    """Run hardened git in `cwd` (launcher/gitcmd.py); its stdout, or RunError."""
    return run_git(*args, cwd=cwd)


def repo_root(workspace: Path) -> Path:
    """The top of the git repository holding `workspace` (with a commit); UsageError if none."""
    try:
        top = Path(_git(workspace, "rev-parse", "--show-toplevel").strip())
    except RunError as exc:
        raise UsageError(
            f"isolation: worktree needs a git repository, and {workspace} is not in one ({exc})"
        ) from exc
    try:
        _git(top, "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
    except RunError as exc:
        raise UsageError(
            f"isolation: worktree starts from HEAD, and the repository {top} has no commit yet"
        ) from exc
    return top


def _label(text: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-_")[:LABEL_MAX].strip("-_")
    return safe or "run"


@contextlib.contextmanager
def _serialized(root: Path) -> Iterator[None]:
    """One worktree add or remove at a time among this user's runs (a batch starts many)."""
    with open(root / ".lock", "a", opener=private_opener) as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def create_worktree(workspace: Path, *, label: str, home: Path | None = None) -> Worktree:
    """A new worktree of the repository holding `workspace`, on a new branch from HEAD."""
    workspace = workspace.resolve()
    top = repo_root(workspace).resolve()
    home = home or state_home()
    root = private_dir(home / "worktrees", home)
    name = f"{_label(label)}-{secrets.token_hex(3)}"
    branch, path = BRANCH_PREFIX + name, root / f"{_label(top.name)}-{name}"
    base = _git(top, "rev-parse", "HEAD").strip()
    with _serialized(root):
        _git(top, "worktree", "add", "--quiet", "-b", branch, str(path), base)
    inner = path / workspace.relative_to(top)
    inner.mkdir(parents=True, exist_ok=True)  # an untracked sub-directory is not checked out
    return Worktree(repo=top, path=path, branch=branch, base=base, workspace=inner)


def finish_worktree(tree: Worktree) -> WorktreeEnd:
    """After the run: stage and sum up its changes, or remove the worktree if it made none."""
    try:
        _git(tree.path, "add", "--all")
        head = _git(tree.path, "rev-parse", "HEAD").strip()
        stat = _git(tree.path, "diff", "--cached", "--stat", *DIFF_FLAGS, tree.base).rstrip()
    except RunError as exc:  # keep what may be the run's work; say why it is not summed up
        return WorktreeEnd(
            branch=tree.branch, path=str(tree.path), base=tree.base, changed=True, error=str(exc)
        )
    if stat or head != tree.base:
        return WorktreeEnd(
            branch=tree.branch, path=str(tree.path), base=tree.base, changed=True, diffstat=stat
        )
    try:
        with _serialized(tree.path.parent):
            _git(tree.repo, "worktree", "remove", "--force", str(tree.path))
            _git(tree.repo, "branch", "-D", tree.branch)
    except RunError as exc:
        return WorktreeEnd(
            branch=tree.branch, path=str(tree.path), base=tree.base, changed=False, error=str(exc)
        )
    shutil.rmtree(tree.path, ignore_errors=True)  # git leaves ignored files behind
    return WorktreeEnd(branch=tree.branch, path=None, base=tree.base, changed=False)


@contextlib.contextmanager
def isolated_workspace(
    workspace: Path, mode: str | None, *, label: str, report: Callable[[WorktreeEnd], None]
) -> Iterator[Path]:
    """The directory a run works in: `workspace` itself, or (mode `worktree`) a fresh
    worktree's, finished when the run leaves however it leaves; `report` gets the end."""
    if mode is None:
        yield workspace
        return
    tree = create_worktree(workspace, label=label)
    try:
        yield tree.workspace
    finally:
        report(finish_worktree(tree))


def describe_fields(fields: dict[str, Any]) -> str:
    """`describe` of a worktree event as a driver received it (a JSON object)."""
    known = {
        k: fields[k]
        for k in ("branch", "path", "base", "changed", "diffstat", "error")
        if k in fields
    }
    return describe(WorktreeEnd(**known))


def describe(end: WorktreeEnd) -> str:
    """One or more lines for a person: the branch and its diff stat, or that it was removed."""
    if end.error:
        where = f" at {end.path}" if end.path else ""
        return f"worktree: branch {end.branch}{where}: {end.error}"
    if not end.changed:
        return f"worktree: no changes; removed it and branch {end.branch}"
    lines = [f"worktree: branch {end.branch} at {end.path} (changes staged, not committed)"]
    lines += [f"  {line.strip()}" for line in end.diffstat.splitlines()]
    return "\n".join(lines)
