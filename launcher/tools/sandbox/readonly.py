"""The read-only world outside the writable roots for a launcher that is not root.

A root launcher's confined thread makes its own mount namespace (privileges.py). A thread
of a process with threads cannot make the user namespace an unprivileged one needs, so a
small holder process per session does: it maps only this user, makes every mount
read-only but the writable roots and files, and waits. Each command then starts as
`nsenter` into the holder's user and mount namespaces (by descriptors passed to it: the
shell may not open the holder's /proc entries) and only then runs the command, in its
working directory resolved there. The command keeps this user's uid, with no capability:
it cannot remount, and a user namespace it makes gets these mounts locked read-only.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from launcher.procs import cgroup, strays
from launcher.tools.sandbox.policy import SandboxPolicy

READY_LIMIT_S = 60.0
"""How long the holder may take to say `ready` (an interpreter start-up on a loaded box)."""
HOLDER = Path(__file__).with_name("privileges.py")
SYSTEM_PATH = "/usr/bin:/bin:/usr/sbin:/sbin"

_nsenter: list[str | None] = []


def nsenter() -> str | None:
    """The `nsenter` that can resolve a working directory inside the namespace (util-linux
    2.38+: `--wdns`), or None."""
    if not _nsenter:
        # The system's, never one on a PATH the model's workspace may be part of.
        found = shutil.which("nsenter", path=SYSTEM_PATH)
        if found is not None:
            try:
                usage = subprocess.run(
                    [found, "--help"], capture_output=True, text=True, timeout=READY_LIMIT_S
                ).stdout
            except (OSError, subprocess.TimeoutExpired):
                usage = ""
            found = found if "--wdns" in usage else None
        _nsenter.append(found)
    return _nsenter[0]


class Holder:
    """One session's user and mount namespaces, held by a process that waits on stdin."""

    def __init__(self, policy: SandboxPolicy, tool: str) -> None:
        spec = {
            "writable": [str(p) for p in policy.writable],
            "writable_files": [str(p) for p in policy.writable_files],
        }
        self._tool = tool
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-S", str(HOLDER), json.dumps(spec)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
        )
        strays.note_child(self._process.pid)  # started on purpose: not an orphan to sweep
        assert self._process.stdout is not None
        self.fds: tuple[int, ...] = ()
        line = self._process.stdout.readline().decode(errors="replace").strip()
        if line != "ready":
            self.close()
            raise OSError(f"the read-only namespace could not be made: {line or 'no answer'}")
        pid = self._process.pid
        self.fds = tuple(
            os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
            for name in ("user", "mnt")
        )

    def wrap(self, argv: list[str], cwd: str) -> list[str]:
        """`argv` entered into the namespaces (after a cgroup join, which needs the host's
        mounts); pass `self.fds` to it."""
        join: list[str] = []
        if argv[:3] == [cgroup.SHELL, "-c", cgroup.JOIN_SCRIPT]:
            join, argv = argv[:4], argv[4:]
        user, mnt = self.fds
        enter = [
            self._tool,
            f"--user=/proc/self/fd/{user}",
            f"--mount=/proc/self/fd/{mnt}",
            "--preserve-credentials",
            f"--wdns={cwd}",
            "--",
        ]
        return [*join, *enter, *argv]

    def close(self) -> None:
        """End the holder; the namespaces end with the last command in them."""
        for fd in self.fds:
            os.close(fd)
        self.fds = ()
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=READY_LIMIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            with contextlib.suppress(ChildProcessError):
                self._process.wait()
        except ChildProcessError:
            pass  # reaped elsewhere: gone either way
        if self._process.stdout is not None:
            self._process.stdout.close()
