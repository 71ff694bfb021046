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
diff stat is computed there, from what arrived. Of the run's repository the finish reads
only the work tree, its branch's ref file and its own objects (copied in through
launcher/untrusted.py: no alternates, commondir, HEAD, link or FIFO of the run's is
followed). Set-up takes only a repository git confirms, never one a run may write. In the
run's repository the same changes are left staged, not committed. A run that changed
nothing leaves no branch, and its repository is removed. Every git call goes through
launcher/gitcmd.py.
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
from launcher.untrusted import OPEN_FLAGS, RefusedFile, copy_matching, open_dir, read_capped

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
REF_CAP = 4096
"""A ref file holds one object id; anything bigger is not one."""
PACKED_REFS_CAP = 64 << 20
OBJECTS_CAP = 4 << 30
"""What the finish copies of the run's own object store at most (bytes); past it the
run's commits are not taken (its work tree still is)."""
LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
LOOSE_NAME = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")
PACK_NAME = re.compile(r"pack-[0-9a-f]{40}(?:[0-9a-f]{24})?\.(?:pack|idx)")
OBJECT_ID = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")
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
            "--show-object-format", "--absolute-git-dir", cwd=workspace,
        ).splitlines()  # fmt: skip
        top, common, object_format, git_dir = Path(found[0]), Path(found[1]), found[2], found[3]
    except (RunError, IndexError) as exc:
        raise UsageError(
            f"isolation: worktree needs a git repository, and {workspace} is not in one ({exc})"
        ) from exc
    _confirm_git_dir(top, common.resolve(), Path(git_dir).resolve())
    _confirm_head_refs(top, Path(git_dir), common)
    try:
        base = run_git("rev-parse", "--verify", "--quiet", "HEAD^{commit}", cwd=top).strip()
    except RunError as exc:
        raise UsageError(
            f"isolation: worktree starts from HEAD, and the repository {top} has no commit yet"
        ) from exc
    return top, (common / "objects").resolve(), object_format, base


def _confirm_git_dir(top: Path, common: Path, git_dir: Path) -> None:
    """UsageError unless `top/.git` is the repository itself, or a linked worktree's `.git`
    file that its repository names back: a `.git` file or `commondir` anyone could write in
    a workspace must not make another repository the user's."""
    dot_git = top / ".git"
    try:
        kind = os.lstat(dot_git).st_mode
        if stat.S_ISDIR(kind) and git_dir == common == dot_git.resolve():
            return
        if stat.S_ISREG(kind) and git_dir.parent == common / "worktrees":
            named = read_capped(git_dir, "gitdir", REF_CAP).decode(errors="replace").strip()
            if Path(named).resolve() == dot_git.resolve():
                return
    except OSError:
        pass
    raise UsageError(
        f"isolation: worktree: {dot_git} names the git directory {git_dir}, which does not "
        f"name {top} back as its work tree; refused (run in the repository itself or in a "
        "worktree `git worktree add` made)"
    )


def _confirm_head_refs(top: Path, git_dir: Path, common: Path) -> None:
    """UsageError if HEAD, the branch it names or packed-refs is reached through a link: git
    follows a linked ref file (or directory), so a link a model planted in the repository
    would start the run from another repository's commit."""
    try:
        name = run_git("symbolic-ref", "--quiet", "HEAD", cwd=top).strip()
    except RunError:
        name = ""  # a detached HEAD names its commit itself
    places = [(git_dir, "HEAD"), (common, "packed-refs")]
    if name.startswith("refs/"):
        places += [(git_dir, name), (common, name)]
    for root, relative in places:
        where = root
        for part in relative.split("/"):
            where = where / part
            try:
                linked = stat.S_ISLNK(os.lstat(where).st_mode)
            except OSError:
                break
            if linked:
                raise UsageError(
                    f"isolation: worktree: {where} is a symbolic link, which git would follow "
                    "(HEAD could then be another repository's commit); refused"
                )


def _inner_workspace(path: Path, inner: Path) -> Path:
    """`path/inner` made as plain directories: UsageError if any part of it is a link (a
    link the repository checks out could lead the run's workspace anywhere)."""
    where = path
    for part in inner.parts:
        where = where / part
        with contextlib.suppress(FileExistsError):
            where.mkdir()  # an untracked sub-directory is not checked out
        if not stat.S_ISDIR(os.lstat(where).st_mode):
            raise UsageError(
                f"isolation: worktree: {where.relative_to(path)} is a symlink (or not a "
                "directory) in the repository's HEAD, so the run's workspace would be "
                "outside its repository; refused"
            )
    if not where.resolve().is_relative_to(path.resolve()):
        raise UsageError(f"isolation: worktree: {inner} leads outside the run's repository")
    return where


def _label(text: str) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-_")[:LABEL_MAX].strip("-_")
    return safe or "run"


def create_worktree(workspace: Path, *, label: str, home: Path | None = None) -> Worktree:
    """A new repository borrowing the objects of the one holding `workspace`, on a new
    branch from its HEAD; the user's repository is only read."""
    workspace = workspace.resolve()
    home = home or state_home()
    if workspace.is_relative_to((home / "worktrees").resolve()):
        # A run writes its repository's refs and object store: read unconfined at a
        # set-up, they could name any repository the user can read.
        raise UsageError(
            f"isolation: worktree: {workspace} is inside an isolated run's repository, which "
            "that run may write; refused (without isolation, a nested sub-agent works in its "
            "parent's repository)"
        )
    top, objects, object_format, base = _repository(workspace)
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
        inner = _inner_workspace(path, workspace.relative_to(top))
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise
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


def _branch_commit(tree: Worktree) -> str:
    """The run's branch as its own repository names it: the loose ref, else packed-refs,
    read as plain files (no HEAD, commondir or link of the run's is followed)."""
    ref = f"refs/heads/{tree.branch}"
    try:
        found = read_capped(tree.path, f".git/{ref}", REF_CAP).strip()
    except FileNotFoundError:
        packed = read_capped(tree.path, ".git/packed-refs", PACKED_REFS_CAP)
        lines = (line.split(b" ", 1) for line in packed.splitlines() if b" " in line)
        found = next((oid for oid, name in lines if name == ref.encode()), b"")
    if not OBJECT_ID.fullmatch(found):
        raise RefusedFile(f"its branch {tree.branch} names no commit")
    return found.decode()


def _copy_run_objects(tree: Worktree, store: Path) -> None:
    """The run's own objects (loose ones and packs, nothing else: no alternates, graph or
    bitmap) copied into `store`, which the launcher made."""
    budget = [OBJECTS_CAP]
    with open_dir(tree.path, ".git/objects") as objects:
        with os.scandir(objects) as entries:
            fanout = [e.name for e in entries if LOOSE_DIR.fullmatch(e.name)]
        for name, names in [*((f, LOOSE_NAME) for f in fanout), ("pack", PACK_NAME)]:
            try:
                fd = os.open(name, OPEN_FLAGS | os.O_DIRECTORY, dir_fd=objects)
            except OSError:
                continue  # gone, or a link or a file where a directory should be
            try:
                copy_matching(fd, names, store / name, budget)
            finally:
                os.close(fd)


def _run_commits(tree: Worktree, own: dict[str, str]) -> tuple[str | None, str | None]:
    """(the run's branch commit, None), its objects now in the finishing store, or (None,
    why its commits are not taken): they must be whole from the run's store and the user's."""
    if _own_git_dir(tree) is None:
        return None, "the run replaced its repository's .git: its commits were not taken"
    try:
        head = _branch_commit(tree)
        if head == tree.base:
            return head, None
        _copy_run_objects(tree, Path(own["GIT_DIR"]) / "objects")
        run_git(
            "rev-list", "--objects", "--missing=error", head, "--not", tree.base,
            cwd=tree.path, env=own,
        )  # fmt: skip
    except (OSError, RunError) as exc:
        return None, f"the run's commits were not taken ({exc})"
    return head, None


@contextlib.contextmanager
def _finishing_git_dir(tree: Worktree) -> Iterator[dict[str, str]]:
    """A git directory made now from what the launcher wrote at set-up, for the run's work
    tree; it borrows the user's objects, and the run's own are copied in. Removed after."""
    scratch = Path(tempfile.mkdtemp(prefix=".finish-", dir=tree.path.parent))
    try:
        (scratch / "refs" / "heads").mkdir(parents=True)
        (scratch / "objects" / "info").mkdir(parents=True)
        (scratch / "objects" / "info" / "alternates").write_text(f"{tree.objects}\n")
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


def _leave_staged(tree: Worktree, index: bytes) -> None:
    """The run's repository gets the staged index (its HEAD stays): written beside the old
    one and renamed over it, through a descriptor of its `.git` reached with no link
    followed, so a link the run left there is replaced, never followed."""
    with open_dir(tree.path, ".git") as dot_git:
        temporary = f"index.subagent-{secrets.token_hex(4)}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(temporary, flags, 0o600, dir_fd=dot_git)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(index)
            os.replace(temporary, "index", src_dir_fd=dot_git, dst_dir_fd=dot_git)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=dot_git)
            raise


def finish_worktree(tree: Worktree) -> WorktreeEnd:
    """After the run: its changes fetched into the user's repository as its branch and left
    staged in its own, or its repository removed if it changed nothing."""
    end = functools.partial(WorktreeEnd, branch=tree.branch, path=str(tree.path), base=tree.base)
    note: str | None = None
    try:
        with _finishing_git_dir(tree) as own:
            head, note = _run_commits(tree, own)
            result, index = _stage_result(tree, head or tree.base, own)
            if result == tree.base:
                shutil.rmtree(tree.path, ignore_errors=True)
                return end(path=None, changed=False, error=note)
            diffstat = _deliver(tree, result, own)
        if head is not None:
            _leave_staged(tree, index)
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
