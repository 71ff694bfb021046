"""One watchdog process per session: kills every server group if the launcher dies.

The launcher may die by SIGKILL, where no cleanup code runs. The watchdog is a tiny
stdlib process that reads `+PGID` / `-PGID` lines on stdin; when stdin reaches EOF
(the launcher is gone, however it died) or its parent-death signal arrives, it
SIGKILLs every group it still holds. Run as `python -m launcher.procs.watchdog`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading

PDEATHSIG_TERM = signal.SIGTERM
PR_SET_PDEATHSIG = 1
READ_CHUNK = 4096


class Watchdog:
    """Launcher side: starts the watchdog lazily and tells it which groups to guard."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        if self._proc is None:
            try:
                self._proc = subprocess.Popen(
                    # -P: a `launcher/` or other package in the cwd must not shadow ours.
                    [sys.executable, "-P", "-m", "launcher.procs.watchdog"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                    # Outside the launcher's group: a group-wide SIGKILL or SIGHUP (CI job
                    # cancel, closed terminal) must not take the backstop down with it.
                    start_new_session=True,
                )
            except OSError:
                return None  # servers still die of stdin EOF; the watchdog is a backstop
        return self._proc

    def _send(self, line: str) -> None:
        with self._lock:
            proc = self._ensure()
            if proc is None or proc.stdin is None:
                return
            with contextlib.suppress(OSError, ValueError):
                proc.stdin.write(line.encode() + b"\n")
                proc.stdin.flush()

    def guard(self, pgid: int) -> None:
        """Kill this group if the launcher dies."""
        self._send(f"+{pgid}")

    def release(self, pgid: int) -> None:
        """The group was ended cleanly; stop guarding it."""
        self._send(f"-{pgid}")

    def close(self) -> None:
        """End the watchdog; it kills whatever it still guards, then exits."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is None:
            return
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=2.0)


def _set_parent_death_signal() -> None:
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(PDEATHSIG_TERM), 0, 0, 0)


def main() -> None:
    """The watchdog process: guard groups until stdin closes, then kill what is left."""
    guarded: set[int] = set()
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
        os._exit(0)

    # Ctrl-C and a hang-up are for the launcher, which decides what ends; the watchdog
    # acts only on stdin EOF or the parent-death signal.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(PDEATHSIG_TERM, kill_all)
    parent = os.getppid()
    _set_parent_death_signal()
    if os.getppid() != parent:
        kill_all()
    kill_all()  # drain() reads to EOF: the launcher closed stdin or died


if __name__ == "__main__":
    main()
