"""Where the launcher's children find programs: PATH without empty or relative entries.

A child starts in the workspace, which the model writes. An empty PATH entry (what
`PATH="$PATH:"` leaves) or a relative one (`.`, `bin`) names a directory relative to the
child's working directory, so a bare command would run an executable the model left
there. Every PATH the launcher hands a child, and every bare name it looks up, uses only
the absolute entries.
"""

from __future__ import annotations

import os


def absolute_path(path: str | None, outside: str | os.PathLike[str] | None = None) -> str:
    """`path` (a PATH value; None: the default one) with only its absolute entries, and
    none in `outside` (the workspace: an activated `.venv/bin` or `node_modules/.bin` there
    holds what the model writes)."""
    entries = (os.defpath if path is None else path).split(os.pathsep)
    kept = [e for e in entries if os.path.isabs(e)]
    if outside is not None:
        here = os.path.realpath(outside)
        kept = [e for e in kept if not _within(os.path.realpath(e), here)]
    return os.pathsep.join(kept) or os.defpath


def with_absolute_path(
    env: dict[str, str], outside: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """`env` with its PATH (when it has one) cut down as `absolute_path` does, in place."""
    if "PATH" in env:
        env["PATH"] = absolute_path(env["PATH"], outside)
    return env


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
