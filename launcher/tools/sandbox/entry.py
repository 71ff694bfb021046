"""Commands of an unprivileged launcher start inside the holder's namespaces, by a fork server.

Why a server and not `nsenter`: an exec of `nsenter` before every command was a second
program start per command (bench/sandbox.py, unprivileged: on ÷ off 1.2-1.85). Why not
`setns` between fork and exec in the launcher's own child (Popen's `preexec_fn`): that
child must be a real `fork` of the whole launcher, not the `vfork` Popen uses otherwise,
and copying a launcher of 150 MB made `bash -c true` 2-7× dearer than `nsenter`. The
server (forkserver.py) is small and already inside, and forks each command from there.

What it keeps: it is started by the confined thread (the same Landlock, seccomp,
no_new_privs, capabilities), then enters the namespaces once, empties its bounding set
and protects itself from its commands (non-dumpable; signals to it refused). Each command
leads its own session (the group the launcher kills and the watchdog guards), gets its
working directory resolved in the namespace, and joins the session's cgroup through a
descriptor the launcher opened. The launcher waits on a pidfd and asks the server for the
status; a server that does not answer within `ANSWER_LIMIT_S`, or is gone, is an OSError
(the tool's error result), never a hang, and never a command run outside.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import anyio

from launcher.procs import cgroup, strays
from launcher.tools.sandbox.forkserver import receive, send
from launcher.tools.sandbox.spawner import read_chunks

SERVER = Path(__file__).with_name("forkserver.py")
ANSWER_LIMIT_S = 60.0
"""How long the server may take to answer (its start-up on a loaded box included)."""


class ForkServer:
    """The launcher's end of one session's fork server."""

    def __init__(self, ours: socket.socket, process: subprocess.Popen[bytes]) -> None:
        self._sock = ours
        self._sock.settimeout(ANSWER_LIMIT_S)
        self._process = process
        self._turn = anyio.Lock()
        self.pid = process.pid
        answer = self._answer()
        if "ready" not in answer:
            self.close()
            raise OSError(answer.get("error", "the fork server did not start"))

    @classmethod
    def start(
        cls,
        popen: Callable[..., subprocess.Popen[bytes]],
        fds: tuple[int, ...],
        *,
        network: bool,
    ) -> ForkServer:
        """Start the server by `popen` (the confined thread's), handing it the holder's
        namespace descriptors `fds` (user, mount, and the commands' PID namespace if any)."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        user, mnt, *pid = fds
        argv = [sys.executable, "-I", "-S", str(SERVER), str(theirs.fileno()), str(user)]
        argv += [str(mnt), "1" if network else "0", *map(str, pid)]
        try:
            process = popen(
                argv,
                pass_fds=(theirs.fileno(), user, mnt, *pid),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
                env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        strays.note_child(process.pid)  # started on purpose: not an orphan to sweep
        return cls(ours, process)

    async def spawn(
        self,
        argv: list[str],
        *,
        env: Mapping[str, str],
        cwd: str,
        stdin: int,
        stdout: int,
        stderr: int,
    ) -> int:
        """Start `argv` in the namespaces; its pid (the leader of its own session)."""
        fds = [stdin, stdout, stderr]
        join: int | None = None
        if argv[:3] == [cgroup.SHELL, "-c", cgroup.JOIN_SCRIPT]:
            procs, argv = argv[3], argv[4:]
            with contextlib.suppress(OSError):  # as the join script: no cgroup, still runs
                join = os.open(procs, os.O_WRONLY | os.O_CLOEXEC)
                fds.append(join)
        try:
            request = {"op": "spawn", "argv": argv, "env": dict(env), "cwd": cwd}
            return int((await self._ask(request, fds))["pid"])
        finally:
            if join is not None:
                os.close(join)

    async def reap(self, pid: int) -> int:
        """The exit status of `pid`, which has ended (negative: killed by that signal)."""
        return int((await self._ask({"op": "reap", "pid": pid}))["status"])

    async def _ask(self, request: dict[str, Any], fds: list[int] | None = None) -> dict[str, Any]:
        # On the event loop: the answer is one small frame, written at once; waiting for it
        # is bounded, and a server gone is EOF.
        async with self._turn:
            try:
                send(self._sock, request, fds)
            except OSError as exc:
                raise OSError(f"the sandbox's fork server is gone: {exc}") from exc
            with anyio.move_on_after(ANSWER_LIMIT_S) as late:
                await anyio.wait_readable(self._sock)
            if late.cancelled_caught:
                self._sock.close()  # its answer, if it ever comes, must answer nobody
                raise OSError(f"the sandbox's fork server did not answer in {ANSWER_LIMIT_S:g}s")
            answer = self._answer()
        if "error" in answer:
            raise OSError(answer["error"])
        return answer

    def _answer(self) -> dict[str, Any]:
        try:
            message = receive(self._sock)
        except TimeoutError as exc:
            late = f"the sandbox's fork server did not answer in {ANSWER_LIMIT_S:g}s"
            raise OSError(late) from exc
        except (OSError, EOFError, ValueError) as exc:
            raise OSError(f"the sandbox's fork server is gone: {exc}") from exc
        if message is None:
            raise OSError("the sandbox's fork server is gone")
        answer, fds = message
        for fd in fds:
            os.close(fd)
        return answer

    def close(self) -> None:
        """End the server (it ends at EOF); commands it started are the caller's to end."""
        self._sock.close()
        try:
            self._process.wait(timeout=ANSWER_LIMIT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            with contextlib.suppress(ChildProcessError):
                self._process.wait()
        except ChildProcessError:
            pass  # reaped elsewhere: gone either way


class EnteredProcess:
    """The async face run_bash needs of a command the fork server started."""

    def __init__(self, server: ForkServer, pid: int, out: int) -> None:
        self._server = server
        self.pid = pid
        self._out = out
        os.set_blocking(out, False)
        self._pidfd = os.pidfd_open(pid)
        self.returncode: int | None = None
        self.stdout: AsyncIterator[bytes] = self._chunks()

    def _chunks(self) -> AsyncIterator[bytes]:
        return read_chunks(self._out)

    async def wait(self) -> int:
        """Wait for the leader to exit (its pidfd turns readable), then its status."""
        if self.returncode is None:
            await anyio.wait_readable(self._pidfd)
            try:
                self.returncode = await self._server.reap(self.pid)
            except OSError:
                # A server gone left its commands to this subreaper: a zombie of the
                # commands' PID namespace, unreaped, would hold its end back for ever.
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(self.pid, os.WNOHANG)  # noqa: ASYNC222 (WNOHANG: never blocks)
                raise
        return self.returncode

    async def aclose(self) -> None:
        """Close the output pipe and reap the leader."""
        with contextlib.suppress(OSError):
            os.close(self._out)
        try:
            await self.wait()
        finally:
            os.close(self._pidfd)


async def start(
    server: ForkServer, argv: list[str], *, env: Mapping[str, str], cwd: str
) -> EnteredProcess:
    """`argv` started by `server`: no input, stdout and stderr one pipe the launcher reads."""
    read, write = os.pipe2(os.O_CLOEXEC)
    null = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    try:
        # Shielded: a process started for a cancelled caller must still reach it, or its
        # group would run on unguarded. Starting takes milliseconds.
        with anyio.CancelScope(shield=True):
            pid = await server.spawn(argv, env=env, cwd=cwd, stdin=null, stdout=write, stderr=write)
    except BaseException:
        os.close(read)
        raise
    finally:
        os.close(write)
        os.close(null)
    return EnteredProcess(server, pid, read)
