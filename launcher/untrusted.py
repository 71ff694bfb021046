"""Reading files a model could have written, from the unconfined launcher: no link, FIFO,
device or huge file is ever followed, waited on or read whole.

Every path is walked from a directory the launcher trusts, one component at a time, with
O_NOFOLLOW (a link anywhere is refused, never followed) and O_NONBLOCK (a FIFO cannot hold
an open); only a regular file is read, and never more than a cap.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
CHUNK = 1 << 20


class RefusedFile(OSError):
    """A file the launcher will not read: a link, not a regular file, or over its cap."""


class OverBudget(RefusedFile):
    """More bytes than the caller allowed for a whole copy."""


def _parts(relative: str) -> list[str]:
    parts = relative.split("/")
    if not relative or any(p in ("", ".", "..") for p in parts):
        raise RefusedFile(f"{relative!r}: not a plain relative path")
    return parts


@contextlib.contextmanager
def open_dir(root: Path, relative: str = "") -> Iterator[int]:
    """A descriptor of directory `root/relative` (`root` trusted, `relative` walked with
    no link followed); closed after. RefusedFile for a link or a non-directory on the way,
    FileNotFoundError for a missing part."""
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)]
    try:
        for part in _parts(relative) if relative else []:
            try:
                fds.append(os.open(part, OPEN_FLAGS | os.O_DIRECTORY, dir_fd=fds[-1]))
            except FileNotFoundError:
                raise
            except OSError as exc:
                raise RefusedFile(f"{root / relative}: not a directory of its own ({exc})") from exc
        yield fds[-1]
    finally:
        for fd in fds:
            os.close(fd)


@contextlib.contextmanager
def _open_regular(dir_fd: int, name: str, shown: Path) -> Iterator[tuple[int, int]]:
    """(descriptor, size) of regular file `name` in `dir_fd`; RefusedFile otherwise."""
    before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if not stat.S_ISREG(before.st_mode):  # checked before opening: a device is never opened
        raise RefusedFile(f"{shown}: not a regular file")
    fd = os.open(name, OPEN_FLAGS, dir_fd=dir_fd)
    try:
        after = os.fstat(fd)
        if not stat.S_ISREG(after.st_mode) or after.st_ino != before.st_ino:
            raise RefusedFile(f"{shown}: changed while it was opened")
        yield fd, after.st_size
    finally:
        os.close(fd)


def _read(fd: int, cap: int, shown: Path) -> bytes:
    data = bytearray()
    while chunk := os.read(fd, min(CHUNK, cap + 1 - len(data))):
        data += chunk
        if len(data) > cap:
            raise RefusedFile(f"{shown}: larger than {cap} bytes")
    return bytes(data)


def read_capped(root: Path, relative: str, cap: int) -> bytes:
    """The content of regular file `root/relative`, walked with no link followed; RefusedFile
    if anything on the way is a link, it is not a regular file, or it is over `cap` bytes;
    FileNotFoundError if it is not there."""
    *dirs, name = _parts(relative)
    shown = root / relative
    with open_dir(root, "/".join(dirs)) as dir_fd, _open_regular(dir_fd, name, shown) as (fd, _):
        return _read(fd, cap, shown)


def copy_matching(dir_fd: int, names: re.Pattern[str], target: Path, budget: list[int]) -> None:
    """Copy each regular file of `dir_fd` whose whole name matches `names` into `target`
    (made if needed); a link, FIFO or device there is skipped. `budget[0]` is how many
    bytes may still be copied: OverBudget once a file would go over it."""
    with os.scandir(dir_fd) as entries:
        chosen = [e.name for e in entries if names.fullmatch(e.name)]
    for name in chosen:
        shown = target / name
        try:
            with _open_regular(dir_fd, name, shown) as (fd, size):
                if size > budget[0]:
                    raise OverBudget(f"the run's objects are over the copy limit at {name}")
                target.mkdir(parents=True, exist_ok=True)
                with open(shown, "xb") as out:
                    while chunk := os.read(fd, CHUNK):
                        budget[0] -= len(chunk)
                        if budget[0] < 0:
                            raise OverBudget(f"the run's objects are over the copy limit at {name}")
                        out.write(chunk)
        except OverBudget:
            raise
        except (FileNotFoundError, RefusedFile):
            continue  # not an object of the run's: it is not copied
