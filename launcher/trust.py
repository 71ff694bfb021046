"""The threat model, written and enforced in one place: what the model may never change.

Trusted: the user, and what they wrote before the run (config, agent files, the
repository's git config and hooks). Not trusted: the model, and everything any process
it started writes — in this run or an earlier one. So the places the launcher or a host
reads its config from, and the parts of a repository that decide what git executes, are
read-only to the model: the file tools refuse them (`Protected.refusal`), and whatever a
shell command changed there is put back as it was when the session started, before the
tool's result is handed on (`Guard.restore`). The sandbox policy takes its protected
paths from here too.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

GIT_EXECUTES: tuple[str, ...] = (
    "config",
    "config.worktree",
    "commondir",
    "hooks",
    "info",
    "worktrees",
)
"""Under a workspace's `.git/`: what decides what git runs (config: fsmonitor, drivers,
hooksPath; hooks; info/attributes) or where it reads that from (commondir, the records of
linked worktrees)."""
LINKED_EXECUTES: tuple[str, ...] = ("commondir", "gitdir", "config.worktree")
"""Under a linked worktree's own git dir (writable for its index and HEAD): where its
config comes from."""
MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
"""Protected files larger than this in all are compared by size and time, not restored."""
MAX_LINK_BYTES = 4096
"""A `.git` file or back-link longer than this is not git's."""


def config_places() -> tuple[str, ...]:
    """Every workspace path the launcher or a host reads config from, taken from the
    config readers themselves (a folder covers what is under it)."""
    from launcher.config.claude_settings import SETTINGS_DIR
    from launcher.config.discovery import PROJECT_AGENT_DIRS, PROJECT_CONFIG_DIR
    from launcher.config.hosts import PROJECT_HOST_DIRS, PROJECT_HOST_FILES

    found = [PROJECT_CONFIG_DIR, SETTINGS_DIR]
    found += [PurePosixPath(folder).parts[0] for folder, _ in PROJECT_AGENT_DIRS]
    found += PROJECT_HOST_DIRS
    found += [name for name, _ in PROJECT_HOST_FILES]
    unique = list(dict.fromkeys(found))
    return tuple(p for p in unique if not any(_under(p, q) and p != q for q in unique))


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


@dataclass(frozen=True)
class Place:
    """One protected path: `rel` under the real directory `base`."""

    base: Path
    rel: str

    @property
    def path(self) -> Path:
        """The absolute path."""
        return self.base / self.rel


@dataclass(frozen=True)
class Protected:
    """A session's protected places (empty: nothing protected)."""

    places: tuple[Place, ...] = ()

    def paths(self) -> tuple[Path, ...]:
        """Every protected path, absolute."""
        return tuple(p.path for p in self.places)

    def covering(self, path: Path) -> Place | None:
        """The place `path` is (or is under), or None."""
        text = str(path)
        for place in self.places:
            if _under(text, str(place.path)):
                return place
        return None

    def refusal(self, real: Path, lexical: Path) -> str | None:
        """Why a file tool may not write `real` (reached as `lexical`), or None."""
        place = self.covering(real) or self.covering(lexical)
        if place is None:
            return None
        return (
            f"'{place.rel}' is protected: the model may not change the config the launcher "
            "or a host reads, nor what decides what git runs (set `sandbox: {write_config: "
            "true}` in the agent to let it edit config); refused"
        )


def _read_small(path: Path) -> str:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_LINK_BYTES + 1)
    except OSError:
        return ""
    if len(data) > MAX_LINK_BYTES:
        return ""
    try:
        return data.decode("utf-8").strip()
    except UnicodeDecodeError:
        return ""


def _real(base: Path, raw: str) -> Path:
    return Path(os.path.realpath(base / raw))


def _is_repository(common: Path) -> bool:
    """A git directory: HEAD, objects/ and refs/, none of them a symlink."""
    parts = (common / "HEAD", common / "objects", common / "refs")
    if any(p.is_symlink() or not p.exists() for p in parts):
        return False
    return (common / "objects").is_dir() and (common / "refs").is_dir()


def linked_worktree(workspace: Path) -> tuple[Path, Path] | None:
    """(the worktree's git dir, the common dir) when `workspace` is in a linked worktree
    whose `.git` file git's own back-link confirms; None otherwise (an ordinary checkout,
    no repository, or a `.git` file the back-link does not confirm)."""
    for root in (workspace, *workspace.parents):
        dot_git = root / ".git"
        if dot_git.is_symlink() or dot_git.is_dir():
            return None
        if dot_git.is_file():
            break
    else:
        return None
    line = _read_small(dot_git)
    if not line.startswith("gitdir:"):
        return None
    gitdir = _real(root, line.removeprefix("gitdir:").strip())
    if gitdir.parent.name != "worktrees" or not gitdir.is_dir():
        return None
    common = gitdir.parent.parent
    commondir = _read_small(gitdir / "commondir")
    if not commondir or _real(gitdir, commondir) != common or not _is_repository(common):
        return None
    # git's back-link: the worktree's record names the `.git` file that points at it.
    back = _read_small(gitdir / "gitdir")
    if not back or _real(gitdir, back) != Path(os.path.realpath(dot_git)):
        return None
    if common == Path("/") or workspace.is_relative_to(common):
        return None
    return gitdir, common


def protected_set(workspace: Path, *, write_config: bool = False) -> Protected:
    """The places in and around `workspace` the model may not change, as they are now
    (call it when the session starts: a `.git` that does not exist yet is protected whole)."""
    root = Path(os.path.realpath(workspace))
    rels = [] if write_config else list(config_places())
    dot_git = root / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        rels += [f".git/{name}" for name in GIT_EXECUTES]
    else:
        rels.append(".git")  # a linked worktree's pointer file, or none yet: all of it
    places = [Place(root, rel) for rel in rels]
    linked = linked_worktree(root)
    if linked is not None:
        places += [Place(linked[0], name) for name in LINKED_EXECUTES]
    return Protected(tuple(places))


@dataclass(frozen=True)
class _Node:
    kind: str  # file, dir, link, other
    mode: int
    size: int
    mtime_ns: int
    data: bytes | None = None  # a file's bytes, a link's target; None: too big to keep


Tree = dict[str, _Node]
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _remove(parent: int, name: str) -> None:
    st = os.lstat(name, dir_fd=parent)
    if stat.S_ISDIR(st.st_mode):
        import shutil

        shutil.rmtree(name, dir_fd=parent)
    else:
        os.unlink(name, dir_fd=parent)


class _Budget:
    def __init__(self) -> None:
        self.left = MAX_SNAPSHOT_BYTES


def _capture(parent: int, name: str, rel: str, tree: Tree, budget: _Budget) -> None:
    try:
        st = os.lstat(name, dir_fd=parent)
    except OSError:
        return
    mode = st.st_mode
    base = (stat.S_IMODE(mode), st.st_size, st.st_mtime_ns)
    if stat.S_ISLNK(mode):
        target = os.readlink(name, dir_fd=parent).encode("utf-8", "surrogateescape")
        tree[rel] = _Node("link", *base, target)
    elif stat.S_ISREG(mode):
        tree[rel] = _Node("file", *base, _file_bytes(parent, name, st.st_size, budget))
    elif stat.S_ISDIR(mode):
        tree[rel] = _Node("dir", stat.S_IMODE(mode), 0, 0)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError:
            return
        try:
            for entry in sorted(os.listdir(fd)):
                _capture(fd, entry, f"{rel}/{entry}", tree, budget)
        finally:
            os.close(fd)
    else:
        tree[rel] = _Node("other", *base)


def _file_bytes(parent: int, name: str, size: int, budget: _Budget) -> bytes | None:
    if size > budget.left:
        return None
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=parent
        )
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            if sum(map(len, chunks)) > budget.left:
                return None
        data = b"".join(chunks)
    finally:
        os.close(fd)
    budget.left -= len(data)
    return data


def _snapshot(place: Place, budget: _Budget) -> Tree:
    """The place as it is; where a component on the way is not a directory (a symlink the
    model made, say), that component as it is, and nothing below it."""
    tree: Tree = {}
    try:
        fd = os.open(place.base, _DIR_FLAGS)
    except OSError:
        return tree
    parts = PurePosixPath(place.rel).parts
    try:
        for depth, part in enumerate(parts[:-1], 1):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                _capture(fd, part, "/".join(parts[:depth]), tree, budget)
                return tree
            os.close(fd)
            fd = child
        _capture(fd, parts[-1], place.rel, tree, budget)
    finally:
        os.close(fd)
    return tree


def _put_back(place: Place, before: Tree) -> None:
    """Make the place what `before` says, walking from its base never through a link: a
    component on the way that is not a directory is removed (and remade if it was one)."""
    fd = os.open(place.base, _DIR_FLAGS)
    parts = PurePosixPath(place.rel).parts
    try:
        for depth, part in enumerate(parts[:-1], 1):
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                with contextlib.suppress(FileNotFoundError):
                    _remove(fd, part)
                here = "/".join(parts[:depth])
                if here in before:  # it was not a directory then either
                    _rebuild(fd, here, {here: before[here]})
                    return
                if not before:
                    return
                os.mkdir(part, 0o755, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        with contextlib.suppress(FileNotFoundError):
            _remove(fd, parts[-1])
        _rebuild(fd, place.rel, before)
    finally:
        os.close(fd)


def _same(before: Tree, now: Tree) -> bool:
    if before.keys() != now.keys():
        return False
    for key, old in before.items():
        new = now[key]
        if (old.kind, old.mode) != (new.kind, new.mode):
            return False
        if old.data is not None and new.data is not None:
            if old.data != new.data:
                return False
        elif (old.size, old.mtime_ns) != (new.size, new.mtime_ns):
            return False
    return True


def _rebuild(parent: int, rel: str, tree: Tree) -> None:
    """Write `tree` (`rel` as it was) under `parent`, directories before their files."""
    prefix = str(PurePosixPath(rel).parent)
    cut = 0 if prefix == "." else len(prefix) + 1
    for rel in sorted(tree, key=lambda r: r.count("/")):
        node = tree[rel]
        local = rel[cut:]
        if node.kind == "dir":
            os.mkdir(local, node.mode, dir_fd=parent)
            os.chmod(local, node.mode, dir_fd=parent)
        elif node.kind == "link" and node.data is not None:
            os.symlink(node.data.decode("utf-8", "surrogateescape"), local, dir_fd=parent)
        elif node.kind == "file" and node.data is not None:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(local, flags, node.mode, dir_fd=parent)
            try:
                view = memoryview(node.data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fchmod(fd, node.mode)
                os.utime(fd, ns=(node.mtime_ns, node.mtime_ns))
            finally:
                os.close(fd)


class Guard:
    """The protected places as they were when the session started; `restore` puts back
    whatever changed since (the model's processes must be gone when it is called)."""

    def __init__(self, protected: Protected) -> None:
        self.protected = protected
        budget = _Budget()
        self._before = [(place, _snapshot(place, budget)) for place in protected.places]

    def changed(self) -> Iterator[tuple[Place, Tree]]:
        """Each place that differs from its snapshot, with the snapshot."""
        budget = _Budget()
        for place, before in self._before:
            if not _same(before, _snapshot(place, budget)):
                yield place, before

    def restore(self) -> list[str]:
        """Put every changed place back; the places put back (or that could not be)."""
        said: list[str] = []
        for place, before in list(self.changed()):
            try:
                _put_back(place, before)
                said.append(place.rel)
            except OSError as exc:
                said.append(f"{place.rel} (could not be restored: {exc.strerror})")
        return said
