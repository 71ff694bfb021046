"""A sub-agent in its own OS process, driven by `subagent serve`.

Protocol (JSON lines): the first stdin line is the job; later stdin lines are control
messages (`{"op": "steer", "message": ...}`, `{"op": "stop"}`); stdout carries the
session's event stream. Stdin EOF means the driver is gone: the agent stops and the
session closes, so the worker's servers never outlive its driver.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from launcher.events import AgentEnd, Event, EventBus, SessionEnd


@dataclass
class Job:
    """What to run: the arguments of `spawn_subagent`, plus where config lives."""

    prompt: str
    agent: str = "general-purpose"
    ext: list[str] = field(default_factory=list)
    model: str | None = None
    max_turns: int | None = None
    config_dir: str | None = None
    workspace: str = "."

    @classmethod
    def from_json(cls, line: str) -> Job:
        data = json.loads(line)
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


class Control:
    """Steer/stop messages that arrive before or during the run reach the loop.

    A stop also cuts the session's start-up short: a worker told to stop while its
    servers are still connecting must not wait for their start-up timeouts.
    """

    def __init__(self) -> None:
        self.loop: Any = None
        self.session: Any = None
        self.pending: list[dict[str, Any]] = []

    def attach(self, loop: Any) -> None:
        self.loop = loop
        for message in self.pending:
            self.apply(message)
        self.pending.clear()

    def apply(self, message: dict[str, Any]) -> None:
        if self.loop is None:
            self.pending.append(message)
        elif message.get("op") == "steer":
            self.loop.steer(str(message.get("message", "")))
        elif message.get("op") == "stop":
            self.loop.stop()
            if self.session is not None:
                self.session.abort_start()


def _emit_line(event: Event) -> None:
    try:
        sys.stdout.write(event.to_json() + "\n")
        sys.stdout.flush()
    except (OSError, ValueError):
        pass  # the driver is gone; stdin EOF will stop the run


async def _read_control(control: Control) -> None:
    while True:
        line = await anyio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
        if not line:
            control.apply({"op": "stop"})
            return
        try:
            control.apply(json.loads(line))
        except (ValueError, AttributeError):
            continue


async def run_job(job: Job) -> str:
    """Run one job to its end, events to stdout; returns the final status."""
    from launcher.assemble import spawn_agent
    from launcher.config.discovery import check_ext_names, load_config, resolve_agent
    from launcher.session import Session
    from launcher.state import state_home

    bus = EventBus()

    async def sink(event: Event) -> None:
        _emit_line(event)

    bus.subscribe(sink)
    workspace = Path(job.workspace)
    control = Control()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_read_control, control)
        try:
            config = load_config(Path(job.config_dir) if job.config_dir else None, cwd=workspace)
            agent = resolve_agent(config, job.agent)
            check_ext_names(config, job.ext)
            session = Session(
                agent,
                config.servers,
                ext=job.ext,
                workspace=workspace,
                state_home=state_home(),
                bus=bus,
            )
            control.session = session
            status = await spawn_agent(
                session,
                job.prompt,
                model=job.model,
                max_turns=job.max_turns,
                on_loop=control.attach,
            )
        except Exception as exc:  # config, model or server errors end this job, not serve
            status = "error"
            await bus.emit(AgentEnd(status="error", error=str(exc)))
            await bus.emit(SessionEnd(error=str(exc)))
        tg.cancel_scope.cancel()
    return status


def main() -> None:
    """Entry point: `python -m launcher.backend.worker` with the job on stdin."""
    first = sys.stdin.readline()
    if not first:
        os._exit(2)
    try:
        job = Job.from_json(first)
        job.workspace = str(Path(job.workspace).resolve())
    except (ValueError, TypeError) as exc:
        _emit_line(AgentEnd(status="error", error=f"bad job: {exc}"))
        os._exit(2)
    anyio.run(run_job, job)
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
    # Skip the interpreter's slow SDK teardown; every session resource is closed.
    os._exit(0)


if __name__ == "__main__":
    main()
