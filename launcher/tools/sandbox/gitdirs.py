"""Where git writes for a workspace that is a linked worktree (`isolation: worktree`).

A linked worktree keeps its index and HEAD in the main repository's
`.git/worktrees/NAME/`, its objects in `.git/objects/`, and its branch under
`.git/refs/heads/`: all outside the workspace. The sandbox lets the shell write those —
the branch's directory only for the `subagent/` branches the launcher made — so
`git add` and `git commit` work there as they do in an ordinary checkout.
"""

from __future__ import annotations

from pathlib import Path

OWN_BRANCHES = "refs/heads/subagent/"
"""The prefix of the branches `isolation: worktree` creates (launcher/worktree.py)."""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return ""


def worktree_git_dirs(workspace: Path) -> tuple[Path, ...]:
    """The directories outside `workspace` git must write to work in it; () if none."""
    for root in (workspace, *workspace.parents):
        dot_git = root / ".git"
        if dot_git.is_dir():
            return ()  # an ordinary checkout: everything is inside
        if dot_git.is_file():
            break
    else:
        return ()
    line = _read(dot_git)
    if not line.startswith("gitdir:"):
        return ()
    gitdir = (root / line.removeprefix("gitdir:").strip()).resolve()
    common_rel = _read(gitdir / "commondir")
    common = (gitdir / common_rel).resolve() if common_rel else gitdir
    found = [gitdir, common / "objects"]
    head = _read(gitdir / "HEAD").removeprefix("ref:").strip()
    if head.startswith(OWN_BRANCHES):
        found += [common / OWN_BRANCHES, common / "logs" / OWN_BRANCHES]
    return tuple(p for p in found if p.is_dir())
