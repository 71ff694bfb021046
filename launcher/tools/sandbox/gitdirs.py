"""Where git writes for a workspace that is a linked worktree the user made (`git worktree add`).

A linked worktree keeps its index and HEAD in the main repository's
`.git/worktrees/NAME/`, its objects in `.git/objects/`, and its refs and logs beside them:
all outside the workspace. The sandbox lets the shell write those parts, so `git add` and
`git commit` work there as they do in an ordinary checkout.

The `.git` file that names them is workspace content, which the model may have written in
an earlier session: it is believed only when git's own back-link holds
(launcher/trust), and then only objects, refs, logs and the worktree's own directory
(its index, HEAD) become writable — never the common dir itself, its config or hooks.
"""

from __future__ import annotations

from pathlib import Path

from launcher.trust import linked_worktree


def worktree_git_dirs(workspace: Path) -> tuple[Path, ...]:
    """The directories outside `workspace` git must write to commit in it; () if none."""
    found = linked_worktree(workspace)
    if found is None:
        return ()
    gitdir, common = found
    parts = [gitdir, common / "objects", common / "refs", common / "logs"]
    return tuple(p for p in parts if p.is_dir() and not p.is_symlink())
