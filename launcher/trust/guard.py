"""Putting the protected places back: a copy taken when the session starts, compared and
restored after every shell command (its processes gone) and at the session's end.

Everything is done at directory fds, never through a link: a place the model turned into
a symlink (or whose parent it did) is removed, not followed. Only what the model made or
changed is touched: an entry that was not there at the start is removed whole, a changed
one rewritten from the copy. Files are compared by content (a hash), never by size and time
(the model sets those): a changed file too large to copy is removed, and said so.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path, PurePosixPath

from launcher.trust import Place, Protected
from launcher.trust.record import _Originals, acquire, let_go
from launcher.trust.relink import _unlink_hard_links
from launcher.trust.snapshot import (
    _DIR_FLAGS,
    MAX_SNAPSHOT_BYTES,
    OVERFLOW,
    Node,
    Tree,
    _ancestors,
    _differs,
    _open_dir,
    _own_rwx_at,
    complete,
    open_up_below,
    remove_tree,
    reset_root_modes,
    root_modes,
    snapshot,
)

__all__ = ["MAX_SNAPSHOT_BYTES", "Guard", "Node", "Tree", "put_back", "remove_tree", "snapshot"]


def _under(rel: str, top: str) -> bool:
    return rel == top or rel.startswith(top + "/")


def _depth(rel: str) -> int:
    return rel.count("/")


def _make(parent: int, name: str, node: Node) -> None:
    """Create `name` under `parent` as `node` was (a directory 0700 until its mode is set)."""
    if node.kind == "dir":
        os.mkdir(name, 0o700, dir_fd=parent)
    elif node.kind == "link" and node.data is not None:
        os.symlink(os.fsdecode(node.data), name, dir_fd=parent)
    elif node.kind == "file" and node.data is not None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        fd = os.open(name, flags, 0o600, dir_fd=parent)
        try:
            view = memoryview(node.data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, node.mode)
            os.utime(fd, ns=(node.mtime_ns, node.mtime_ns))
        finally:
            os.close(fd)


def _replace(root: int, rel: str, node: Node | None) -> None:
    """Remove what is at `rel` (below `root`) and, given `node`, make it again."""
    parts = PurePosixPath(rel).parts
    fd = _open_dir(root, parts[:-1])
    try:
        with contextlib.suppress(FileNotFoundError):
            remove_tree(fd, parts[-1])
        if node is not None:
            _make(fd, parts[-1], node)
    finally:
        os.close(fd)


def put_back(place: Place, before: Tree, now: Tree) -> list[str]:
    """Make the place what `before` says; the entries that could not be (not kept)."""
    root = os.open(place.base, _DIR_FLAGS)
    try:
        return _put_back(root, before, now)
    finally:
        os.close(root)


def _put_back(root: int, before: Tree, now: Tree) -> list[str]:
    lost: list[str] = []
    gone: list[str] = []  # removed whole: what was under them is made again from `before`
    for rel in sorted(now, key=_depth):
        if any(_under(rel, top) for top in gone):
            continue
        old, new = before.get(rel), now[rel]
        if rel.endswith(OVERFLOW):
            rel = rel.removesuffix(f"/{OVERFLOW}")
            old = None
        elif old is not None and not _differs(old, new):
            continue
        if old is not None and old.kind == new.kind == "dir":
            _chmod(root, rel, old.mode | 0o700)  # writable until the last pass sets it
            continue
        if old is not None and old.kind == "file" and old.data is None:
            lost.append(rel)  # changed and not copied: removed, never trusted
        _replace(root, rel, None)
        gone.append(rel)
    for rel in sorted(before, key=_depth):
        if rel.endswith(OVERFLOW) or (rel in now and not any(_under(rel, t) for t in gone)):
            continue
        node = before[rel]
        if node.kind in ("file", "link") and node.data is None:
            if rel not in lost:
                lost.append(rel)
            continue
        if node.kind == "other":
            continue
        _make_below(root, PurePosixPath(rel).parts, node)
    for rel in sorted(before, key=_depth, reverse=True):  # a 0555 one last: filled first
        if before[rel].kind == "dir":
            _chmod(root, rel, before[rel].mode)
    return lost


def _chmod(root: int, rel: str, mode: int) -> None:
    parts = PurePosixPath(rel).parts
    with contextlib.suppress(OSError):
        parent = _open_dir(root, parts[:-1])
        try:
            fd = os.open(parts[-1], _DIR_FLAGS, dir_fd=parent)
        finally:
            os.close(parent)
        try:
            os.fchmod(fd, mode)
        finally:
            os.close(fd)


def _make_below(root: int, parts: tuple[str, ...], node: Node) -> None:
    """Make `parts` (its parents remade as directories where the model removed them)."""
    fd = os.dup(root)
    try:
        for part in parts[:-1]:
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                os.mkdir(part, 0o700, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = child
        with contextlib.suppress(FileNotFoundError):
            remove_tree(fd, parts[-1])
        _make(fd, parts[-1], node)
    finally:
        os.close(fd)


class Guard:
    """The protected places as they were when the first live session of the workspace
    started; `restore` puts back whatever changed since (the model's processes must be
    gone when it is called). Sessions of one process share the copy: a session starting
    while a sibling's model has planted a file must not take the plant as the original."""

    def __init__(
        self, protected: Protected, home: Path | None = None, workspace: Path | None = None
    ) -> None:
        """`home`: the state home, where launchers guarding the workspace at once meet;
        `workspace`: where to note the git dirs (`nested`) when the copy is taken."""
        self.protected = protected
        self._key = tuple((os.path.realpath(p.base), p.rel, p.open) for p in protected.places)
        for place in protected.places:  # every session: a link may be newer than the copy
            _unlink_hard_links(place)
        shared = acquire(protected, self._key, home, workspace)
        self._shared: _Originals | None = shared
        self._before = shared.before
        self._had = shared.had
        self.nested = shared.nested
        self._modes = root_modes(protected)
        self.failed: list[str] = []
        """The places that could not be put back: the session refuses further commands."""

    def release(self) -> None:
        """This session is done with the copy; the last one out lets it go (the next
        session takes a fresh one)."""
        shared, self._shared = self._shared, None
        if shared is not None:
            let_go(self._key, shared)

    def changed(self) -> list[str]:
        """The places that differ from their copies."""
        return [p.rel for p, before in self._before if _changed(p, before) is not None]

    def restore(self) -> list[str]:
        """Put every changed place back; the places put back (or that could not be)."""
        failed: list[str] = []
        try:
            return restore_all(self._before, self._had, failed)
        finally:
            reset_root_modes(self._modes)
            self.failed = sorted({*self.failed, *failed})

    @property
    def record_dir(self) -> Path | None:
        """Where launchers guarding the workspace meet (None: this process only)."""
        shared = self._shared
        return shared.record.dir if shared is not None and shared.record is not None else None


def _changed(place: Place, before: Tree) -> Tree | None:
    now = snapshot(place, against=before)
    if before.keys() != now.keys():
        return now
    return now if any(_differs(old, now[key]) for key, old in before.items()) else None


def restore_all(
    before_all: list[tuple[Place, Tree]],
    had: set[tuple[Path, str]],
    failed: list[str] | None = None,
) -> list[str]:
    """Put every changed place back as `before_all` says; the places put back (or that
    could not be, also added to `failed`). Each is looked at just before it is put back:
    one place's repair (a `.git` symlink removed) changes what the next one sees."""
    said: list[str] = []
    for place, before in before_all:
        now = _changed(place, before)
        if now is None:
            continue
        if not complete(before):  # a tree cut short: what it held cannot be made again
            said.append(f"{place.rel} (changed; too large to put back)")
            continue
        try:
            lost = _put_back_opened(place, before, now)
        except OSError as exc:
            said.append(f"{place.rel} (could not be put back: {exc.strerror})")
            if failed is not None:
                failed.append(place.rel)
            continue
        said.append(
            place.rel + (f" (removed, too large to put back: {', '.join(lost)})" if lost else "")
        )
        _tidy(place, had)
    return said


def _put_back_opened(place: Place, before: Tree, now: Tree) -> list[str]:
    """`put_back`, this user's rwx given back first on the directories on the way to the
    place (the model can `chmod 0555` its workspace), and on everything in the place too
    when that was not enough (once)."""
    _open_up_place(place, below=False)
    try:
        return put_back(place, before, now)
    except PermissionError:
        _open_up_place(place, below=True)
    again = _changed(place, before)
    return [] if again is None else put_back(place, before, again)


def _open_up_place(place: Place, below: bool) -> None:
    """This user's rwx on the place's base, the directories on the way to it and (`below`)
    every directory in it: at directory fds, never through a link."""
    base = os.path.realpath(place.base)
    with contextlib.suppress(OSError):
        up = os.open(os.path.dirname(base) or "/", _DIR_FLAGS)
        try:
            _own_rwx_at(up, os.path.basename(base))
        finally:
            os.close(up)
    parts = PurePosixPath(place.rel).parts
    with contextlib.suppress(OSError):
        root = os.open(base, _DIR_FLAGS)
        try:
            open_up_below(root, parts if below else parts[:-1], 0 if not below else 20_000)
        finally:
            os.close(root)


def _tidy(place: Place, had: set[tuple[Path, str]]) -> None:
    """Remove the now empty directories on the way to the model's own it made."""
    for way in sorted(_ancestors(place.open), key=_depth, reverse=True):
        if (place.base, way) not in had:
            with contextlib.suppress(OSError):
                parts = PurePosixPath(way).parts
                root = os.open(place.base, _DIR_FLAGS)
                try:
                    parent = _open_dir(root, parts[:-1])
                finally:
                    os.close(root)
                try:
                    os.rmdir(parts[-1], dir_fd=parent)
                finally:
                    os.close(parent)
