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
        kept = [e for e in kept if not any(_within(v, here) for v in path_visits(e))]
    return os.pathsep.join(kept) or os.defpath


def path_visits(path: str, hops: int = 40) -> list[str]:
    """Every path the kernel goes through resolving `path`: as written, after each symbolic
    link, and resolved. An entry is judged by all of them: a link in the workspace that the
    model points elsewhere (a `/dev/shm` directory it writes) still names the workspace."""
    seen = [os.path.normpath(path)]
    for _ in range(hops):
        current = seen[-1]
        parts = current.split(os.sep)
        for at in range(2, len(parts) + 1):
            prefix = os.sep.join(parts[:at]) or os.sep
            if os.path.islink(prefix):
                target = os.path.join(os.path.dirname(prefix), os.readlink(prefix))
                seen.append(os.path.normpath(os.path.join(target, *parts[at:])))
                break
        else:
            break
    return [*seen, os.path.realpath(path)]


def with_absolute_path(
    env: dict[str, str], outside: str | os.PathLike[str] | None = None
) -> dict[str, str]:
    """`env` with its PATH (when it has one) cut down as `absolute_path` does, in place."""
    if "PATH" in env:
        env["PATH"] = absolute_path(env["PATH"], outside)
    return env


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)
