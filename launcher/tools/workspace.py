"""Path confinement: every file tool resolves model-given paths through a Workspace."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePath

from launcher.errors import ToolError
from launcher.secret_files import is_secret_file
from launcher.trust import Protected

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How each directory on the way to a file is opened: never through a symlink."""


def open_beneath(
    base: Path, rel: PurePath, flags: int, mode: int = 0o644, *, make_parents: bool = False
) -> int:
    """Open `base`/`rel` by walking `rel` from a `base` directory fd, never following a link.

    Every component is opened relative to its parent's fd with O_NOFOLLOW, so a directory
    swapped for a symlink between a check and the open is refused (ELOOP/ENOTDIR), not
    followed. `make_parents` creates missing directories the same way (mkdir at a dir fd).
    """
    parts = [part for part in rel.parts if part not in ("", ".")]
    if any(part == ".." or "/" in part for part in parts):
        raise ToolError(f"path '{rel}' is not a plain relative path; refused")
    fd = os.open(base, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            fd = _step(fd, part, rel, make_parents)
        if not parts:
            return os.dup(fd) if flags & os.O_DIRECTORY else os.open(base, flags | os.O_CLOEXEC)
        try:
            return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
        except OSError as exc:
            _refuse_if_link(exc, fd, parts[-1], rel)
            raise
    finally:
        os.close(fd)


def _step(parent: int, part: str, rel: PurePath, make: bool) -> int:
    """The fd of directory `part` under `parent` (closed here), refusing symlinks."""
    try:
        try:
            child = os.open(part, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError:
            if not make:
                raise
            try:
                os.mkdir(part, 0o777, dir_fd=parent)
            except FileExistsError:
                pass  # made concurrently: the open below still refuses a symlink
            child = os.open(part, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            _refuse_if_link(exc, parent, part, rel)
            raise
    finally:
        os.close(parent)
    return child


def _refuse_if_link(exc: OSError, parent: int, part: str, rel: PurePath) -> None:
    """Turn an open that met a symlink into a refusal naming it (the path changed under us)."""
    if exc.errno not in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return
    try:
        is_link = stat.S_ISLNK(os.lstat(part, dir_fd=parent).st_mode)
    except OSError:
        return
    if is_link:
        raise ToolError(
            f"'{part}' in path '{rel}' became a symlink while it was being opened "
            "(the path changed under the tool); refused"
        ) from exc


def refuse_hard_links(fd: int, shown: str) -> os.stat_result:
    """The fd's stat; a regular file with more than one link is refused.

    A second name for a file cannot be told apart from a file outside the workspace that
    was hard-linked in (the link count does not say where the other names are), so file
    tools neither read nor change such files.
    """
    st = os.fstat(fd)
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise ToolError(
            f"'{shown}' has {st.st_nlink} hard links; another name for it may lie outside "
            "the workspace, so file tools refuse it"
        )
    return st


class Workspace:
    """The directory file tools may touch; paths resolve inside it or are refused."""

    def __init__(self, root: Path, protected: Protected | None = None) -> None:
        # The root's own symlinks (e.g. /tmp on macOS) are resolved once so that
        # every containment check compares real paths with real paths.
        self.root = Path(os.path.realpath(root))
        self.protected = protected
        """Places the write tools refuse (launcher/trust); None: none."""

    def refuse_protected(self, path: str, real: Path) -> None:
        """ToolError when `path` (resolved to `real`) is a protected place or under one."""
        if self.protected is None:
            return
        given = Path(path)
        lexical = Path(os.path.normpath(given if given.is_absolute() else self.root / given))
        why = self.protected.refusal(real, lexical)
        if why is not None:
            raise ToolError(why)

    def resolve(self, path: str) -> Path:
        """Return the real path for `path` (relative to the root), refusing escapes.

        Symlinks are followed, dangling ones too, so the check applies to the final
        target; for a path that does not exist yet it applies to its nearest real parent.
        """
        if not path:
            raise ToolError("path is empty")
        if "\x00" in path:
            raise ToolError("path contains a NUL byte")
        given = Path(path)
        candidate = given if given.is_absolute() else self.root / given
        real = Path(os.path.realpath(candidate))
        if real.is_relative_to(self.root):
            return real
        lexical = Path(os.path.normpath(candidate))
        if lexical.is_relative_to(self.root):
            raise ToolError(
                f"path '{path}' resolves through a symlink to {real}, outside the workspace "
                f"{self.root}; refused"
            )
        raise ToolError(f"path '{path}' is outside the workspace {self.root}; refused")

    def contains(self, path: Path) -> bool:
        """True when `path`, with symlinks followed, lies inside the workspace (and is not
        a secret file: a walk skips those)."""
        real = Path(os.path.realpath(path))
        return real.is_relative_to(self.root) and not is_secret_file(real, self.root)

    def open(self, real: Path, flags: int, mode: int = 0o644, *, make_parents: bool = False) -> int:
        """Open a path from `resolve` without following any link on the way (see open_beneath);
        a secret file (serve's token file) is refused."""
        if is_secret_file(real, self.root):
            raise ToolError(f"'{self.display(real)}' is a secret file of this launcher; refused")
        return open_beneath(
            self.root, real.relative_to(self.root), flags, mode, make_parents=make_parents
        )

    def display(self, real: Path) -> str:
        """The workspace-relative form of a resolved path, as the model should see it."""
        rel = real.relative_to(self.root).as_posix()
        return rel if rel else "."
