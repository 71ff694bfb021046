"""What every engine shares: a batch task, its end, and the Engine interface.

An engine runs one task to its end in a worker process somewhere (this machine, a Ray
node) and is entered once around a batch (to start and stop what it needs). Fan-out,
the results file and progress live in batch.py, so a new engine is one new file.
"""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any, Protocol

from launcher.backend.protocol import Job, RunState
from launcher.events import RunStatus
from launcher.telemetry import traces


@dataclass(frozen=True)
class BatchTask:
    """One input line of TASKS.jsonl, checked; `line` is its 1-based line number."""

    id: str
    prompt: str
    line: int
    agent: str = "general-purpose"
    ext: tuple[str, ...] = ()
    model: str | None = None
    workspace: str | None = None
    isolation: str | None = None
    limits: dict[str, Any] = field(default_factory=dict)
    """The task's own limits (`max_tokens`, ...): over the batch's options."""

    def job(self, options: EngineOptions) -> Job:
        """The worker job for this task (its own workspace, model and isolation win over
        the batch's); its worktree branch, if any, is named after its id, and its trace
        links to the batch's span."""
        return Job(
            prompt=self.prompt,
            agent=self.agent,
            ext=list(self.ext),
            model=self.model or options.model,
            config_dir=options.config_dir,
            workspace=self.workspace or options.workspace,
            isolation=self.isolation or options.isolation,
            label=self.id,
            trace_link=traces().carrier(),  # the batch's span, current in its task
            limits={**options.limits, **{k: v for k, v in self.limits.items() if v is not None}},
        )


@dataclass
class TaskEnd:
    """One output line of RESULTS.jsonl."""

    id: str
    status: RunStatus
    result: str = ""
    usage: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0
    session_id: str | None = None
    error: str | None = None
    worktree: dict[str, Any] | None = None
    """An isolated task's branch and diff stat (the key is left out when not isolated)."""

    @classmethod
    def from_state(cls, task_id: str, state: RunState, duration_s: float) -> TaskEnd:
        status = state.status if state.final else RunStatus.ERROR
        return cls(
            id=task_id,
            status=status,
            result=state.result,
            usage=state.usage,
            duration_s=round(duration_s, 3),
            session_id=state.session_id,
            error=state.error,
            worktree=state.worktree,
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if data["worktree"] is None:
            del data["worktree"]
        return data


def log_name(task_id: str) -> str:
    """A file name for a task's worker log that any id maps to safely and uniquely."""
    digest = hashlib.sha256(task_id.encode()).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in task_id)[:40]
    return f"{safe}-{digest}.log"


class Engine(Protocol):
    """Runs tasks; `async with engine:` brackets a batch; cancelling `run` cancels the task."""

    name: str

    async def __aenter__(self) -> Engine: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...

    async def run(self, task: BatchTask) -> TaskEnd:
        """Run `task` to its end in its own worker process; failures are a TaskEnd."""
        ...

    def total_tasks(self, count: int) -> None:
        """The input is read to its end: `run` is called `count` times in all this batch."""
        ...


@dataclass(frozen=True)
class EngineOptions:
    """What the command line says about where tasks run."""

    config_dir: str | None
    workspace: str
    model: str | None
    address: str | None = None
    num_cpus: float = 1.0
    max_retries: int = 1
    jobs: int = 1
    """Tasks at once (`--jobs`); the local engine keeps as many workers started ahead."""
    isolation: str | None = None
    """`--isolation`: the default for tasks that do not name their own."""
    verbose: bool = False
    """`--verbose`: the engine's own log lines (Ray's) on the terminal, not in a file."""
    limits: dict[str, Any] = field(default_factory=dict)
    """`--max-tokens`, `--max-cost`, `--timeout`, `--idle-timeout`: tasks' defaults."""
