"""Where the launcher's children find programs: PATH without empty or relative entries.

A child starts in the workspace, which the model writes. An empty PATH entry (what
`PATH="$PATH:"` leaves) or a relative one (`.`, `bin`) names a directory relative to the
child's working directory, so a bare command would run an executable the model left
there. Every PATH the launcher hands a child, and every bare name it looks up, uses only
the absolute entries.
"""

from __future__ import annotations

import os


def absolute_path(path: str | None) -> str:
    """`path` (a PATH value; None: the default one) with only its absolute entries."""
    entries = (os.defpath if path is None else path).split(os.pathsep)
    return os.pathsep.join(e for e in entries if os.path.isabs(e)) or os.defpath


def with_absolute_path(env: dict[str, str]) -> dict[str, str]:
    """`env` with its PATH (when it has one) cut down to the absolute entries, in place."""
    if "PATH" in env:
        env["PATH"] = absolute_path(env["PATH"])
    return env
