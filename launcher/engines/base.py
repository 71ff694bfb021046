"""What every engine shares: a batch task, its end, and the Engine interface.

An engine runs one task to its end in a worker process somewhere (this machine, a Ray
node) and is entered once around a batch (to start and stop what it needs). Fan-out,
the results file and progress live in batch.py, so a new engine is one new file.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from types import TracebackType
from typing import Any, Protocol

from launcher.backend.protocol import Job, RunState
from launcher.events import RunStatus


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

    def job(self, *, config_dir: str | None, workspace: str, model: str | None) -> Job:
        """The worker job for this task (its own workspace and model win over the batch's)."""
        return Job(
            prompt=self.prompt,
            agent=self.agent,
            ext=list(self.ext),
            model=self.model or model,
            config_dir=config_dir,
            workspace=self.workspace or workspace,
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
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def engine_factory(name: str) -> Callable[[EngineOptions], Engine]:
    """The engine class for `--engine NAME` (imported only when chosen)."""
    if name == "local":
        from launcher.engines.local import LocalEngine

        return LocalEngine
    if name == "ray":
        from launcher.engines.ray_engine import RayEngine

        return RayEngine
    from launcher.errors import UsageError

    raise UsageError(f"unknown engine '{name}' (choose local or ray)")
