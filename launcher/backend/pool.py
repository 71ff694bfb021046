"""The parent side of serve's pipe: SubagentManager keeps a pool of worker processes.

Each sub-agent is one `python -m launcher.backend.worker` process that starts its own MCP
servers at its own session start. The manager reads the worker's event stream to
keep status, result, usage and turns; steering and stopping go down the worker's stdin.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import subprocess
import sys
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from launcher.backend import protocol
from launcher.backend.protocol import FINAL, Job, RunState
from launcher.procs.group import Ladder, spawn_group, stop_group
from launcher.procs.hidden import child_handover
from launcher.state import private_dir, private_opener

STOP_GRACE_S = 15.0
"""How long a stopped worker gets to close its session (its stdio shutdowns are bounded)."""
KILL_WAIT_S = 2.0
"""After SIGKILL, how long to wait for the kernel to report the worker gone."""
WORKER_LADDER = Ladder(eof_grace_s=STOP_GRACE_S, term_grace_s=KILL_WAIT_S, sweep_s=0.3)
"""A worker ends its own session on stdin EOF; only a stuck one meets TERM and KILL."""
EXPIRED_MEMORY = 4096
"""How many dropped ids serve still recognises, to say "expired" rather than "unknown"."""
KILL_LADDER = Ladder(eof_grace_s=0.0, term_grace_s=KILL_WAIT_S, sweep_s=0.3)
"""A worker that did not stop in time: straight to TERM, then KILL (its watchdog ends
its servers)."""


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
        no_lock: bool = False,
    ) -> None:
        self._tg = tg
        self._no_lock = no_lock
        self._config_dir = config_dir
        self._workspace = workspace
        self._logs = state_home / "serve"
        self._default_model = default_model
        self._limiter = anyio.CapacityLimiter(max_concurrent)
        self.agents: dict[str, SubAgent] = {}
        self.expired: OrderedDict[str, None] = OrderedDict()
        """Ids dropped after their ttl (bounded: only the latest EXPIRED_MEMORY)."""

    def spawn(
        self,
        prompt: str,
        *,
        agent: str,
        ext: list[str],
        model: str | None,
        max_turns: int | None,
        workspace: Path | None = None,
        resume: str | None = None,
    ) -> SubAgent:
        """Queue a sub-agent (a stored session's continuation with `resume`); it runs as soon
        as a slot is free."""
        entry = SubAgent(id=f"sa-{secrets.token_hex(4)}", agent=agent)
        self.agents[entry.id] = entry
        job = Job(
            prompt=prompt,
            agent=agent,
            ext=ext,
            model=model or self._default_model,
            max_turns=max_turns,
            config_dir=str(self._config_dir) if self._config_dir else None,
            workspace=str(workspace or self._workspace),
            no_lock=self._no_lock,
            resume=resume,
        )
        self._tg.start_soon(self._run, entry, job, name=f"subagent:{entry.id}")
        return entry

    def get(self, agent_id: str) -> SubAgent | None:
        return self.agents.get(agent_id)

    def forget(self, agent_id: str) -> None:
        """Drop an ended sub-agent and its result (a task whose ttl has passed)."""
        self.agents.pop(agent_id, None)
        self.expired[agent_id] = None
        while len(self.expired) > EXPIRED_MEMORY:
            self.expired.popitem(last=False)

    async def steer(self, entry: SubAgent, message: str) -> None:
        """Deliver `message` at the sub-agent's next turn boundary."""
        await self._send(entry, protocol.steer(message))

    async def stop(self, entry: SubAgent) -> None:
        """Stop the sub-agent and wait until its worker (and so its servers) is gone."""
        entry.stop_requested = True
        if entry.process is None and entry.status == "queued":
            entry.status = "stopped"
            entry.done.set()
            return
        await self._send(entry, protocol.stop())
        with anyio.move_on_after(STOP_GRACE_S):
            await entry.done.wait()
        if not entry.done.is_set() and entry.process is not None:
            # It did not stop in time: end it (its watchdog then ends its servers).
            with anyio.CancelScope(shield=True):
                await stop_group(entry.process, KILL_LADDER)
            with anyio.move_on_after(KILL_WAIT_S):
                await entry.done.wait()
        if entry.status not in FINAL:
            entry.status = "stopped"

    async def _send(self, entry: SubAgent, message: dict[str, Any]) -> None:
        if entry.status in FINAL:
            return
        if entry.process is None or entry.process.stdin is None:
            entry.pending.append(message)
            return
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await entry.process.stdin.send(protocol.encode(message))

    async def _run(self, entry: SubAgent, job: Job) -> None:
        try:
            async with self._limiter:
                if entry.stop_requested:
                    entry.status = "stopped"
                    return
                entry.status = "running"
                await self._drive(entry, job)
        except Exception as exc:
            # One sub-agent's failure (e.g. its workspace vanished) must not end serve.
            entry.status = "error"
            entry.error = f"worker failed: {type(exc).__name__}: {exc}"
        finally:
            if entry.status not in FINAL:
                if entry.stop_requested:
                    entry.status, entry.error = "stopped", None
                else:
                    entry.status = "error"
                    entry.error = entry.error or "worker ended without a final status"
            entry.done.set()

    async def _drive(self, entry: SubAgent, job: Job) -> None:
        await drive_worker(entry, job, log_path=self._logs / f"{entry.id}.log")


async def drive_worker(entry: SubAgent, job: Job, *, log_path: Path) -> None:
    """Run `job` in a worker process, folding its events into `entry`; the worker always ends.

    What was queued for `entry` before the worker existed is sent right after the job.
    """
    private_dir(log_path.parent)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    with os.fdopen(private_opener(str(log_path), flags), "ab") as errlog:
        # The worker's environment block holds no secret (the model's shell could read
        # it); they reach it over a descriptor it reads at start (procs/hidden.py).
        env, handover = child_handover()
        try:
            # Its own group: a signal meant for serve's group must not cut a worker's
            # shutdown short; serve ends its workers itself.
            process = await spawn_group(
                # -P: the user's workspace (the cwd) must not shadow our own packages.
                [sys.executable, "-P", "-m", "launcher.backend.worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errlog,
                cwd=job.workspace,
                env=env,
                pass_fds=(handover,),
            )
        finally:
            os.close(handover)
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
            buffer = b""
            async for chunk in process.stdout:
                buffer += chunk
                *complete, buffer = buffer.split(b"\n")
                for raw in complete:
                    event = protocol.decode(raw)
                    if event is not None:
                        entry.observe(event)
                        for watch in entry.watchers:
                            watch(event)
        finally:
            with anyio.CancelScope(shield=True):
                await stop_group(process, WORKER_LADDER)
            if entry.status not in FINAL:
                entry.error = f"worker exited unexpectedly (status {process.returncode})"
