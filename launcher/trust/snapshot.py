"""A protected place as it is: its entries, their modes, the bytes of its files (within a
budget) and their hashes, read at directory fds, never through a link."""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import PurePosixPath

from launcher.trust import Place, Protected

MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024
"""File contents kept in all; a file past this is hashed only (removed if changed)."""
MAX_ENTRIES = 20_000
"""Entries looked at per place; past this the place counts as changed."""
MAX_DEPTH = 64
"""Directory levels looked at below a place; deeper counts as changed."""
OVERFLOW = "\x00overflow"
"""The name of the entry that marks a tree cut short (never a real file name)."""
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@dataclass(frozen=True)
class Node:
    """One entry as it was: its kind (file, dir, link, other), mode, size, time, bytes."""

    kind: str
    mode: int
    size: int = 0
    mtime_ns: int = 0
    data: bytes | None = None  # a file's bytes, a link's target; None: not kept
    digest: bytes | None = None  # a file's SHA-256; None: not read


Tree = dict[str, Node]


class _Budget:
    def __init__(self) -> None:
        self.bytes = MAX_SNAPSHOT_BYTES


def _file_bytes(
    parent: int, name: str, size: int, budget: _Budget | None
) -> tuple[bytes | None, bytes | None]:
    """The file's bytes (kept while `budget` lasts; never without one) and its hash."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=parent)
    except OSError:
        return None, None
    keep = budget is not None and size <= budget.bytes
    chunks: list[bytes] = []
    total = 0
    digest = hashlib.sha256()
    try:
        while chunk := os.read(fd, 1 << 20):
            digest.update(chunk)
            total += len(chunk)
            if keep:
                chunks.append(chunk)
                if budget is not None and total > budget.bytes:
                    keep, chunks = False, []
    except OSError:
        return None, None
    finally:
        os.close(fd)
    if not keep or budget is None:
        return None, digest.digest()
    budget.bytes -= total
    return b"".join(chunks), digest.digest()


def _capture(
    parent: int,
    name: str,
    rel: str,
    tree: Tree,
    budget: _Budget | None,
    depth: int,
    skip: tuple[str, ...] = (),
    way: frozenset[str] = frozenset(),
    against: Tree | None = None,
) -> None:
    if rel in skip:
        return  # the model's own (its memory): neither copied nor put back
    if len(tree) >= MAX_ENTRIES or depth > MAX_DEPTH:
        tree[f"{rel}/{OVERFLOW}"] = Node("other", 0)
        return
    try:
        st = os.lstat(name, dir_fd=parent)
    except OSError:
        return
    mode, perms = st.st_mode, stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(mode):
        target = os.fsencode(os.readlink(name, dir_fd=parent))
        tree[rel] = Node("link", perms, st.st_size, st.st_mtime_ns, target)
    elif stat.S_ISREG(mode):
        data = digest = None
        old = against.get(rel) if against is not None else None
        if against is None or (old is not None and old.kind == "file" and old.size == st.st_size):
            data, digest = _file_bytes(parent, name, st.st_size, budget)
        tree[rel] = Node("file", perms, st.st_size, st.st_mtime_ns, data, digest)
    elif stat.S_ISDIR(mode):
        if rel not in way:  # a directory on the way to the model's own is not a change
            tree[rel] = Node("dir", perms)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError:
            tree[f"{rel}/{OVERFLOW}"] = Node("other", 0)  # unreadable: cannot vouch for it
            return
        try:
            for entry in sorted(os.listdir(fd)):
                _capture(fd, entry, f"{rel}/{entry}", tree, budget, depth + 1, skip, way, against)
        finally:
            os.close(fd)
    else:
        tree[rel] = Node("other", perms, st.st_size, st.st_mtime_ns)


def snapshot(place: Place, budget: _Budget | None = None, against: Tree | None = None) -> Tree:
    """The place as it is (keys: paths relative to its base); where a component on the way
    is not a directory (a symlink the model made, say), that component, and nothing below.
    Given `against` (an earlier copy), nothing is kept: only the files of its size hashed."""
    if against is None:
        budget = budget or _Budget()
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
                _capture(fd, part, "/".join(parts[:depth]), tree, budget, 0, against=against)
                return tree
            os.close(fd)
            fd = child
        way = frozenset(_ancestors(place.open))
        _capture(fd, parts[-1], place.rel, tree, budget, 0, place.open, way, against)
    finally:
        os.close(fd)
    return tree


def _differs(old: Node, new: Node) -> bool:
    if (old.kind, old.mode) != (new.kind, new.mode):
        return True
    if old.kind == "dir":
        return False
    if old.kind == "file":  # by content: size and time are the model's to set
        if old.size != new.size:
            return True
        if old.digest is not None or new.digest is not None:
            return old.digest != new.digest
    elif old.data is not None and new.data is not None:
        return old.data != new.data
    return (old.size, old.mtime_ns) != (new.size, new.mtime_ns)


def complete(tree: Tree) -> bool:
    """Whether the whole tree was looked at (no part cut short for size or depth)."""
    return not any(key.endswith(OVERFLOW) for key in tree)


def _open_dir(base: int, parts: tuple[str, ...]) -> int:
    """An fd on `parts` below `base`, never through a link (OSError otherwise)."""
    fd = os.dup(base)
    for part in parts:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
        finally:
            os.close(fd)
        fd = child
    return fd


def _ancestors(paths: tuple[str, ...]) -> set[str]:
    """Every directory on the way to `paths` (which hold what stays the model's)."""
    found: set[str] = set()
    for path in paths:
        parts = PurePosixPath(path).parts
        found.update("/".join(parts[:n]) for n in range(1, len(parts)))
    return found


def remove_tree(parent: int, name: str) -> None:
    """Remove `name` under `parent`, a directory at any depth, never following a link:
    sub-directories are moved up beside it first, so nothing recurses."""
    pending = [name]
    while pending:
        current = pending.pop()
        try:
            st = os.lstat(current, dir_fd=parent)
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            os.unlink(current, dir_fd=parent)
            continue
        if stat.S_IMODE(st.st_mode) & 0o700 != 0o700:  # a 0000 directory the model made
            _open_up(parent, current)
        fd = os.open(current, _DIR_FLAGS, dir_fd=parent)
        try:
            for child in os.listdir(fd):
                child_st = os.lstat(child, dir_fd=fd)
                if stat.S_ISDIR(child_st.st_mode):
                    if stat.S_IMODE(child_st.st_mode) & 0o700 != 0o700:
                        _open_up(fd, child)  # moving a directory writes its `..`
                    hoisted = f".subagent-removing-{secrets.token_hex(6)}"
                    os.rename(child, hoisted, src_dir_fd=fd, dst_dir_fd=parent)
                    pending.append(hoisted)
                else:
                    os.unlink(child, dir_fd=fd)
        finally:
            os.close(fd)
        os.rmdir(current, dir_fd=parent)


def _open_up(parent: int, name: str) -> None:
    """Give the owner rwx on directory `name` (not through a link where Linux can say so)."""
    o_path = getattr(os, "O_PATH", 0)
    if not o_path:
        os.chmod(name, 0o700, dir_fd=parent)
        return
    fd = os.open(name, o_path | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
    try:
        os.chmod(f"/proc/self/fd/{fd}", 0o700)
    finally:
        os.close(fd)


def own_rwx(fd: int) -> None:
    """Give this user back rwx on the directory open at `fd`, when it is this user's and the
    model took some away (`chmod 0555`): what is in it can then be put back or defused."""
    st = os.fstat(fd)
    if st.st_uid == os.geteuid() and stat.S_IMODE(st.st_mode) & 0o700 != 0o700:
        os.fchmod(fd, stat.S_IMODE(st.st_mode) | 0o700)


def open_up_below(parent: int, parts: tuple[str, ...], budget: int = MAX_ENTRIES) -> None:
    """Give this user rwx on `parent`, each directory of `parts` below it and every
    directory under the last one (within `budget` entries); never through a link. What
    cannot be opened up is left: the retry that follows says it failed."""
    with contextlib.suppress(OSError):
        own_rwx(parent)
    fd = os.dup(parent)
    try:
        for part in parts:
            with contextlib.suppress(OSError):
                _own_rwx_at(fd, part)
            child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        pending = [fd]
        fd = -1
        while pending and budget > 0:
            current = pending.pop()
            try:
                names = []
                with contextlib.suppress(OSError):
                    names = os.listdir(current)
                for name in names:
                    budget -= 1
                    if budget <= 0:
                        break
                    with contextlib.suppress(OSError):
                        if stat.S_ISDIR(os.lstat(name, dir_fd=current).st_mode):
                            _own_rwx_at(current, name)
                            pending.append(os.open(name, _DIR_FLAGS, dir_fd=current))
            finally:
                os.close(current)
        for left in pending:
            os.close(left)
    except OSError:
        pass
    finally:
        if fd >= 0:
            os.close(fd)


def _own_rwx_at(parent: int, name: str) -> None:
    st = os.lstat(name, dir_fd=parent)
    if (
        stat.S_ISDIR(st.st_mode)
        and st.st_uid == os.geteuid()
        and stat.S_IMODE(st.st_mode) & 0o700 != 0o700
    ):
        _open_up(parent, name)
        # _open_up sets 0700: keep what else the directory allowed
        with contextlib.suppress(OSError):
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            try:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) | 0o700)
            finally:
                os.close(fd)


def root_modes(protected: Protected) -> dict[str, int]:
    """The modes of the places' bases (the workspace root) now: put back after a restore."""
    modes: dict[str, int] = {}
    for place in protected.places:
        with contextlib.suppress(OSError):
            base = os.path.realpath(place.base)
            modes[base] = stat.S_IMODE(os.stat(base).st_mode)
    return modes


def reset_root_modes(modes: dict[str, int]) -> None:
    """Give each base the mode it had at the start, when the model changed it."""
    for base, mode in modes.items():
        with contextlib.suppress(OSError):
            fd = os.open(base, _DIR_FLAGS)
            try:
                if stat.S_IMODE(os.fstat(fd).st_mode) != mode:
                    os.fchmod(fd, mode)
            finally:
                os.close(fd)


def remove_dir(path: str | os.PathLike[str]) -> None:
    """Remove directory `path` and everything in it, whatever modes the model left there
    (a `chmod 000` directory is opened up first), never following a link."""
    path = os.fspath(path)
    parent = os.open(os.path.dirname(path) or "/", _DIR_FLAGS)
    try:
        name = os.path.basename(path)
        with contextlib.suppress(OSError):
            _own_rwx_at(parent, name)
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
        try:
            for child in os.listdir(fd):
                remove_tree(fd, child)  # what it hoists stays inside `path`
        finally:
            os.close(fd)
        os.rmdir(name, dir_fd=parent)
    finally:
        os.close(parent)
