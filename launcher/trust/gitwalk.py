"""The walk for git directories in a workspace, again and again at little cost: every git
dir (what git's discovery takes for one) with a fingerprint of what decides what git runs
there, and every `.git` entry that is not a directory. No link followed, within a budget.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from launcher.trust.snapshot import _DIR_FLAGS

MAX_WALK_ENTRIES = 500_000
"""Directory entries looked at per walk; past this the walk is cut short (refuse-safe)."""
MAX_WALK_DEPTH = 128
"""Directory levels looked at; what lies deeper is not walked (the walk goes on beside it,
and says it was cut)."""
MAX_WALK_SECONDS = 60.0
"""Time one walk may take; past it the walk is cut short (refuse-safe), like the budget."""
MAX_CONFIG_BYTES = 1 << 20
"""A config larger than this is not read: it is replaced by one keeping nothing."""
MAX_POINTER_BYTES = 4096
"""A `.git` file or `commondir` longer than this is not git's."""
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass
class Scan:
    """What one walk found: git dirs and their fingerprints, `.git` pointers, and whether
    the walk was cut short (`cut`: the first place not walked, `why` not)."""

    gitdirs: dict[str, bytes] = field(default_factory=dict)
    pointers: dict[str, bytes] = field(default_factory=dict)
    cut: str | None = None
    why: str | None = None


def read_at(parent: int, name: str, cap: int) -> bytes | None:
    """A regular file's bytes (None: missing, not regular, or longer than `cap`)."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = b""
        while chunk := os.read(fd, cap + 1 - len(data)):
            data += chunk
            if len(data) > cap:
                return None
        return data
    except OSError:
        return None
    finally:
        os.close(fd)


def fingerprint(gitdir: int) -> bytes:
    """What decides what git runs in a git dir: its config, pointers and hooks, and those of
    the common dir its `commondir` names (git reads config and hooks there)."""
    digest = hashlib.sha256()
    _own_fingerprint(gitdir, digest)
    common = read_at(gitdir, "commondir", MAX_POINTER_BYTES)
    if common is not None and common.strip():
        try:
            fd = os.open(os.fsdecode(common.strip()), _DIR_FLAGS, dir_fd=gitdir)
        except OSError:
            return digest.digest()
        try:
            digest.update(b"common:")
            _own_fingerprint(fd, digest)
        finally:
            os.close(fd)
    return digest.digest()


def _own_fingerprint(gitdir: int, digest: Any) -> None:
    for name in ("config", "config.worktree", "commondir"):
        with contextlib.suppress(OSError):
            st = os.lstat(name, dir_fd=gitdir)
            digest.update(f"{name}:{st.st_mode}:{st.st_size}:".encode())
            digest.update(read_at(gitdir, name, MAX_CONFIG_BYTES) or b"\x00")
    with contextlib.suppress(OSError):
        st = os.lstat("hooks", dir_fd=gitdir)
        digest.update(f"hooks:{st.st_mode}:".encode())
        if stat.S_ISDIR(st.st_mode):
            hooks = os.open("hooks", _DIR_FLAGS, dir_fd=gitdir)
            try:
                for name in sorted(os.listdir(hooks)):
                    if not name.endswith(".sample"):
                        digest.update(name.encode() + b"\x00")
                        digest.update(read_at(hooks, name, MAX_CONFIG_BYTES) or b"\x00")
            finally:
                os.close(hooks)


def _is_gitdir(names: set[str]) -> bool:
    """What git's discovery takes for a git dir (HEAD, and objects and refs or a
    commondir that has them)."""
    return "HEAD" in names and ("commondir" in names or {"objects", "refs"} <= names)


def _pointer(parent: int, name: str, mode: int) -> bytes:
    """A `.git` entry that is not a directory, as a mark: its kind and what it says."""
    data = b""
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(mode):
            data = os.fsencode(os.readlink(name, dir_fd=parent))
        elif stat.S_ISREG(mode):
            data = read_at(parent, name, MAX_POINTER_BYTES) or b""
    return f"{mode:o}:".encode() + data


LOCAL_FILESYSTEMS = frozenset(
    {"ext2", "ext3", "ext4", "xfs", "btrfs", "tmpfs", "f2fs", "bcachefs", "zfs", "overlay"}
)
"""Filesystems whose ctime this kernel stamps from its own clock: the only ones whose
listings the walk reuses (a network or FUSE filesystem's times come from elsewhere)."""
RACY_WINDOW_NS = 2_000_000_000
"""A directory whose ctime is this close to (or after) the walk's start is listed again next
walk. The kernel stamps ctime from its coarse clock (at most a jiffy, 10 ms, behind) cut to
the filesystem's granularity (1 ns; 1 s on ext2/ext3 small inodes): a change made after the
listing gets a ctime above start - 1 s - 1 jiffy, so it differs from any ctime cached."""


@dataclass(frozen=True)
class _Listed:
    """One directory's listing as the walk needs it, valid while its identity holds."""

    ident: tuple[int, int, int]  # st_dev, st_ino, st_ctime_ns
    subdirs: tuple[str, ...]
    pointers: tuple[str, ...]  # `.git` entries that are not directories
    gitdir: bool
    entries: int


def _ident(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_dev, st.st_ino, st.st_ctime_ns)


class _Cut(Exception):
    """The whole walk stops at `rel` (its entry budget or its time spent)."""

    def __init__(self, rel: str, why: str) -> None:
        super().__init__(rel)
        self.rel = rel
        self.why = why


def _note_cut(found: Scan, rel: str, why: str) -> None:
    """A subtree not walked: the first is said; the walk goes on beside it."""
    if found.cut is None:
        found.cut, found.why = rel, why


def _open_up(parent: int, name: str) -> bool:
    """Make directory `name` (the session user's own, unreadable) readable and searchable by
    its owner, never through a link; whether it was."""
    try:
        st = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
            return False
        fd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=parent)
    except OSError:
        return False
    try:
        os.chmod(f"/proc/self/fd/{fd}", stat.S_IMODE(st.st_mode) | stat.S_IRUSR | stat.S_IXUSR)
    except OSError:
        return False
    finally:
        os.close(fd)
    return True


def _local_devices() -> frozenset[int]:
    """The st_dev of every mount of a filesystem in `LOCAL_FILESYSTEMS`."""
    devices = set()
    with contextlib.suppress(OSError):
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as file:
            for line in file:
                fields = line.split()
                if " - " not in line or len(fields) < 3:
                    continue
                kind = line.split(" - ", 1)[1].split()[0]
                major, _, minor = fields[2].partition(":")
                if kind in LOCAL_FILESYSTEMS and major.isdigit() and minor.isdigit():
                    devices.add(os.makedev(int(major), int(minor)))
    return frozenset(devices)


class Walker:
    """Walks a workspace for git dirs, again and again: a directory whose identity and
    ctime are what they were at a previous walk has the same entries (any change to them
    sets its ctime, which the model cannot choose), so its listing is reused, not read
    again. Still every directory is stat'ed (no link followed) and every git dir's config
    and hooks fingerprinted each walk: the cost grows with directories, not files.

    ctime, not mtime: utime(2) sets mtime back, never ctime (setting the clock needs
    CAP_SYS_TIME, which no confined process holds). A listing is kept only when its
    directory's ctime is older than the walk's start by `RACY_WINDOW_NS` (an entry made in
    the same clock tick, after the listing, would not change it) and its filesystem is
    local. The result is the same `Scan` a walk without the cache gives."""

    def __init__(self, workspace: Path, *, cache: bool = True) -> None:
        self.workspace = workspace
        self._cache: dict[str, _Listed] = {}
        self._devices = _local_devices() if cache else frozenset()
        self.listed: list[str] = []
        """The directories the last walk read the entries of (the others: reused)."""

    def scan(self) -> Scan:
        """Every git dir and `.git` pointer in the workspace (not its own `.git`)."""
        found = Scan()
        self.listed = []
        self._start = time.time_ns()
        self._seen = 0
        self._deadline = time.monotonic() + MAX_WALK_SECONDS
        fresh: dict[str, _Listed] = {}
        try:
            root = os.open(self.workspace, _DIR_FLAGS)
        except OSError:
            found.cut, found.why = ".", "unreadable"
            return found
        try:
            self._visit(root, None, ".", 0, found, fresh)
            # The workspace's own `.git` is protected apart, but for its `modules/`: a
            # submodule's git dir made during the run is the model's like any other.
            try:
                own = os.open(".git", _DIR_FLAGS, dir_fd=root)
            except OSError:
                own = None
            if own is not None:
                try:
                    self._visit(own, "modules", ".git/modules", 1, found, fresh)
                finally:
                    os.close(own)
        except _Cut as cut:
            found.cut, found.why = cut.rel, cut.why
        finally:
            os.close(root)
            self._cache = fresh
        return found

    def _visit(
        self,
        parent: int,
        name: str | None,
        rel: str,
        depth: int,
        found: Scan,
        fresh: dict[str, _Listed],
    ) -> None:
        """Walk directory `name` of `parent` (None: `parent` itself, the root)."""
        if depth > MAX_WALK_DEPTH:
            _note_cut(found, rel, "too deep")
            return  # not below: what is beside it is still walked
        known = self._cache.get(rel)
        if name is not None and known is not None and not known.subdirs and not known.gitdir:
            # A leaf as it was: one stat, no open, no listing.
            try:
                st = os.stat(name, dir_fd=parent, follow_symlinks=False)
            except OSError:
                st = None
            if st is not None and _ident(st) == known.ident and not known.pointers:
                self._count(known, rel, depth)
                fresh[rel] = known
                return
        opened = os.dup(parent) if name is None else self._open(parent, name, rel, found)
        if opened is None:
            return
        fd = opened
        try:
            ident = _ident(os.fstat(fd))  # before the listing: a later change moves it
            if known is None or known.ident != ident:
                known = self._list(fd, rel, ident)
            if ident[0] in self._devices and ident[2] < self._start - RACY_WINDOW_NS:
                fresh[rel] = known
            self._count(known, rel, depth)
            if known.gitdir:
                found.gitdirs[rel] = fingerprint(fd)
            for entry in known.pointers:
                with contextlib.suppress(OSError):  # a file's content moves no ctime
                    mode = os.stat(entry, dir_fd=fd, follow_symlinks=False).st_mode
                    if not stat.S_ISDIR(mode):
                        found.pointers[_join(rel, entry)] = _pointer(fd, entry, mode)
            for sub in known.subdirs:
                self._visit(fd, sub, _join(rel, sub), depth + 1, found, fresh)
        finally:
            os.close(fd)

    def _open(self, parent: int, name: str, rel: str, found: Scan) -> int | None:
        """Directory `name` of `parent` opened (None: gone, a link, or unreadable: then the
        walk is said to be cut there; a directory of this user's is made readable first)."""
        for attempt in (0, 1):
            try:
                return os.open(name, _DIR_FLAGS, dir_fd=parent)
            except (FileNotFoundError, NotADirectoryError):
                return None  # gone meanwhile (or no submodules)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    return None  # now a link: not followed
                if exc.errno in (errno.EACCES, errno.EPERM) and not attempt:
                    if _open_up(parent, name):
                        continue
                break
        _note_cut(found, rel, "unreadable")  # cannot vouch for what is below
        return None

    def _list(self, fd: int, rel: str, ident: tuple[int, int, int]) -> _Listed:
        self.listed.append(rel)
        names: list[str] = []
        subdirs: list[str] = []
        pointers: list[str] = []
        with os.scandir(fd) as entries:  # the kind from the entry: no stat a file
            for entry in entries:
                names.append(entry.name)
                if rel == "." and entry.name == ".git":
                    continue  # the workspace's own: protected places, put back
                if entry.is_dir(follow_symlinks=False):
                    subdirs.append(entry.name)
                elif entry.name == ".git":
                    pointers.append(entry.name)
        return _Listed(ident, tuple(subdirs), tuple(pointers), _is_gitdir(set(names)), len(names))

    def _count(self, listed: _Listed, rel: str, depth: int) -> None:
        self._seen += listed.entries
        if self._seen > MAX_WALK_ENTRIES:
            raise _Cut(rel, "too many entries")
        if time.monotonic() > self._deadline:
            raise _Cut(rel, "it took too long")


def _join(rel: str, name: str) -> str:
    return name if rel == "." else f"{rel}/{name}"


def scan(workspace: Path) -> Scan:
    """Every git dir and `.git` pointer in `workspace` (not its own `.git`), read afresh."""
    return Walker(workspace, cache=False).scan()
