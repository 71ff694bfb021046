"""Starting serve's worker processes, and the spare kept started ahead of the next spawn.

A worker's start-up (an interpreter and the session's imports, ~0.3 s of CPU) used to be
paid by every spawn. A spare is a worker already started that way — environment block
scrubbed of secrets, its own process group, stderr to a private log — that has done its
imports and waits for its Job on stdin. A spawn takes it (the Job is the first line it
reads, as for a fresh worker) and the pool starts the next one in the background.

A spare starts no MCP server (servers start only at its session start, after the Job)
and has no child. It ends on stdin EOF, so however its driver ends — cancelled, killed
— it never outlives it; the pool's owner task ends the ones still waiting.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from signal import Signals

import anyio
import anyio.abc

from launcher.backend.callers import handed_generation
from launcher.procs.group import Ladder, spawn_group, stop_group, wait_until
from launcher.procs.hidden import child_handover
from launcher.procs.pyenv import interpreter_env
from launcher.state import private_dir, private_opener

SPARE_COUNT = 1
"""Spares kept waiting. One hides the whole start-up of a spawn that comes a moment after
the last (a host's next tool call follows a model turn); each spare holds an interpreter
(~40 MiB) for as long as serve runs, and back-to-back spawns outrun any few spares anyway:
each still needs its own ~0.4 s of start-up CPU, on the same cores."""
SPARE_FLAG = "--spare"
"""The worker's argument: preload the session's modules before reading the Job."""
LEAN_FLAG = "--lean"
"""With SPARE_FLAG: preload only what every session imports, not an HTTP model's client
or the MCP bridge (a batch of scripted tasks would pay for them in every worker)."""
WARM_WAIT_S = 10.0
"""How long a refill waits for spares still importing before it starts one anyway (a
spare stuck importing must not stop the pool)."""
WARMING_NAME = "subagent-warmup"
"""A spare's process name (/proc/PID/comm, `ps -o comm`) while it imports."""
SPARE_NAME = "subagent-spare"
"""A spare's process name once it waits for its Job; a taken spare gets its own back."""
SPARE_LADDER = Ladder(eof_grace_s=0.0, term_grace_s=2.0, sweep_s=0.3)
"""A waiting spare holds no session and no child: SIGTERM at once (it has no handler),
SIGKILL if it does not go within two seconds."""
DEAD_STATES = frozenset("ZXx")
"""/proc/PID/stat states of a process that has exited (a zombie, or dead)."""
STOPPED_STATES = frozenset("Tt")
"""/proc/PID/stat states of a stopped process (a stop signal, a tracer)."""
WORKER_ARGV = (sys.executable, "-P", "-m", "launcher.backend.worker")
"""-P: the user's workspace (the worker's cwd) must not shadow our own packages."""


def default_max_warming() -> int:
    """Spares importing at once: one a core. More only share the cores, so a job handed to
    a spare still importing waits for the replacements started beside it."""
    try:
        cores = len(os.sched_getaffinity(0))  # the cores this process may run on
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, cores)


def read_stat(pid: int) -> tuple[str, str] | None:
    """Process `pid`'s name and state letter (Linux: /proc/PID/stat); None when it is gone
    or names cannot be read (not Linux)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as stat:
            line = stat.read()
    except OSError:
        return None
    # "PID (NAME) STATE ...": the name may hold spaces and parentheses, the state follows
    # the last ")".
    head, paren, tail = line.rpartition(")")
    fields = tail.split()
    if not paren or "(" not in head or not fields:
        return None
    return head.partition("(")[2], fields[0]


def is_warming(pid: int) -> bool:
    """Whether the taken spare `pid` is still importing (Linux: its process name says so;
    where names cannot be read, never)."""
    stat = read_stat(pid)
    return stat is not None and stat[0] == WARMING_NAME


def is_importing(pid: int) -> bool:
    """Whether the waiting spare `pid` is still importing: running and not named SPARE_NAME
    (it is named only once its imports are done; where names cannot be read, never)."""
    stat = read_stat(pid)
    # A stopped one takes no core: counted, it would hold the one-a-core gate for nothing.
    return (
        stat is not None
        and stat[1] not in DEAD_STATES
        and stat[1] not in STOPPED_STATES
        and stat[0] != SPARE_NAME
    )


def is_stopped(pid: int) -> bool:
    """Whether `pid` is stopped (SIGSTOP, a tracer): a job handed to it would wait forever."""
    stat = read_stat(pid)
    return stat is not None and stat[1] in STOPPED_STATES


async def start_worker(
    workspace: str | Path, log_path: Path, *, spare: bool = False, lean: bool = False
) -> anyio.abc.Process:
    """Start a worker in `workspace`, stderr appended to `log_path`; its stdin waits for the
    Job (`spare`: preloading first, `lean`: only what every session needs)."""
    private_dir(log_path.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    # Its stdin and stdout are not pipes it starts with: a fresh execve is dumpable until
    # restore(), and a process of the user could take (or open through /proc/PID/fd) its
    # fds 0 and 1 in that moment and keep them, to read the Job and the control lines and
    # write events of its own. It starts on /dev/null; these socket pairs' ends come with
    # its pulled hand-over, once it is non-dumpable.
    down, worker_in = socket.socketpair()
    up, worker_out = socket.socketpair()
    with (
        os.fdopen(private_opener(str(log_path), flags), "ab") as errlog,
        worker_in,
        worker_out,
    ):
        # The worker's environment block holds no secret (the model's shell could read
        # it); it pulls them over a descriptor once it is non-dumpable (procs/hidden.py).
        handover = child_handover(channel=(worker_in.fileno(), worker_out.fileno()))
        try:
            # Its own group: a signal meant for serve's group must not cut a worker's
            # shutdown short; serve ends its workers itself.
            process = await spawn_group(
                [*WORKER_ARGV, *_spare_args(spare, lean)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=errlog,
                cwd=workspace,
                env=interpreter_env(handover.env, workspace),
                pass_fds=(handover.fd,),
            )
        except BaseException:
            handover.close()
            down.close()
            up.close()
            raise
    # Answered once the worker, non-dumpable, asks (procs/hidden.py).
    handover.answer(process.pid)
    stdin = await anyio.abc.UNIXSocketStream.from_socket(down)
    stdout = await anyio.abc.UNIXSocketStream.from_socket(up)
    return ChannelProcess(process, stdin, stdout, handover.refused)


class ChannelProcess(anyio.abc.Process):
    """A worker process whose stdin and stdout are the channel handed over to it."""

    def __init__(
        self,
        process: anyio.abc.Process,
        stdin: anyio.abc.ByteSendStream,
        stdout: anyio.abc.ByteReceiveStream,
        refused: threading.Event,
    ) -> None:
        self._process = process
        self._stdin = stdin
        self._stdout = stdout
        self.refused = refused
        """Set if its hand-over was refused: it got no channel and runs nothing."""

    async def aclose(self) -> None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError):
            await self._stdin.aclose()
        await self._stdout.aclose()
        await self._process.aclose()

    async def wait(self) -> int:
        return await self._process.wait()

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()

    def send_signal(self, signal: Signals) -> None:
        self._process.send_signal(signal)

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._process.stderr


def _spare_args(spare: bool, lean: bool) -> list[str]:
    if not spare:
        return []
    return [SPARE_FLAG, LEAN_FLAG] if lean else [SPARE_FLAG]


@dataclass
class Spare:
    """A started worker waiting for its Job, and the log its stderr goes to."""

    process: anyio.abc.Process
    log_path: Path
    cwd: tuple[int, int]
    """(st_dev, st_ino) of the directory it was started in: its workspace."""
    handed: int = 0
    """The `handed_generation` of the secrets it was handed: an older one lacks a caller
    token learned since, and would not mask it."""
    moved_to: Path | None = field(default=None, init=False)

    def adopt_log(self, log_path: Path) -> None:
        """Its stderr becomes the sub-agent's log: renamed now, or appended at the end
        (`merge_log`) when that log already exists (a re-run batch task's)."""
        if not log_path.exists():
            with contextlib.suppress(OSError):
                os.replace(self.log_path, log_path)
                self.log_path = log_path
        self.moved_to = log_path

    def merge_log(self) -> None:
        """After the worker ended: append what it wrote to its adopted log, if not renamed."""
        target = self.moved_to
        if target is None or target == self.log_path:
            return
        with contextlib.suppress(OSError):
            data = self.log_path.read_bytes()
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
            with os.fdopen(private_opener(str(target), flags), "ab") as out:
                out.write(data)
            self.log_path.unlink()


REFUSED_ERROR = (
    "worker refused its hand-over: when it asked, another process could reach it (traced, an"
    " extra thread, or still dumpable); it was given nothing and ran nothing"
)


def was_refused(process: anyio.abc.Process) -> bool:
    """Whether `process` is a worker whose hand-over was refused (procs/hidden.py)."""
    return isinstance(process, ChannelProcess) and process.refused.is_set()


def _importing(spare: Spare) -> bool:
    # returncode first: a reaped spare's pid may name another process by now.
    return spare.process.returncode is None and is_importing(spare.process.pid)


def _identity(path: str | Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


class SparePool:
    """Keeps `count` spare workers started in `workspace`; `run` is its one owner task.

    With `max_warming` (a batch: many jobs at once), a refill starts a spare only while
    fewer than that many of its spares, waiting or taken, are still importing: on few
    cores, replacements started all at once beside spares just taken would slow the jobs
    those run. Without it (serve's one spare) a refill starts at once: a host's next spawn,
    a moment later, must find its spare already importing. `gate_start` holds the first
    fill to `max_warming` too (serve's `--spares N`: the first ready soonest). `lean` spares
    preload only what every session needs (a driver whose jobs use a scripted model sets it)."""

    def __init__(
        self,
        *,
        workspace: Path,
        log_dir: Path,
        count: int = SPARE_COUNT,
        lean: bool = False,
        max_warming: int | None = None,
        gate_start: bool = False,
    ) -> None:
        self._workspace = workspace
        self._gate_start = gate_start
        self._log_dir = log_dir
        self._count = count
        self.lean = lean
        self._max_warming = max_warming
        self._ready: list[Spare] = []
        self._retired: list[Spare] = []
        self._taken: list[int] = []
        """Pids of spares handed out, until they are seen done importing."""
        self._takes = 0
        self._takes_in_all: int | None = None
        """How many takes the pool's user will make in all (None: no end known)."""
        self._wanted = anyio.Event()

    @property
    def pids(self) -> list[int]:
        """The waiting spares' pids."""
        return [s.process.pid for s in self._ready]

    def expect_takes(self, count: int) -> None:
        """`take` is called `count` times in all: keep no more spares than the takes still
        to come can use."""
        self._takes_in_all = count
        self._wanted.set()

    def _wanted_count(self) -> int:
        if self._takes_in_all is None:
            return self._count
        return max(0, min(self._count, self._takes_in_all - self._takes))

    def take(self, workspace: str | Path) -> Spare | None:
        """A waiting spare started in `workspace` (None: start a fresh worker); the owner
        task then starts the next one."""
        self._takes += 1
        here = _identity(workspace)
        fitting: list[Spare] = []
        for candidate in self._ready:
            if (
                candidate.process.returncode is None
                and not was_refused(candidate.process)
                and candidate.cwd == here
                and candidate.handed == handed_generation()
                and not is_stopped(candidate.process.pid)
            ):
                fitting.append(candidate)
            else:  # it died or was refused, its directory is not this job's, it lacks a
                # newer token, or it is stopped (the job would wait for it forever)
                self._retired.append(candidate)
        # The oldest one done importing, else the oldest: one still importing would keep the
        # job waiting for its imports while a ready one sits idle.
        spare = next((s for s in fitting if not _importing(s)), fitting[0] if fitting else None)
        self._ready = [s for s in fitting if s is not spare]
        if spare is not None:
            self._taken.append(spare.process.pid)
        self._wanted.set()
        return spare

    async def start_now(self) -> None:
        """Start the spares at once, before `run` (serve: while its MCP SDK loads, the first
        spare imports on the other core, and the host's first spawn finds it ready); with
        `gate_start`, only the first: `run` starts the others."""
        await self._fill(gated=False, most=1 if self._gate_start else None)

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Keep the pool full until cancelled, then end every spare still waiting; started
        once the first spares are."""
        try:
            # Nothing is importing yet: start them all now, unless held to a core's worth.
            await self._fill(gated=self._gate_start)
            task_status.started()
            while True:
                await self._wanted.wait()
                self._wanted = anyio.Event()
                await self._fill()
        finally:
            with anyio.CancelScope(shield=True):
                await self._stop(self._ready + self._retired)
                self._ready.clear()
                self._retired.clear()

    def warming(self) -> int:
        """How many of the pool's spares, waiting or taken, are still importing."""
        # A taken spare counts only while named WARMING_NAME: once its Job came it takes the
        # interpreter's name back, so "not yet SPARE_NAME" would count it for its whole run.
        # A spare taken before it named itself is so dropped from the count at once.
        self._taken = [pid for pid in self._taken if is_warming(pid)]
        # A waiting spare counts until it is named SPARE_NAME: it starts named after the
        # interpreter and is named WARMING_NAME only after its hand-over, so counting that
        # name alone let a gate start every spare at once.
        waiting = sum(1 for s in self._ready if _importing(s))
        return len(self._taken) + waiting

    async def _fill(self, *, gated: bool = True, most: int | None = None) -> None:
        while len(self._ready) > self._wanted_count():
            self._retired.append(self._ready.pop())  # the newest: likely still importing
        retired, self._retired = self._retired, []
        await self._stop(retired)
        limit = self._max_warming if gated else None
        wanted = self._wanted_count() if most is None else min(most, self._wanted_count())
        while len(self._ready) < wanted:
            if limit is not None:
                await wait_until(lambda: self.warming() < limit, WARM_WAIT_S)
            here = _identity(self._workspace)
            if here is None:
                return  # the workspace is gone: spawns start fresh and report it
            log_path = self._log_dir / f"spare-{secrets.token_hex(4)}.log"
            handed = handed_generation()
            try:
                # Shielded: a process started while the owner is cancelled must be recorded.
                with anyio.CancelScope(shield=True):
                    process = await start_worker(
                        self._workspace, log_path, spare=True, lean=self.lean
                    )
            except OSError:
                return  # a fresh worker would fail the same way, and say why
            self._ready.append(Spare(process, log_path, here, handed))

    async def _stop(self, spares: list[Spare]) -> None:
        # All at once: one that ignores SIGTERM (stopped, say) takes SPARE_LADDER's whole
        # grace, and one after the other sixteen such would outlast serve's drain.
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as tg:
                for spare in spares:
                    tg.start_soon(_stop_one, spare)


async def _stop_one(spare: Spare) -> None:
    process = spare.process
    if process.returncode is None:
        await stop_group(process, SPARE_LADDER)
    else:
        # Exited and reaped: its pid, its group's id, may be another process's by now, and
        # a spare starts no process, so it left no group to sweep.
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            if process.stdin is not None:
                await process.stdin.aclose()
    # An empty log is noise; one that says why a spare died is kept.
    with contextlib.suppress(OSError):
        if spare.log_path.stat().st_size == 0:
            spare.log_path.unlink()
