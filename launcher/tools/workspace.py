"""Path confinement: every file tool resolves model-given paths through a Workspace."""

from __future__ import annotations

import os
from pathlib import Path

from launcher.errors import ToolError


class Workspace:
    """The directory file tools may touch; paths resolve inside it or are refused."""

    def __init__(self, root: Path) -> None:
        # The root's own symlinks (e.g. /tmp on macOS) are resolved once so that
        # every containment check compares real paths with real paths.
        self.root = Path(os.path.realpath(root))

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
        """True when `path`, with symlinks followed, lies inside the workspace."""
        return Path(os.path.realpath(path)).is_relative_to(self.root)

    def display(self, real: Path) -> str:
        """The workspace-relative form of a resolved path, as the model should see it."""
        rel = real.relative_to(self.root).as_posix()
        return rel if rel else "."
