"""Writing `init`'s files: all or nothing, and never through a symlink.

A planted `.subagent` or `.github` link would have init write outside the project while
saying `wrote .subagent/...`: any link among the paths is refused up front (exit 2 naming
each), and the writes walk directory descriptors opened without following links, so a
link swapped in meanwhile fails the write instead. A failed write removes what this run
created (files and folders, never what was there), so a re-run starts from where it was.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterable
from pathlib import Path

from launcher.cli.init_files import Planned
from launcher.errors import UsageError

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
NOT_THROUGH_LINKS = "init never writes through a symlink (remove it first)"


def refuse_symlinks(root: Path, paths: Iterable[Path]) -> None:
    """UsageError naming every symlink at or above a path (up to `root`, which is the user's)."""
    found: list[Path] = []
    for path in paths:
        rel = path.relative_to(root)
        for depth in range(1, len(rel.parts) + 1):
            probe = root.joinpath(*rel.parts[:depth])
            if probe.is_symlink() and probe not in found:
                found.append(probe)
    if found:
        named = "; ".join(f"{p} is a symlink" for p in found)
        raise UsageError(f"{named}: {NOT_THROUGH_LINKS}")


def write_all(root: Path, planned: list[Planned]) -> None:
    """Create every planned file (never overwriting, never through a link); on any failure
    remove what this call created and raise UsageError naming the path that failed."""
    made_root = not root.exists()
    created: list[tuple[int, str, bool]] = []  # (parent fd, name, is a folder), in order
    opened: list[int] = []
    current = root
    try:
        root.mkdir(parents=True, exist_ok=True)
        root_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        opened.append(root_fd)
        for item in planned:
            parent_fd, current = root_fd, root
            *folders, name = item.path.relative_to(root).parts
            for folder in folders:
                current = current / folder
                with contextlib.suppress(FileExistsError):
                    os.mkdir(folder, dir_fd=parent_fd)
                    created.append((parent_fd, folder, True))
                parent_fd = os.open(folder, _DIR_FLAGS, dir_fd=parent_fd)
                opened.append(parent_fd)
            current = item.path
            fd = os.open(name, _NEW_FILE_FLAGS, 0o666, dir_fd=parent_fd)
            created.append((parent_fd, name, False))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(item.text)
    except OSError as exc:
        _undo(created)
        if made_root:
            with contextlib.suppress(OSError):
                root.rmdir()
        # O_NOFOLLOW refuses a link as ELOOP, or as ENOTDIR together with O_DIRECTORY.
        if exc.errno == errno.ELOOP or current.is_symlink():
            raise UsageError(f"{current} is a symlink: {NOT_THROUGH_LINKS}") from exc
        if isinstance(exc, FileExistsError):
            why = "already exists; init never overwrites (remove it first)"
        else:
            why = f"cannot write it: {exc.strerror or exc}"
        raise UsageError(f"{current} {why}; nothing was written") from exc
    finally:
        for fd in opened:
            os.close(fd)


def _undo(created: list[tuple[int, str, bool]]) -> None:
    """Remove what a failed write created, newest first (a folder once it is empty)."""
    for parent_fd, name, is_dir in reversed(created):
        with contextlib.suppress(OSError):
            if is_dir:
                os.rmdir(name, dir_fd=parent_fd)
            else:
                os.unlink(name, dir_fd=parent_fd)
