"""Starting processes confined: one thread per session confines itself, then starts them.

Why a thread and not a helper process per command: Landlock and seccomp belong to the
thread that installs them and pass to every process it starts, so a confined thread
costs one confinement per session, while a Python helper costs a Python start-up per
command (~20 ms against a ~6 ms `bash -c true` through the tool; bench/sandbox.py).
helper.py is the same confinement as a standalone helper (confine itself, then exec).
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import threading
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel

from launcher.procs.hidden import set_not_dumpable
from launcher.tools.sandbox.apply import confine_current_thread
from launcher.tools.sandbox.pidns import Init
from launcher.tools.sandbox.policy import SandboxPolicy

READ_CHUNK = 65536


async def read_chunks(fd: int) -> AsyncIterator[bytes]:
    """A non-blocking pipe's output, chunk by chunk, until EOF or an error."""
    while True:
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            await anyio.wait_readable(fd)
            continue
        except OSError:
            return
        if not chunk:
            return
        yield chunk


Job = Callable[[], None] | None


class ConfinedSpawner:
    """A thread that confined itself to `policy`; `popen` starts processes from it."""

    def __init__(self, policy: SandboxPolicy, *, pid_namespace: bool = False) -> None:
        """`pid_namespace` (root): what this thread starts is born in a PID namespace of
        its own (`init`: its init, or why there is none)."""
        self.policy = policy
        self._pid_namespace = pid_namespace
        self.init: Init | str | None = None
        # This process's memory and /proc entries (the confined thread's included) then
        # need CAP_SYS_PTRACE, which no command started here holds, root's shell included.
        set_not_dumpable()
        self._jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        ready: Future[None] = Future()
        self._thread = threading.Thread(
            target=self._serve, args=(ready,), name="sandbox-spawner", daemon=True
        )
        self._thread.start()
        ready.result()  # raises the OSError of a refused confinement

    def _serve(self, ready: Future[None]) -> None:
        try:
            self.init = confine_current_thread(
                self.policy, guard_launcher=True, pid_namespace=self._pid_namespace
            )
        except OSError as exc:
            ready.set_exception(exc)
            return
        ready.set_result(None)
        while (job := self._jobs.get()) is not None:
            job()

    async def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """Start `argv` from the confined thread; one hand-over each way, no worker thread."""
        result: Future[subprocess.Popen[bytes]] = Future()
        started = anyio.Event()
        token = anyio.lowlevel.current_token()

        def job() -> None:
            try:
                result.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # handed to the caller, who raises it
                result.set_exception(exc)
            with contextlib.suppress(Exception):  # the loop is gone: nobody waits
                anyio.from_thread.run_sync(started.set, token=token)

        self._jobs.put(job)
        # Shielded: a process started for a cancelled caller must still reach it, or its
        # group would run on unguarded. Starting takes milliseconds.
        with anyio.CancelScope(shield=True):
            await started.wait()
        return result.result()

    def popen_sync(self, argv: list[str], **kwargs: Any) -> subprocess.Popen[bytes]:
        """`popen` for a caller that may block (not the event loop, not this thread)."""
        result: Future[subprocess.Popen[bytes]] = Future()

        def job() -> None:
            try:
                result.set_result(subprocess.Popen(argv, **kwargs))
            except BaseException as exc:  # handed to the caller, who raises it
                result.set_exception(exc)

        self._jobs.put(job)
        return result.result()

    def close(self) -> None:
        """End the thread; processes it started are the caller's to end."""
        self._jobs.put(None)


class ConfinedProcess:
    """The async face run_bash needs of a Popen: pid, output chunks, wait, returncode."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        self._popen = popen
        self.pid = popen.pid
        assert popen.stdout is not None
        self._out = popen.stdout.fileno()
        os.set_blocking(self._out, False)
        self._pidfd = os.pidfd_open(popen.pid)

    @property
    def returncode(self) -> int | None:
        """The exit status (negative: killed by that signal) once `wait` returned."""
        return self._popen.returncode

    @property
    def stdout(self) -> AsyncIterator[bytes]:
        """The merged output, chunk by chunk, until EOF."""
        return self._chunks()

    def _chunks(self) -> AsyncIterator[bytes]:
        return read_chunks(self._out)

    async def wait(self) -> int:
        """Wait for the leader to exit (a pidfd turns readable), without a thread."""
        if self._popen.poll() is None:
            await anyio.wait_readable(self._pidfd)
        return self._popen.wait()

    async def aclose(self) -> None:
        """Close the output pipe and reap the leader."""
        assert self._popen.stdout is not None
        self._popen.stdout.close()
        try:
            await self.wait()
        finally:
            os.close(self._pidfd)
