"""Fresh inodes for protected files a hard link outside reaches (made by an earlier
session): a link must never write past the read-only bind."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import PurePosixPath

from launcher.trust import Place
from launcher.trust.snapshot import _DIR_FLAGS, MAX_DEPTH, MAX_ENTRIES, _open_dir


def _fresh_inode(parent: int, name: str, st: os.stat_result) -> None:
    """Give the file `name` a new inode (same bytes, mode, owner, time): a hard link made
    earlier then reaches only the old one."""
    tmp = f".subagent-unlinking-{secrets.token_hex(6)}"
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    src = os.open(name, flags, dir_fd=parent)
    try:
        if os.fstat(src).st_ino != st.st_ino:
            return  # changed under us: the next look sees it
        dst = os.open(
            tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600, dir_fd=parent
        )
        try:
            while chunk := os.read(src, 1 << 20):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(dst, view) :]
            if os.geteuid() == 0:
                os.fchown(dst, st.st_uid, st.st_gid)
            os.fchmod(dst, stat.S_IMODE(st.st_mode))
            os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(dst)
    finally:
        os.close(src)
    try:
        os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=parent)
        raise


def _unlink_hard_links(place: Place) -> None:
    """Every protected regular file linked elsewhere (`st_nlink` > 1) gets a fresh inode."""
    parts = PurePosixPath(place.rel).parts
    try:
        top = os.open(place.base, _DIR_FLAGS)
        try:
            parent = _open_dir(top, parts[:-1])
        finally:
            os.close(top)
    except OSError:
        return
    try:
        _relink(parent, parts[-1], 0, [0])
    finally:
        os.close(parent)


def _relink(parent: int, name: str, depth: int, seen: list[int]) -> None:
    seen[0] += 1
    if seen[0] > MAX_ENTRIES or depth > MAX_DEPTH:
        return
    with contextlib.suppress(OSError):
        st = os.lstat(name, dir_fd=parent)
        if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
            _fresh_inode(parent, name, st)
        elif stat.S_ISDIR(st.st_mode):
            fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
            try:
                for entry in os.listdir(fd):
                    _relink(fd, entry, depth + 1, seen)
            finally:
                os.close(fd)
