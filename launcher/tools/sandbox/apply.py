"""The one place a `SandboxPolicy` is enforced, and the one place that knows whether it can be.

Linux: where the thread may have a mount namespace (root), the world outside the writable
roots made read-only (privileges.py; not root: readonly.py's holder) and the protected places
inside them bound read-only (mounts.py); Landlock (files, TCP, signals, ptrace of anything
outside the sandbox) and a seccomp filter (no sockets without network; never root's ways past
Landlock; never the launcher's memory or threads) on the calling thread, after it dropped every
capability; every process that thread starts inherits all of it and can never shed it. macOS:
`sandbox-exec` with a generated profile (not tested here). Elsewhere: none.

`SUBAGENT_SANDBOX_MECHANISM=none` makes this machine look like one without a mechanism
(to try `sandbox: required` and the "unavailable" path); `auto` (the default) probes.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

from launcher import runtime, settings
from launcher.tools.sandbox.policy import SandboxPolicy

if TYPE_CHECKING:
    from launcher.tools.sandbox.pidns import Init

MECHANISM_VAR = settings.SANDBOX_MECHANISM.name
"""`none`: behave as if the OS offered no sandbox; `auto` (default): probe."""


def confine_current_thread(
    policy: SandboxPolicy, *, guard_launcher: bool = False, pid_namespace: bool = False
) -> Init | str | None:
    """Confine the calling thread and all it will start; irreversible. OSError if refused.

    Root first gets a read-only world outside the writable roots and the protected places
    bound read-only; every caller loses the capabilities its children could regain.
    `guard_launcher`: this thread is one of the launcher's, so signals to this process, its
    group and this thread are refused too. `pid_namespace` (root only): the processes this
    thread starts are born in a PID namespace of their own; its init is returned (or why
    there is none; None: not asked, or not root)."""
    from launcher.tools.sandbox.landlock import restrict_thread
    from launcher.tools.sandbox.mounts import protect_read_only
    from launcher.tools.sandbox.privileges import can_remount, drop_capabilities, read_only_outside
    from launcher.tools.sandbox.seccomp import filter_thread, protected_ids

    init: Init | str | None = None
    if can_remount():
        try:
            read_only_outside(policy.writable, policy.writable_files)
        except OSError as exc:  # the rest still holds: better than no confinement at all
            logging.getLogger(__name__).warning("sandbox: no read-only world (%s)", exc)
        if pid_namespace:  # needs CAP_SYS_ADMIN; started unconfined, out of the commands' reach
            from launcher.tools.sandbox.pidns import start_here

            init = start_here()
    # Before Landlock, which forbids mounting, and before the capabilities go.
    protect_read_only(policy.protected, policy.writable)
    drop_capabilities()
    restrict_thread(policy)
    protect: tuple[int, ...] = ()
    if guard_launcher:
        protect = protected_ids(os.getpid(), os.getpgid(0), (threading.get_native_id(),))
    filter_thread(policy.network, protect)
    return init


def mechanism_problem(env: Mapping[str, str] | None = None) -> str | None:
    """None when this machine can confine a command, else the reason (probed once)."""
    if settings.no_sandbox_mechanism(env):
        return f"{MECHANISM_VAR}=none"
    if sys.platform == "darwin":
        return None if os.path.exists(SANDBOX_EXEC) else f"{SANDBOX_EXEC} is missing"
    if not sys.platform.startswith("linux"):
        return f"no sandbox mechanism on {sys.platform}"
    probes = runtime.current().sandbox.probes
    if "linux" not in probes:
        probes["linux"] = _probe_linux()
    return probes["linux"]


def _probe_linux() -> str | None:
    from launcher.tools.sandbox.landlock import MIN_ABI, abi_version
    from launcher.tools.sandbox.seccomp import supported

    abi = abi_version()
    if abi < MIN_ABI:
        return (
            f"Landlock ABI {abi}, needs {MIN_ABI} (Linux 6.2+)"
            if abi
            else "Landlock is not enabled in this kernel, or a seccomp profile hides it"
        )
    arch = supported()
    if arch is not None:
        return arch
    # The real thing on a throwaway thread: a container may refuse prctl or the filter.
    failure: list[str] = []

    def attempt() -> None:
        try:
            confine_current_thread(SandboxPolicy(deny_read=(), writable=()))
        except OSError as exc:
            failure.append(str(exc))

    thread = threading.Thread(target=attempt, name="sandbox-probe", daemon=True)
    thread.start()
    thread.join()
    return failure[0] if failure else None


SANDBOX_EXEC = "/usr/bin/sandbox-exec"


def macos_profile(policy: SandboxPolicy) -> str:
    """A Seatbelt profile for `sandbox-exec -p`: reads but the deny list, writes in the roots."""

    def quoted(path: object) -> str:
        return '"' + str(path).replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    lines += [f"(allow file-write* (subpath {quoted(p)}))" for p in policy.writable]
    lines += [f"(allow file-write* (literal {quoted(p)}))" for p in policy.writable_files]
    lines += [f"(deny file-write* (subpath {quoted(p)}))" for p in policy.protected]
    lines += [f"(deny file-read* (subpath {quoted(p)}))" for p in policy.deny_read]
    if not policy.network:
        lines.append("(deny network*)")
    return "\n".join(lines)


def macos_argv(argv: list[str], policy: SandboxPolicy) -> list[str]:
    """`argv` under sandbox-exec with the policy's profile (macOS; not tested here)."""
    return [SANDBOX_EXEC, "-p", macos_profile(policy), *argv]
