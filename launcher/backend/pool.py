"""The parent side of serve's pipe: SubagentManager keeps a pool of worker processes.

Each sub-agent is one `python -m launcher.backend.worker` process that starts its own MCP
servers at its own session start. The manager reads the worker's event stream to
keep status, result, usage and turns; steering and stopping go down the worker's stdin.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import anyio
import anyio.abc

from launcher.backend import protocol
from launcher.backend.inputs import HostInputs
from launcher.backend.protocol import Job, RunState
from launcher.backend.spare import (
    REFUSED_ERROR,
    SPARE_COUNT,
    SparePool,
    start_worker,
    was_refused,
)
from launcher.errors import RunError
from launcher.events import RunStatus
from launcher.procs.group import Ladder, stop_group
from launcher.store.owner import Owner
from launcher.telemetry import traces

STOP_GRACE_S = 15.0
"""How long a stopped worker gets to close its session (its stdio shutdowns are bounded)."""
KILL_WAIT_S = 2.0
"""After SIGKILL, how long to wait for the kernel to report the worker gone."""
WORKER_LADDER = Ladder(eof_grace_s=STOP_GRACE_S, term_grace_s=KILL_WAIT_S, sweep_s=0.3)
"""A worker ends its own session on stdin EOF; only a stuck one meets TERM and KILL."""
EXPIRED_MEMORY = 4096
"""How many dropped ids serve still recognises, to say "expired" rather than "unknown"."""
KEEP_ENDED = 1024
"""Ended sub-agents that are not tasks whose results serve keeps for get_subagent_result;
the oldest beyond it are dropped, so a long-lived serve's memory stays bounded (a task is
kept for its ttl instead)."""
BACKSTOP_GRACE_S = 15.0
"""Past its `timeout`, a run's worker has this long to end it itself (close its servers,
say `agent_end`); a worker still silent then is stuck, and is killed."""
KILL_LADDER = Ladder(eof_grace_s=0.0, term_grace_s=KILL_WAIT_S, sweep_s=0.3)
"""A worker that did not stop in time: straight to TERM, then KILL (its watchdog ends
its servers)."""


class Remote(Protocol):
    """A worker run by a Driver elsewhere: control lines in, and a forced end."""

    async def send(self, message: dict[str, Any]) -> None:
        """Deliver one control message (protocol.py) to the worker."""
        ...

    async def kill(self) -> None:
        """End the worker now (it did not stop in time)."""
        ...


class Driver(Protocol):
    """Runs jobs somewhere other than local workers (`serve --engine ray`)."""

    async def __call__(self, entry: SubAgent, job: Job, log_path: Path) -> None:
        """Run `job`: fold its worker's lines into `entry` (fold_line), bind its inputs'
        replies, set its `remote`; return when the run has ended."""
        ...

    async def aclose(self) -> None:
        """Serve ends: let go of what the driver holds."""
        ...


@dataclass(kw_only=True)
class SubAgent(RunState):
    """One sub-agent's state as `get_subagent_result` reports it."""

    id: str
    agent: str
    done: anyio.Event = field(default_factory=anyio.Event)
    process: anyio.abc.Process | None = None
    pending: list[dict[str, Any]] = field(default_factory=list)
    stop_requested: bool = False
    watchers: list[Callable[[dict[str, Any]], None]] = field(default_factory=list)
    """Called with each worker event after it is folded in (must not block)."""
    task: bool = False
    """Owned by an MCP task: dropped after the task's ttl, not by KEEP_ENDED."""
    remote: Remote | None = None
    """Its worker's control when it runs elsewhere (a Ray node); else `process` is it."""
    caller: str | None = None
    """Who spawned it (an HTTP caller; None on stdio): only they see, steer or stop it."""
    inputs: HostInputs = field(default_factory=HostInputs)
    """Its servers' input requests waiting for the host (backend/inputs.py)."""
    backstop: float | None = None
    """The run's `timeout` (s): its worker is killed if it has not ended past it + a grace."""

    def snapshot(self) -> dict[str, Any]:
        """The structured result: agent_id, status, result, usage, turns, session_id (the
        stored session, for `resume`), and error."""
        out = {
            "agent_id": self.id,
            "status": self.status,
            "result": self.result,
            "usage": self.usage,
            "turns": self.turns,
            "session_id": self.session_id,
        }
        if self.error:
            out["error"] = self.error
        if self.worktree is not None:
            out["worktree"] = self.worktree
        return out


class SubagentManager:
    """Spawns, tracks, steers and stops sub-agent workers; at most `max_concurrent` run."""

    def __init__(
        self,
        tg: anyio.abc.TaskGroup,
        *,
        config_dir: Path | None,
        workspace: Path,
        state_home: Path,
        default_model: str | None,
        max_concurrent: int,
        max_per_caller: int | None = None,
        no_lock: bool = False,
        spare_workers: int = SPARE_COUNT,
        spares: SparePool | None = None,
        keep_ended: int = KEEP_ENDED,
        expired_memory: int = EXPIRED_MEMORY,
        driver: Driver | None = None,
    ) -> None:
        self._tg = tg
        self._driver = driver
        self._keep_ended = keep_ended
        self._expired_memory = expired_memory
        self._no_lock = no_lock
        self.owner = Owner.of_serve(config_dir, workspace)
        """Recorded with every session this manager's workers start: serve's identity."""
        self._config_dir = config_dir
        self._workspace = workspace
        self._logs = state_home / "serve"
        self.default_model = default_model
        self._limiter = anyio.CapacityLimiter(max_concurrent)
        self._per_caller = max_per_caller or max_concurrent
        self._caller_limiters: dict[str | None, anyio.CapacityLimiter] = {}
        """One per caller (kept: callers are a token file's or an issuer's subjects): a
        caller's excess waits here, before the shared limiter, so it never holds a slot
        another caller could use."""
        self.agents: dict[str, SubAgent] = {}
        self.draining = False
        """Set by drain(): spawn refuses, serve is on its way out."""
        self.expired: OrderedDict[str, str | None] = OrderedDict()
        """Ids dropped after their ttl, with whose they were (bounded: only the latest
        `expired_memory`)."""
        self._ended: deque[str] = deque()
        """Ended sub-agents that are not tasks, oldest first (at most `keep_ended`)."""
        # Workers started ahead of the next spawn (`spares`: a pool whose first spares serve
        # started before its SDK loaded); the task ends them when serve ends.
        self._spares = spares or SparePool(
            workspace=workspace, log_dir=self._logs, count=spare_workers
        )
        if spare_workers:
            tg.start_soon(self._spares.run, name="spare workers")

    def spawn(
        self,
        prompt: str,
        *,
        agent: str,
        ext: list[str],
        model: str | None,
        max_turns: int | None,
        limits: dict[str, Any] | None = None,
        backstop: float | None = None,
        workspace: Path | None = None,
        resume: str | None = None,
        config: dict[str, Any] | None = None,
        script: str | None = None,
        caller: str | None = None,
        can_ask: bool = False,
    ) -> SubAgent:
        """Queue a sub-agent (a stored session's continuation with `resume`); it runs as soon
        as a slot is free. `config`: the snapshot it runs with (config/snapshot.py); `script`:
        the text of a host's `scripted:` model, already read; `caller`: who asks (its own
        sub-agents and sessions only); `can_ask`: whether its servers' input requests can
        reach the host (backend/inputs.py)."""
        if self.draining:
            raise RunError("serve is shutting down: no new sub-agents")
        entry = SubAgent(id=f"sa-{secrets.token_hex(4)}", agent=agent, caller=caller)
        entry.inputs.can_ask = can_ask
        entry.backstop = backstop
        self.agents[entry.id] = entry
        job = Job(
            prompt=prompt,
            agent=agent,
            ext=ext,
            model=model or self.default_model,
            max_turns=max_turns,
            limits=limits,
            config_dir=str(self._config_dir) if self._config_dir else None,
            workspace=str(workspace or self._workspace),
            no_lock=self._no_lock,
            resume=resume,
            config=config,
            script=script,
            owner=self.owner_of(caller).to_json(),
            ask_host=True,
            trace=traces().carrier(),  # the host's request (its `_meta.traceparent`) is current
        )
        self._tg.start_soon(self._run, entry, job, name=f"subagent:{entry.id}")
        return entry

    @property
    def no_lock(self) -> bool:
        """`serve --no-lock`: workers ignore the config's lock file."""
        return self._no_lock

    def get(self, agent_id: str, caller: str | None = None) -> SubAgent | None:
        """`caller`'s sub-agent `agent_id`; None for another caller's, as for an unknown id."""
        entry = self.agents.get(agent_id)
        return entry if entry is not None and entry.caller == caller else None

    def has_expired(self, agent_id: str, caller: str | None = None) -> bool:
        """Whether `caller`'s sub-agent `agent_id` was dropped (another's reads as unknown)."""
        return agent_id in self.expired and self.expired[agent_id] == caller

    def owner_of(self, caller: str | None) -> Owner:
        """The store's owner record of sessions `caller` starts through this serve."""
        return Owner(serve=self.owner.serve, caller=caller)

    async def drain(self) -> None:
        """No new sub-agents from now on; stop every one that runs or waits, concurrently,
        and return once each has ended (its worker, and so its servers, gone)."""
        self.draining = True
        async with anyio.create_task_group() as tg:
            for entry in list(self.agents.values()):
                if not entry.done.is_set():
                    tg.start_soon(self.stop, entry)

    def forget(self, agent_id: str) -> None:
        """Drop an ended sub-agent and its result (a task past its ttl, or beyond KEEP_ENDED)."""
        entry = self.agents.pop(agent_id, None)
        self.expired[agent_id] = entry.caller if entry is not None else None
        while len(self.expired) > self._expired_memory:
            self.expired.popitem(last=False)

    async def steer(self, entry: SubAgent, message: str) -> None:
        """Deliver `message` at the sub-agent's next turn boundary."""
        await self._send(entry, protocol.steer(message))

    async def stop(self, entry: SubAgent) -> None:
        """Stop the sub-agent and wait until its worker (and so its servers) is gone."""
        entry.stop_requested = True
        if entry.process is None and entry.remote is None and entry.status is RunStatus.QUEUED:
            entry.status = RunStatus.STOPPED
            entry.done.set()
            return
        await entry.inputs.release()  # a run held on its host's answer must hear the stop
        await self._send(entry, protocol.stop())
        with anyio.move_on_after(STOP_GRACE_S):
            await entry.done.wait()
        if not entry.done.is_set() and (entry.process or entry.remote) is not None:
            # It did not stop in time: end it (its watchdog then ends its servers).
            with anyio.CancelScope(shield=True):
                if entry.remote is not None:
                    await entry.remote.kill()
                elif entry.process is not None:
                    await stop_group(entry.process, KILL_LADDER)
            with anyio.move_on_after(KILL_WAIT_S):
                await entry.done.wait()
        if not entry.final:
            entry.status = RunStatus.STOPPED

    async def _send(self, entry: SubAgent, message: dict[str, Any]) -> None:
        if entry.final:
            return
        if entry.remote is not None:
            await entry.remote.send(message)
            return
        if entry.process is None or entry.process.stdin is None:
            entry.pending.append(message)
            return
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await entry.process.stdin.send(protocol.encode(message))

    async def _run(self, entry: SubAgent, job: Job) -> None:
        caller = self._caller_limiters.setdefault(
            entry.caller, anyio.CapacityLimiter(self._per_caller)
        )
        try:
            async with caller, self._limiter:
                if entry.stop_requested:
                    entry.status = RunStatus.STOPPED
                    return
                entry.status = RunStatus.RUNNING
                async with anyio.create_task_group() as tg:
                    if entry.backstop is not None:
                        tg.start_soon(self._backstop, entry, entry.backstop)
                    await self._drive(entry, job)
                    tg.cancel_scope.cancel()
        except Exception as exc:
            # One sub-agent's failure (e.g. its workspace vanished) must not end serve.
            entry.status = RunStatus.ERROR
            entry.error = f"worker failed: {type(exc).__name__}: {exc}"
        finally:
            if not entry.final:
                if entry.stop_requested:
                    entry.status, entry.error = RunStatus.STOPPED, None
                else:
                    entry.status = RunStatus.ERROR
                    entry.error = entry.error or "worker ended without a final status"
            entry.done.set()
            self._retire(entry)

    async def _backstop(self, entry: SubAgent, limit_s: float) -> None:
        """A worker that has not ended its run by its timeout (and a grace) is stuck: kill
        it, so its run reports `timeout` rather than `running` for ever."""
        await anyio.sleep(limit_s + BACKSTOP_GRACE_S)
        if entry.final:
            return
        entry.status = RunStatus.TIMEOUT
        entry.error = f"timeout: the worker did not end its run within {limit_s:g} s; killed"
        with anyio.CancelScope(shield=True):
            if entry.remote is not None:
                await entry.remote.kill()
            elif entry.process is not None:
                await stop_group(entry.process, KILL_LADDER)

    def _retire(self, entry: SubAgent) -> None:
        """Keep an ended plain sub-agent's result; drop the oldest beyond KEEP_ENDED."""
        if entry.task:
            return
        self._ended.append(entry.id)
        while len(self._ended) > self._keep_ended:
            self.forget(self._ended.popleft())

    async def _drive(self, entry: SubAgent, job: Job) -> None:
        log_path = self._logs / f"{entry.id}.log"
        if self._driver is not None:
            await self._driver(entry, job, log_path)
        else:
            await drive_worker(entry, job, log_path=log_path, spares=self._spares)


async def fold_line(entry: SubAgent, raw: bytes | str, tg: anyio.abc.TaskGroup) -> None:
    """One line from a worker: an event folded into `entry` (and shown to its watchers), or
    an input request held for the host."""
    message = protocol.decode(raw)
    if message is None:
        return
    if message.get("op") == protocol.ASK:
        request = message.get("request")
        await entry.inputs.offer(
            str(message.get("id")), request if isinstance(request, dict) else {}, tg
        )
        return
    entry.observe(message)
    for watch in entry.watchers:
        watch(message)


async def _end_at_exit(process: anyio.abc.Process) -> None:
    """Once the worker has exited, all it wrote is queued: reading its channel ends there
    (SHUT_RD: what is queued is still read, then EOF), even while another process holds a
    copy of the worker's end and would keep the run waiting for an EOF."""
    await process.wait()
    assert process.stdout is not None
    raw = process.stdout.extra(anyio.abc.SocketAttribute.raw_socket, None)
    if raw is not None:  # a pipe (a Remote's stream) has no copies to fear
        with contextlib.suppress(OSError):
            raw.shutdown(socket.SHUT_RD)


async def drive_worker(
    entry: SubAgent, job: Job, *, log_path: Path, spares: SparePool | None = None
) -> None:
    """Run `job` in a worker process, folding its events into `entry`; the worker always ends.

    The worker is a spare from `spares` when one fits, else started now. What was queued
    for `entry` before the worker existed is sent right after the job.
    """
    spare = spares.take(job.workspace) if spares is not None else None
    if spare is not None:
        process = spare.process
        spare.adopt_log(log_path)
    else:
        process = await start_worker(job.workspace, log_path)
    try:
        assert process.stdin is not None and process.stdout is not None
        # The job, then what was queued before the worker existed, in order; only
        # then may steer/stop write to the worker directly.
        queued = [job.to_line(), *(protocol.encode(m) for m in entry.pending)]
        entry.pending.clear()
        await process.stdin.send(b"".join(queued))
        entry.process = process
        late, entry.pending = entry.pending, []  # queued while the job was written
        if late:
            await process.stdin.send(b"".join(protocol.encode(m) for m in late))
        stdin = process.stdin

        async def reply(request_id: str, result: dict[str, Any] | None) -> None:
            with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                await stdin.send(protocol.encode(protocol.answer(request_id, result)))

        entry.inputs.bind(reply)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_end_at_exit, process)
            buffer = b""
            async for chunk in process.stdout:
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for raw in complete:
                    await fold_line(entry, raw, tg)
            tg.cancel_scope.cancel()  # the worker is gone: no held request can be answered
    finally:
        with anyio.CancelScope(shield=True):
            await stop_group(process, WORKER_LADDER)
        if spare is not None:
            spare.merge_log()
        entry.inputs.pending.clear()
        if not entry.final:
            entry.error = (
                REFUSED_ERROR
                if was_refused(process)
                else f"worker exited unexpectedly (status {process.returncode})"
            )
