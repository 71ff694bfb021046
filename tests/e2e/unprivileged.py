"""Running the real CLI as an unprivileged user (uid 65534), as most users run it: no
writable cgroup, so the subreaper and the watchdog are the only sweep.

As root (here and in CI) the launcher runs through `setpriv` as 65534 with no groups. When
that user cannot reach the interpreter (a checkout under a 0700 /root), it keeps one
ambient capability, CAP_DAC_READ_SEARCH, to read files: it can still write no cgroup and
signal no other user's process, which is what these tests are about.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NOBODY = 65534
READ_CAP = ["--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]
PROBE_LIMIT_S = 60.0


def _setpriv(extra: list[str]) -> list[str]:
    base = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return ["setpriv", *base, *extra, "--"]


@functools.cache
def user_prefix() -> tuple[list[str], str | None]:
    """(argv prefix that drops to the unprivileged user, why that is impossible or None)."""
    if os.geteuid() != 0:
        return [], None  # already unprivileged
    if shutil.which("setpriv") is None:
        return [], "setpriv (util-linux) is missing: cannot drop to an unprivileged user"
    # Through a shell: setpriv itself may reach a path its children cannot exec.
    probe = ["/bin/sh", "-c", f"exec {shlex.quote(sys.executable)} -c 'import launcher, mcp'"]
    for extra in ([], READ_CAP):
        done = subprocess.run(
            [*_setpriv(extra), *probe],
            capture_output=True,
            timeout=PROBE_LIMIT_S,
            cwd=Path(__file__).parents[2],
        )
        if done.returncode == 0:
            return _setpriv(extra), None
    return [], f"uid {NOBODY} cannot run {sys.executable}: {done.stderr.decode()[-300:]}"


def shared_dir() -> Path:
    """A fresh directory the unprivileged user owns (pytest's tmp_path is root's, 0700)."""
    path = Path(tempfile.mkdtemp(prefix="subagent-unpriv-"))
    path.chmod(0o755)
    if os.geteuid() == 0:
        os.chown(path, NOBODY, NOBODY)
    return path


def user_can(argv: list[str]) -> bool:
    """Whether the unprivileged user can run `argv` successfully (a feature probe)."""
    prefix, _ = user_prefix()
    try:
        done = subprocess.run([*prefix, *argv], capture_output=True, timeout=PROBE_LIMIT_S, cwd="/")
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0
