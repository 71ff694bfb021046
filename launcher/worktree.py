"""`isolation: worktree`: a run works in a repository of its own that borrows the user's objects.

Set-up only reads the user's repository: a new repository under `SUBAGENT_HOME/worktrees/`
borrows its object store read-only (git's alternates, as `git clone --shared` does) and
checks out its HEAD on a new branch `subagent/LABEL-HEX`. The run (and its sandbox) writes
that repository alone: the user's objects, refs and config, and other runs' repositories,
stay out of its reach.

At the end the launcher stages what the run left through a git directory of its own, made
afresh from what the launcher itself wrote at set-up (so no config, hook or attribute
driver the run wrote is ever read), on top of the run's own commits, and FETCHES the result
into the user's repository as that branch: git checks every object it fetches, and the
diff stat is computed there, from what arrived. In the run's repository the same changes
are left staged, not committed. A run that changed nothing leaves no branch, and its
repository is removed. Every git call goes through launcher/gitcmd.py.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launcher.config.types import ISOLATION_MODES
from launcher.errors import RunError, UsageError
from launcher.events import WorktreeEnd
from launcher.gitcmd import DIFF_FLAGS, run_git
from launcher.state import private_dir, state_home

BRANCH_PREFIX = "subagent/"
LABEL_MAX = 40
"""Branch names stay readable; the random suffix keeps them unique."""
NAME_TRIES = 8
"""Fresh random names tried before giving up on a free directory (a collision is rare)."""
RESULT_REF = "refs/heads/result"
"""The one ref of the launcher's finishing git directory: what the user's repository fetches."""
RESULT_IDENTITY = {
    "GIT_AUTHOR_NAME": "subagent",
    "GIT_AUTHOR_EMAIL": "subagent@localhost",
    "GIT_COMMITTER_NAME": "subagent",
    "GIT_COMMITTER_EMAIL": "subagent@localhost",
}
"""Who made the commit that carries a run's staged changes to the user's repository."""
FINISH_CONFIG = b"[core]\n\tcommitGraph = false\n\tmultiPackIndex = false\n"
"""Added to the finishing git directory's config: commits are read from the objects
themselves, never from a commit-graph or index file the run could have written."""


@dataclass(frozen=True)
class Worktree:
    """A run's own repository: where it is, its branch, the commit it started from, and what
    the launcher wrote there at set-up (the finish trusts only that)."""

    repo: Path
    """The user's repository (its top), which gets the branch."""
    path: Path
    branch: str
    base: str
    workspace: Path
    """Where the run works: the repository's top, or the same sub-directory the workspace was."""
    objects: Path = field(default=Path(), repr=False)
    """The user's object store, which the run's repository borrows."""
    object_format: str = field(default="sha1", repr=False)
    config: bytes = field(default=b"", repr=False)
    index: bytes = field(default=b"", repr=False)
    """The checkout's index (every file's stat data): only changed files are read again."""


def check_isolation(value: str | None) -> str | None:
    """`value` if it names an isolation mode (or is None); UsageError otherwise."""
    if value is not None and value not in ISOLATION_MODES:
        raise UsageError(f"--isolation: expected {' or '.join(ISOLATION_MODES)}, got '{value}'")
    return value


def repo_root(workspace: Path) -> Path:
    """The top of the git repository holding `workspace` (with a commit); UsageError if none."""
    return _repository(workspace)[0]


def _repository(workspace: Path) -> tuple[Path, Path, str, str]:
    """(top, object store, object format, HEAD commit) of the repository holding `workspace`."""
    try:
        found = run_git(
            "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir",
            "--show-object-format", cwd=workspace,
        ).splitlines()  # fmt: skip
        top, common, object_format = Path(found[0]), Path(found[1]), found[2]
    except (RunError, IndexError) as exc:
        raise UsageError(
            f"isolation: worktree needs a git repository, and {workspace} is not in one ({exc})"
        ) from exc
    try:
        base = run_git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=top).strip()
    except RunError as exc:
        raise UsageError(
            f"isolation: worktree starts from HEAD, and the repository {top} has no commit yet"
        ) from exc
    return top, (common / "objects").resolve(), object_format, base


def _label(text: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-_")[:LABEL_MAX].strip("-_")
    return safe or "run"


def create_worktree(workspace: Path, *, label: str, home: Path | None = None) -> Worktree:
    """A new repository borrowing the objects of the one holding `workspace`, on a new
    branch from its HEAD; the user's repository is only read."""
    workspace = workspace.resolve()
    top, objects, object_format, base = _repository(workspace)
    home = home or state_home()
    root = private_dir(home / "worktrees", home)
    for _ in range(NAME_TRIES):
        name = f"{_label(label)}-{secrets.token_hex(3)}"
        path = root / f"{_label(top.name)}-{name}"
        with contextlib.suppress(FileExistsError):
            path.mkdir()
            break
    else:
        raise RunError(f"isolation: no free name for a repository in {root}")
    branch = BRANCH_PREFIX + name
    try:
        run_git(
            "init", "--quiet", "--template=", f"--initial-branch={branch}",
            f"--object-format={object_format}", str(path), cwd=root,
        )  # fmt: skip
        info = path / ".git" / "objects" / "info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "alternates").write_text(f"{objects}\n")
        run_git("update-ref", f"refs/heads/{branch}", base, cwd=path)
        run_git("read-tree", "--reset", "-u", "HEAD", cwd=path)
        config = (path / ".git" / "config").read_bytes()
        index = (path / ".git" / "index").read_bytes()
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
    inner = path / workspace.relative_to(top)
    inner.mkdir(parents=True, exist_ok=True)  # an untracked sub-directory is not checked out
    return Worktree(
        repo=top,
        path=path,
        branch=branch,
        base=base,
        workspace=inner,
        objects=objects,
        object_format=object_format,
        config=config,
        index=index,
    )


def _own_git_dir(tree: Worktree) -> Path | None:
    """The run's `.git` if it is still a directory (not a file or a link the run put there)."""
    dot_git = tree.path / ".git"
    try:
        return dot_git if stat.S_ISDIR(os.lstat(dot_git).st_mode) else None
    except OSError:
        return None


def _run_head(tree: Worktree, dot_git: Path | None) -> tuple[str | None, str | None]:
    """(the run's HEAD commit, None) or (None, why its commits are not taken)."""
    if dot_git is None:
        return None, "the run replaced its repository's .git: its commits were not taken"
    try:
        head = run_git(
            "rev-parse", "--verify", "HEAD^{commit}", cwd=tree.path, env={"GIT_DIR": str(dot_git)}
        ).strip()  # fmt: skip
    except RunError as exc:
        return None, f"the run's HEAD could not be read ({exc}): its commits were not taken"
    return head, None


@contextlib.contextmanager
def _finishing_git_dir(tree: Worktree, dot_git: Path | None) -> Iterator[dict[str, str]]:
    """A git directory made now from what the launcher wrote at set-up, for the run's work
    tree; reads objects from the user's store first, then the run's. Removed after."""
    scratch = Path(tempfile.mkdtemp(prefix=".finish-", dir=tree.path.parent))
    try:
        (scratch / "refs" / "heads").mkdir(parents=True)
        (scratch / "objects" / "info").mkdir(parents=True)
        stores = [tree.objects, *([dot_git / "objects"] if dot_git is not None else [])]
        (scratch / "objects" / "info" / "alternates").write_text("".join(f"{s}\n" for s in stores))
        (scratch / "HEAD").write_text(f"ref: {RESULT_REF}\n")
        (scratch / "config").write_bytes(tree.config + FINISH_CONFIG)
        (scratch / "index").write_bytes(tree.index)
        yield {"GIT_DIR": str(scratch), "GIT_WORK_TREE": str(tree.path)}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _stage_result(tree: Worktree, parent: str, own: dict[str, str]) -> tuple[str, bytes]:
    """(the result commit, its index): every change of the work tree staged on `parent`, made
    a commit only when something is staged."""
    if parent != tree.base:  # keep the stat data of files the run's commits did not change
        run_git("read-tree", "--reset", parent, cwd=tree.path, env=own)
    run_git("add", "--all", cwd=tree.path, env=own)
    staged = run_git("write-tree", cwd=tree.path, env=own).strip()
    index = (Path(own["GIT_DIR"]) / "index").read_bytes()
    if staged == run_git("rev-parse", f"{parent}^{{tree}}", cwd=tree.path, env=own).strip():
        return parent, index
    message = f"{tree.branch}: the run's changes, staged, not committed, in {tree.path}"
    made = run_git(
        "commit-tree", staged, "-p", parent, "-m", message,
        cwd=tree.path, env={**own, **RESULT_IDENTITY},
    ).strip()  # fmt: skip
    return made, index


def _deliver(tree: Worktree, result: str, own: dict[str, str]) -> str:
    """Fetch `result` into the user's repository as the run's branch (which must not exist
    yet); its diff stat against `base`, computed there."""
    run_git("update-ref", RESULT_REF, result, cwd=tree.path, env=own)
    run_git(
        "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-auto-gc",
        "--no-recurse-submodules", "--upload-pack=git-upload-pack", own["GIT_DIR"], RESULT_REF,
        cwd=tree.repo,
    )  # fmt: skip
    ref = f"refs/heads/{tree.branch}"
    run_git("update-ref", "-m", f"subagent: {tree.branch}", ref, result, "", cwd=tree.repo)
    return run_git("diff", "--stat", *DIFF_FLAGS, tree.base, result, cwd=tree.repo).rstrip()


def _leave_staged(dot_git: Path, index: bytes) -> None:
    """The run's repository gets the staged index (its HEAD stays): written beside the old
    one and renamed over it, so a link the run left there is replaced, never followed."""
    fd, temporary = tempfile.mkstemp(prefix="index.subagent-", dir=dot_git)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(index)
        os.replace(temporary, dot_git / "index")
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def finish_worktree(tree: Worktree) -> WorktreeEnd:
    """After the run: its changes fetched into the user's repository as its branch and left
    staged in its own, or its repository removed if it changed nothing."""
    dot_git = _own_git_dir(tree)
    head, note = _run_head(tree, dot_git)
    end = functools.partial(WorktreeEnd, branch=tree.branch, path=str(tree.path), base=tree.base)
    try:
        with _finishing_git_dir(tree, dot_git) as own:
            result, index = _stage_result(tree, head or tree.base, own)
            if result == tree.base:
                shutil.rmtree(tree.path, ignore_errors=True)
                return end(path=None, changed=False, error=note)
            diffstat = _deliver(tree, result, own)
        if dot_git is not None and head is not None:
            _leave_staged(dot_git, index)
    except (RunError, OSError) as exc:  # keep what may be the run's work; say why it is not
        return end(changed=True, error=f"{note}; {exc}" if note else str(exc))
    return end(changed=True, diffstat=diffstat, error=note)


@contextlib.contextmanager
def isolated_workspace(
    workspace: Path, mode: str | None, *, label: str, report: Callable[[WorktreeEnd], None]
) -> Iterator[Path]:
    """The directory a run works in: `workspace` itself, or (mode `worktree`) a fresh
    repository's, finished when the run leaves however it leaves; `report` gets the end."""
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
    if not end.changed and not end.error:
        return f"worktree: no changes; removed it (no branch {end.branch})"
    if end.error:
        where = f" at {end.path}" if end.path else ""
        lines = [f"worktree: branch {end.branch}{where}: {end.error}"]
    else:
        lines = [f"worktree: branch {end.branch} at {end.path} (changes staged, not committed)"]
    lines += [f"  {line.strip()}" for line in end.diffstat.splitlines()]
    return "\n".join(lines)
