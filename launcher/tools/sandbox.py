"""Optional confinement of the bash tool: a new user, PID, mount and network namespace.

`SUBAGENT_BASH_SANDBOX=1` runs every command under `unshare`: the command gets its own
/proc (the launcher, its servers and every other process are invisible, so no
environment or memory of theirs can be read) and no network. The filesystem is not
confined. Where the OS cannot do it, the call fails with an error saying so: a sandbox
asked for is never silently dropped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping

SANDBOX_VAR = "SUBAGENT_BASH_SANDBOX"
"""`1` (or `true`, `yes`) confines the bash tool; anything else leaves it unconfined."""
UNSHARE_FLAGS = (
    "--user",
    "--map-root-user",
    "--pid",
    "--fork",
    "--kill-child",
    "--mount-proc",
    "--net",
)
PROBE_TIMEOUT_S = 10.0
"""A probe of `unshare` that takes longer than this counts as unavailable."""

_probe: str | bool | None = False  # False: not probed yet; None: works; str: why not


def sandbox_requested(env: Mapping[str, str] | None = None) -> bool:
    """Whether the bash tool is to run confined."""
    env = os.environ if env is None else env
    return env.get(SANDBOX_VAR, "").strip().lower() in ("1", "true", "yes")


def sandbox_problem() -> str | None:
    """None when `unshare` can confine a command here, else why not (probed once)."""
    global _probe
    if _probe is False:
        _probe = _check()
    return _probe if isinstance(_probe, str) else None


def _check() -> str | None:
    unshare = shutil.which("unshare")
    if unshare is None:
        return "the `unshare` command (util-linux) is not installed"
    try:
        proc = subprocess.run(
            [unshare, *UNSHARE_FLAGS, "true"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"`unshare` could not run: {exc}"
    if proc.returncode != 0:
        detail = proc.stderr.strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        return f"`unshare` failed ({detail[0]}); user namespaces may be disabled"
    return None


def sandboxed(argv: list[str]) -> list[str]:
    """`argv` run under unshare in fresh namespaces."""
    return ["unshare", *UNSHARE_FLAGS, *argv]


def unavailable_message(problem: str) -> str:
    """The tool result for a sandbox asked for but not available."""
    return (
        f"bash sandbox unavailable: {problem}. {SANDBOX_VAR}=1 asks for it; the command "
        f"was not run. Unset {SANDBOX_VAR} to run bash unconfined."
    )
