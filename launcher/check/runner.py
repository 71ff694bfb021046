"""Running checks: one session per check through `assemble_session`, `jobs` at once.

Each check's session waits for the ready barrier plus `settle`, then the surface (active
set, server states, system prompt) and any lock drift are judged; a check with `run:`
then runs its scripted agent in the same session, judged from the event stream.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from launcher.bridge.phase import ServerPhase
from launcher.check.cases import CheckCase
from launcher.check.expect import RunRecord, Surface, evaluate_run, evaluate_surface
from launcher.check.pins import load_lock, session_drift
from launcher.config.types import AgentSpec, Config
from launcher.errors import SubagentError
from launcher.events import (
    AgentEnd,
    Event,
    SessionEnd,
    SessionStart,
    ToolCallEvent,
    ToolResultEvent,
)

if TYPE_CHECKING:
    from launcher.session import Session


@dataclass
class CheckResult:
    """One check's outcome: its failures in order (empty = passed) and its session."""

    case: CheckCase
    failures: list[str] = field(default_factory=list)
    session_id: str | None = None
    started: float | None = None  # session_start / session_end event times
    ended: float | None = None
    duration_s: float = 0.0

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass
class Progress:
    """Counts for the live progress line."""

    total: int
    running: int = 0
    done: int = 0
    failed: int = 0


class _Recorder:
    """Reads a session's event stream: session times, and what its run did."""

    def __init__(self) -> None:
        self.started: float | None = None
        self.ended: float | None = None
        self.session_id: str | None = None
        self.run = RunRecord()

    async def __call__(self, event: Event) -> None:
        if isinstance(event, SessionStart):
            self.started, self.session_id = event.ts, event.session_id
        elif isinstance(event, SessionEnd):
            self.ended = event.ts
        elif isinstance(event, ToolCallEvent):
            self.run.calls.append(event.name)
        elif isinstance(event, ToolResultEvent) and event.is_error:
            self.run.errors.append(event.name)
        elif isinstance(event, AgentEnd):
            self.run.status, self.run.result = event.status, event.result


def server_failures(session: Session) -> list[str]:
    """Each started server that did not connect, with its error (its stderr tail)."""
    return [
        f"server '{name}' failed to start: {status.error or status.state}"
        for name, status in session.status().items()
        if status.state is ServerPhase.FAILED
    ]


def drift_failure(session: Session) -> list[str]:
    """One failure naming every tool that drifted from the agent's lock pin (if locked)."""
    drifts = session_drift(session)
    if not drifts:
        return []
    return ["lock drift: " + "; ".join(f"{d.tool} {d.kind} ({d.detail})" for d in drifts)]


def surface_of(session: Session) -> Surface:
    """The surface the model would get at the next turn."""
    from launcher.agent import system_prompt

    active = session.active()
    states = {name: str(status.state) for name, status in session.status().items()}
    return Surface(active, states, system_prompt(session.agent.prompt, session.offer().deferred))


async def run_case(config: Config, case: CheckCase, *, workspace: Path) -> CheckResult:
    """Run one check in its own session; run failures become check failures, never raise.

    A check that runs an agent with `isolation: worktree` runs it in a fresh worktree,
    as spawn would: a check must not edit the checkout its agent is isolated from.
    """
    import anyio

    from launcher.assemble import resolve_request
    from launcher.worktree import create_worktree, finish_worktree

    clock = time.monotonic()
    result = CheckResult(case)
    tree = None
    # Resolved once: the plan of a check that runs an agent is made from this one.
    agent = resolve_request(config, case.agent, case.ext) if case.expect.run is not None else None
    if agent is not None and agent.isolation:
        # Not a git repository: a usage error (exit 2), as for spawn.
        tree = await anyio.to_thread.run_sync(
            functools.partial(create_worktree, workspace, label=case.agent)
        )
    try:
        where = tree.workspace if tree else workspace
        await _run_case(config, agent or case.agent, case, result, workspace=where)
    finally:
        if tree is not None:
            with anyio.CancelScope(shield=True):
                await anyio.to_thread.run_sync(finish_worktree, tree)
    result.duration_s = time.monotonic() - clock
    return result


async def _run_case(
    config: Config,
    agent: AgentSpec | str,
    case: CheckCase,
    result: CheckResult,
    *,
    workspace: Path,
) -> None:
    import anyio

    from launcher.assemble import assemble_session, plan_run, run_agent
    from launcher.budget import Limits
    from launcher.run_plan import ModelChoice

    run = case.expect.run
    plan = plan_run(
        config,
        agent,
        ext=case.ext,
        workspace=workspace,
        model=ModelChoice(f"scripted:{run.script}") if run is not None else None,
        limits=Limits(max_turns=run.max_turns) if run is not None else None,
    )
    session = assemble_session(plan)
    recorder = _Recorder()
    session.bus.subscribe(recorder)

    async def observe(s: Session) -> None:
        await anyio.sleep(case.expect.settle)
        result.failures += server_failures(s)
        result.failures += drift_failure(s)
        result.failures += evaluate_surface(case.expect, surface_of(s))

    try:
        if run is None:
            await session.run(observe)
        else:
            await run_agent(session, run.prompt, before=observe)
            result.failures += evaluate_run(run, recorder.run)
    except SubagentError as exc:  # a required server or the model failed: the check fails
        result.failures.append(str(exc))
    result.session_id = recorder.session_id
    result.started, result.ended = recorder.started, recorder.ended


def preflight(config: Config, cases: Sequence[CheckCase]) -> None:
    """Raise what is bad config before any server starts: a broken script or lock file."""
    from launcher.models.scripted import load_script

    for case in cases:
        if case.expect.run is not None:
            load_script(case.expect.run.script)
    if config.lock_path is not None:
        load_lock(config.lock_path)


async def run_checks(
    config: Config,
    cases: Sequence[CheckCase],
    *,
    jobs: int,
    workspace: Path,
    on_change: Callable[[Progress], None] | None = None,
) -> list[CheckResult]:
    """Run every check, `jobs` sessions at once; results in the order of `cases`."""
    import anyio

    limiter = anyio.CapacityLimiter(jobs)
    results: list[CheckResult | None] = [None] * len(cases)
    progress = Progress(total=len(cases))

    async def one(index: int, case: CheckCase) -> None:
        async with limiter:
            progress.running += 1
            if on_change is not None:
                on_change(progress)
            outcome = await run_case(config, case, workspace=workspace)
            results[index] = outcome
            progress.running -= 1
            progress.done += 1
            progress.failed += 0 if outcome.passed else 1
            if on_change is not None:
                on_change(progress)

    async with anyio.create_task_group() as tg:
        for index, case in enumerate(cases):
            tg.start_soon(one, index, case)
    return [r for r in results if r is not None]
