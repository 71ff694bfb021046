"""A per-session cgroup v2, where the machine lets us make one: `cgroup.kill` ends every
process ever started in it, even one that left its process group with setsid().

Children join it before they run a line of their own: they are started through
`sh -c 'echo $$ > cgroup.procs; exec "$@"'`, which keeps their pid and costs no Python start.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Sequence
from pathlib import Path

from launcher import settings

SHELL = "/bin/sh"
JOIN_SCRIPT = 'echo $$ >"$0" 2>/dev/null; exec "$@"'
"""Join the cgroup named by $0, then become the real command (same pid, same pipes)."""
KILL_WAIT_S = 2.0
"""After `cgroup.kill`, how long to wait for the cgroup to empty before removing it."""
POLL_S = 0.02
OFF_ENV = settings.CGROUP.name
"""`SUBAGENT_CGROUP=off` skips the cgroup (the subreaper path is then the only sweep)."""


def _own_cgroup_dir() -> Path | None:
    """This process's cgroup v2 directory, or None without a (mounted) unified hierarchy."""
    try:
        mounts = Path("/proc/self/mounts").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    mount = next(
        (m.split()[1] for m in mounts if len(m.split()) > 2 and m.split()[2] == "cgroup2"), None
    )
    path = next((line[3:] for line in own if line.startswith("0::")), None)
    if mount is None or path is None:
        return None
    return Path(mount) / path.lstrip("/")


def create_session_cgroup(tag: str) -> Path | None:
    """Make an empty child cgroup for one session; None where cgroup v2 is absent,
    read-only, or too old for `cgroup.kill` (the caller falls back to the subreaper)."""
    if settings.cgroup_off() or not os.path.exists(SHELL):
        return None
    base = _own_cgroup_dir()
    if base is None:
        return None
    path = base / f"subagent-{os.getpid()}-{tag}"
    try:
        path.mkdir()
    except OSError:
        return None
    if not (path / "cgroup.kill").exists():
        with contextlib.suppress(OSError):
            path.rmdir()
        return None
    return path


def join_argv(cgroup: Path, argv: Sequence[str]) -> list[str]:
    """`argv`, started so that it joins `cgroup` before it runs."""
    return [SHELL, "-c", JOIN_SCRIPT, str(cgroup / "cgroup.procs"), *argv]


def _populated(cgroup: Path) -> bool:
    try:
        events = (cgroup / "cgroup.events").read_text()
    except OSError:
        return False
    return "populated 1" in events


def kill_cgroup(cgroup: Path, wait_s: float = KILL_WAIT_S) -> None:
    """SIGKILL every process in `cgroup`, wait (bounded) for it to empty, remove it."""
    with contextlib.suppress(OSError):
        (cgroup / "cgroup.kill").write_text("1")
    deadline = time.monotonic() + wait_s
    while _populated(cgroup) and time.monotonic() < deadline:
        time.sleep(POLL_S)
    with contextlib.suppress(OSError):
        cgroup.rmdir()
