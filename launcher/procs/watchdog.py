"""One watchdog process per session: kills every server group if the launcher dies.

The launcher may die by SIGKILL, where no cleanup code runs. The watchdog is a tiny
stdlib process that reads `+PGID` / `-PGID` lines on stdin; when stdin reaches EOF
(the launcher is gone, however it died) or its parent-death signal arrives, it
SIGKILLs every group it still holds. Run as `python -m launcher.procs.watchdog`.

A grandchild that calls setsid() leaves its group. Where cgroup v2 allows it, every child
starts inside the session's cgroup (`=PATH` line) and `cgroup.kill` ends it with the rest.
Elsewhere on Linux the launcher becomes a child subreaper, so an escaped process stays
its descendant: the launcher ends those itself when its last session ends (strays.py), and
the watchdog (`^PID` line: the launcher) keeps a record of all its descendants, polled, to
kill them if the launcher dies first. A launcher that closes cleanly says so (`.` line):
then the watchdog ends only what it still guards, never another session's processes.
A `~PATH` line names the session's private temporary directory (the sandbox's `$TMPDIR`):
a launcher that died never removed it, so the watchdog does. A `%PATH` line names the
record of the workspace's protected places (launcher/trust): a launcher killed mid-command
never put back what that command changed, so the watchdog has it done, after it has ended
the launcher's processes (nothing writes behind it), when no other launcher shares it.
A `!PID` line names the init of the PID namespace an unprivileged launcher's commands run
in: if the launcher died, the watchdog kills it and waits (bounded) until the kernel has
ended every process in there, before that put-back (the namespace also dies with the
holder, but not in step with the watchdog).
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

from launcher.procs import cgroup as cgroups
from launcher.procs import descendants, strays
from launcher.procs.pyenv import interpreter_env
from launcher.secrets import public_environment

PDEATHSIG_TERM = signal.SIGTERM
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
READ_CHUNK = 4096
SCAN_S = 0.1
"""Without a cgroup, how often the watchdog records the launcher's descendants."""
CLEAN = "."
"""The launcher's last line when it closes cleanly (it swept its orphans itself)."""
GUARD_DIR = "guard"
"""The only parent a `%PATH` line's record directory may have (under the state home)."""
REVIVE_LIMIT_S = 120.0
"""How long putting the protected places back may take."""
NAMESPACE_END_S = 60.0
"""How long a PID namespace's processes may take to die once its init is killed."""
TMP_PREFIX = "subagent-tmp-"
"""The only directories a `~PATH` line may name (tempfile.mkdtemp's prefix in the sandbox)."""


class Watchdog:
    """Launcher side: starts the watchdog lazily and tells it which groups to guard."""

    def __init__(self, python: str | None = None, workspace: str | Path | None = None) -> None:
        """`python`: the interpreter to run it with (this one's by default); `workspace`:
        where the model writes (its code path never reaches there)."""
        self._python = python or sys.executable
        self._workspace = () if workspace is None else (workspace,)
        self._problem: str | None = None  # why it could not start
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._cgroup: Path | None = None
        self._swept = False  # the sweep (cgroup or subreaper) is set up
        self._subreaped = False  # counted among the sessions strays.sweep() waits for

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    # -P: a `launcher/` or other package in the cwd must not shadow ours.
                    [self._python, "-P", "-m", "launcher.procs.watchdog"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                    # Its environment block is readable by the model's shell: no secrets;
                    # nor a path to code the model wrote (it and `revive` start here).
                    env=interpreter_env(public_environment(), os.getcwd(), also=self._workspace),
                    # Outside the launcher's group: a group-wide SIGKILL or SIGHUP (CI job
                    # cancel, closed terminal) must not take the backstop down with it.
                    start_new_session=True,
                )
            except OSError as exc:
                # Servers still die of stdin EOF; sandboxed commands are refused (`problem`).
                self._problem = f"cannot start {self._python} ({exc.strerror or exc})"
                return None
            strays.note_child(self._proc.pid)
        return self._proc

    def problem(self) -> str | None:
        """Why the watchdog is not running (it could not start, or it exited), else None.
        Without it a launcher killed mid-command leaves the model's changes to protected
        places, the private $TMPDIR and the command's processes behind."""
        with self._lock:
            proc = self._ensure()
            if proc is None:
                return self._problem
            code = proc.poll()
            return None if code is None else f"it exited with status {code}"

    def _send(self, line: str) -> None:
        with self._lock:
            proc = self._ensure()
            if proc is None or proc.stdin is None:
                return
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()

    def join_argv(self, argv: list[str]) -> list[str]:
        """`argv` as it must be started to stay in this session's sweep (the cgroup)."""
        with self._lock:
            if not self._swept:
                self._swept = True
                self._cgroup = cgroups.create_session_cgroup(f"{id(self):x}")
                if self._cgroup is None:
                    _become_subreaper()
                    self._subreaped = True
                    strays.session_opened()
                proc = self._ensure()
                line = f"={self._cgroup}" if self._cgroup else f"^{os.getpid()}"
                if proc is not None and proc.stdin is not None:
                    with contextlib.suppress(OSError, ValueError):
                        proc.stdin.write(line.encode() + b"\n")
                        proc.stdin.flush()
        return argv if self._cgroup is None else cgroups.join_argv(self._cgroup, argv)

    def guard(self, pgid: int) -> None:
        """Kill this group if the launcher dies."""
        self._send(f"+{pgid}")

    def release(self, pgid: int) -> None:
        """The group was ended cleanly; stop guarding it."""
        self._send(f"-{pgid}")

    def remove_on_death(self, path: Path) -> None:
        """Remove the private temporary directory `path` if the launcher dies."""
        self._send(f"~{path}")

    def restore_on_death(self, record: Path) -> None:
        """Put back the protected places of `record` if the launcher dies (see trust)."""
        self._send(f"%{record}")

    def end_on_death(self, init: int) -> None:
        """Kill the PID namespace whose init is `init` if the launcher dies, and wait until
        it is empty before putting anything back."""
        self._send(f"!{init}")

    def close(self) -> None:
        """End the watchdog; it kills whatever it still guards, then exits."""
        with self._lock:
            proc, self._proc = self._proc, None
            cgroup, self._cgroup = self._cgroup, None
            subreaped, self._subreaped = self._subreaped, False
            self._swept = False
        if subreaped and strays.session_closed():
            strays.sweep()  # the last session of this process: every adopted orphan
        if proc is not None:
            with contextlib.suppress(OSError, ValueError):
                if proc.stdin is not None:
                    proc.stdin.write(CLEAN.encode() + b"\n")
                    proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2.0 + cgroups.KILL_WAIT_S)
        if cgroup is not None:
            cgroups.kill_cgroup(cgroup)  # the watchdog did it, unless it never started


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(PDEATHSIG_TERM), 0, 0, 0)


def _become_subreaper() -> None:
    """Orphans of our descendants re-parent to this process, not init (Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _revive(folder: Path) -> None:
    """Have the protected places of the record in `folder` put back (a process of its own:
    the watchdog stays stdlib and small)."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            [sys.executable, "-P", "-m", "launcher.trust.revive", str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=REVIVE_LIMIT_S,
            check=False,
        )


def _remove_tmp(tmp: Path) -> None:
    """Remove the private temporary directory, a `chmod 000` one the model left in it too."""
    from launcher.trust.snapshot import remove_dir

    try:
        remove_dir(tmp)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    """The watchdog process: guard groups until stdin closes, then kill what is left."""
    guarded: set[int] = set()
    cgroup_dirs: list[Path] = []
    launcher: list[int] = []  # set: no cgroup, so record what the launcher adopts
    clean: list[bool] = []  # the launcher closed cleanly and swept its orphans itself
    temporary: list[Path] = []  # private temporary directories to remove if it died
    records: list[Path] = []  # protected places to put back if it died
    inits: list[int] = []  # pidfds of PID namespaces' inits, to end if it died
    record = descendants.Record()
    pending = bytearray()

    def take(data: bytes) -> None:
        pending.extend(data)
        *lines, rest = bytes(pending).split(b"\n")
        pending[:] = rest
        for raw in lines:
            line = raw.strip().decode(errors="replace")
            with contextlib.suppress(ValueError):
                if line.startswith("+"):
                    guarded.add(int(line[1:]))
                elif line.startswith("-"):
                    guarded.discard(int(line[1:]))
                elif line.startswith("="):
                    cgroup_dirs.append(Path(line[1:]))
                elif line.startswith("^"):
                    launcher.append(int(line[1:]))
                elif line.startswith("~") and Path(line[1:]).name.startswith(TMP_PREFIX):
                    temporary.append(Path(line[1:]))
                elif line.startswith("%") and Path(line[1:]).parent.name == GUARD_DIR:
                    records.append(Path(line[1:]))
                elif line.startswith("!"):
                    with contextlib.suppress(OSError):  # gone already: nothing to end
                        inits.append(os.pidfd_open(int(line[1:])))
                elif line == CLEAN:
                    clean.append(True)

    def drain() -> None:
        # The launcher is gone, so its end of the pipe is closed: what it wrote before
        # dying is all there, and the read ends at EOF at once.
        with contextlib.suppress(OSError):
            while chunk := os.read(0, READ_CHUNK):
                take(chunk)
        take(b"\n")

    def kill_all(*_: object) -> None:
        # A parent-death signal can arrive before the last `+PGID` lines were read.
        drain()
        for pgid in list(guarded):
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGKILL)
        if launcher and not clean:  # the launcher died: all it started or adopted goes
            record.scan(launcher[0])  # a last look, in case it is still on its way out
            record.kill()
        for path in cgroup_dirs:
            cgroups.kill_cgroup(path)
        if not clean:  # the launcher, closing cleanly, ends its namespaces itself
            for pidfd in inits:
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            for pidfd in inits:  # their exits complete once their processes are gone
                with contextlib.suppress(OSError):
                    select.select([pidfd], [], [], NAMESPACE_END_S)
        if not clean:  # a launcher that closed cleanly removed its own (or still uses them)
            for tmp in temporary:
                _remove_tmp(tmp)
            for folder in dict.fromkeys(records):  # its processes are gone by now
                _revive(folder)
        os._exit(0)

    def scan_loop() -> None:
        while True:
            if launcher:
                record.scan(launcher[0])
            threading.Event().wait(SCAN_S)

    # Ctrl-C and a hang-up are for the launcher, which decides what ends; the watchdog
    # acts only on stdin EOF or the parent-death signal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(PDEATHSIG_TERM, kill_all)
    parent = os.getppid()
    _set_parent_death_signal()
    if os.getppid() != parent:
        kill_all()
    threading.Thread(target=scan_loop, daemon=True).start()
    kill_all()  # drain() reads to EOF: the launcher closed stdin or died


if __name__ == "__main__":
    main()
