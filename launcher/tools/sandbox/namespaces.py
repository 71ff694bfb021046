"""`SUBAGENT_BASH_SANDBOX=1`: namespaces on top of the confinement, as that switch always gave.

Each command runs under `unshare` — its own user, PID, mount and network namespaces, so
the launcher, its servers and every other process are invisible (their /proc/PID/environ
included) — and there the standalone helper confines it to the session's policy, then
execs it. Dearer per command (a Python start-up) than the confined thread: it is opt-in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from launcher import runtime
from launcher.procs import cgroup
from launcher.tools.sandbox.policy import SandboxPolicy

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
HELPER = Path(__file__).with_name("helper.py")


def namespaces_problem() -> str | None:
    """None when `unshare` can make the namespaces here, else why not (probed once)."""
    probes = runtime.current().sandbox.probes
    if "namespaces" not in probes:
        probes["namespaces"] = _check()
    return probes["namespaces"]


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


def wrap(argv: list[str], policy: SandboxPolicy) -> list[str]:
    """`argv` under unshare and the helper; a cgroup join stays first (it needs the host)."""
    join: list[str] = []
    if argv[:3] == [cgroup.SHELL, "-c", cgroup.JOIN_SCRIPT]:
        join, argv = argv[:4], argv[4:]
    if join:
        policy = policy.with_writable_file(Path(join[3]))
    helper = [sys.executable, "-I", "-S", str(HELPER), json.dumps(policy.to_json()), "--"]
    return [*join, "unshare", *UNSHARE_FLAGS, *helper, *argv]
