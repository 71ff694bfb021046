"""The read-only world outside the writable roots for a launcher that is not root.

A root launcher's confined thread makes its own mount namespace (privileges.py). A thread
of a process with threads cannot make the user namespace an unprivileged one needs, so a
small holder process per session does: it maps only this user, makes every mount
read-only but the writable roots and files, binds the protected places inside them read-only
(mounts.py), and waits. The launcher keeps descriptors of its user and mount namespaces
(the shell may not open the holder's /proc entries), and the session's fork server
(entry.py) enters them by those, once, and starts every command from inside, in the
PID namespace the holder made (pidns.py): the session's end kills its init, and with it
every process a command left, before it puts anything back. A command
keeps this user's uid, with no capability: it cannot remount, and a user namespace it
makes gets these mounts locked read-only. The holder's death changes nothing: the
descriptors keep the namespaces.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import subprocess
import sys
from pathlib import Path

from launcher.procs import strays
from launcher.tools.sandbox.pidns import Init, pipes
from launcher.tools.sandbox.policy import SandboxPolicy

READY_LIMIT_S = 60.0
"""How long the holder may take to say `ready` (an interpreter start-up on a loaded box)."""
HOLDER = Path(__file__).with_name("privileges.py")


class Holder:
    """One session's user and mount namespaces, held by a process that waits on stdin."""

    def __init__(self, policy: SandboxPolicy) -> None:
        spec: dict[str, object] = {
            "writable": [str(p) for p in policy.writable],
            "writable_files": [str(p) for p in policy.writable_files],
            # The protected places inside the writable roots: read-only binds there too, so
            # a process that outlives its command cannot change them before the put-back.
            "protected": [str(p) for p in policy.protected],
        }
        theirs, ours = pipes()
        spec["ask"], spec["answer"] = theirs
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", str(HOLDER), json.dumps(spec)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
                pass_fds=theirs,
            )
        except BaseException:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        strays.note_child(self._process.pid)  # started on purpose: not an orphan to sweep
        assert self._process.stdout is not None
        self.fds: tuple[int, ...] = ()
        self._init: Init | None = None
        self._ours: tuple[int, int] | None = ours
        line = self._process.stdout.readline().decode(errors="replace").strip()
        word, _, said = line.partition(" ")
        if word != "ready":
            self.close()
            raise OSError(f"the read-only namespace could not be made: {line or 'no answer'}")
        answer = json.loads(said or "{}")
        self.init: int | None = answer.get("init")
        """The pid of the commands' PID namespace's init; None: there is none."""
        self.problem: str | None = answer.get("problem")
        """Why the commands have no PID namespace or no /proc of their own, else None."""
        self.pid = pid = self._process.pid
        self.fds = tuple(
            os.open(f"/proc/{pid}/ns/{name}", os.O_RDONLY | os.O_CLOEXEC)
            for name in ("user", "mnt")
        )
        if self.init is not None:
            try:  # the holder has not reaped it: the pid is still the init's
                pidfd = os.pidfd_open(self.init)
                self._init = Init(self.init, pidfd, *ours)
                self._ours = None
                space = os.open(f"/proc/{self.init}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
            except OSError as exc:
                self.close()
                raise OSError(f"the commands' PID namespace is gone: {exc}") from exc
            self.fds = (*self.fds, space)

    def ended(self, wait_s: float = 0.0) -> bool:
        """Whether the commands' PID namespace is gone, or goes within `wait_s` (its init
        died: the holder did, or someone killed it); no command can start in it any more."""
        if self._init is None:
            return False
        readable, _, _ = select.select([self._init.pidfd], [], [], wait_s)
        return bool(readable)

    @property
    def commands_init(self) -> Init | None:
        """The init of the commands' PID namespace (None: there is none): `sweep` after a
        command, `end` at the session's end."""
        return self._init

    def close(self) -> None:
        """End the holder; the namespaces end with the last command in them."""
        for fd in self.fds:
            os.close(fd)
        self.fds = ()
        if self._init is not None:
            self._init.close()
            self._init = None
        if self._ours is not None:
            for fd in self._ours:
                os.close(fd)
            self._ours = None
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


def holder_for(policy: SandboxPolicy) -> tuple[Holder | None, str | None]:
    """Not root: a holder of the read-only world, where user namespaces allow one; else
    None, and why when one was wanted (the mode, times and attributes of this user's files
    outside the roots then stay changeable: docs/security.md says so)."""
    from launcher.tools.sandbox.privileges import can_remount

    if can_remount():
        return None, None
    try:
        return Holder(policy), None
    except OSError as exc:
        # A leftover process of the user can hold every user namespace it may have: a
        # model can bring this about, so it is never silent.
        return None, f"no read-only namespace ({exc})"


def degraded_line(problem: str) -> str:
    """What a run says, once, when its commands get Landlock and seccomp alone."""
    return (
        f"{problem}: commands may change the mode and times of this user's files outside "
        "the workspace, see every process, and a process a command leaves may outlive "
        "the session"
    )
