"""MCP Tasks on top of the sub-agent manager: a task id IS a sub-agent id.

The store is era-neutral: it keeps each task's creation time, ttl and whom to tell of a
change; the wire shapes of each protocol era live in v2025_11_25.py (core Tasks) and
v2026_07_28.py (the 2026-07-28 `io.modelcontextprotocol/tasks` extension). A task's record
and its sub-agent are dropped together once the run has ended and its ttl has passed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from mcp import MCPError
from mcp_types import INVALID_PARAMS

from launcher.backend.inputs import first_of
from launcher.backend.pool import SubAgent, SubagentManager
from launcher.events import RunStatus

DEFAULT_TTL_MS = 3_600_000
"""Retention when neither host nor `serve --task-ttl` names one: an hour gives a host time
to come back for a long run."""
MAX_TTL_MS = 86_400_000
"""The most serve keeps any task (a day), whatever the host asks: memory stays bounded."""
POLL_INTERVAL_MS = 1_000
"""Suggested polling interval: a sub-agent's turn takes seconds, finer polling buys nothing."""
LIST_PAGE_SIZE = 100
"""Tasks per `tasks/list` page."""

Notify = Callable[["TaskRecord"], Awaitable[None]]
"""Tells one party that a task changed (best effort; a gone host must not end serve)."""


def _now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """ISO 8601 with milliseconds and a Z, as the Tasks examples write it."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(eq=False)
class TaskRecord:
    """One task: its sub-agent plus the Tasks bookkeeping (times, ttl, who to notify)."""

    entry: SubAgent
    ttl_ms: int
    created: datetime = field(default_factory=_now)
    updated: datetime = field(default_factory=_now)
    deadline: float = 0.0
    """anyio clock time after which the ended task may be dropped."""
    notify: Notify | None = None
    """The creating connection's notifier (the 2025-11-25 era's status notifications)."""
    cancel_requested: bool = False
    """Set by `tasks/cancel` before the stop: the 2025-11-25 era keeps such a task
    `cancelled` even if the run finished while the stop was on its way."""

    @property
    def task_id(self) -> str:
        return self.entry.id

    @property
    def ended(self) -> bool:
        return self.entry.done.is_set()

    @property
    def waiting(self) -> bool:
        """The run waits for its host's answer to an input request."""
        return not self.ended and bool(self.entry.inputs.pending)

    def status_message(self) -> str | None:
        """A line for humans: the error of a failed run, else where the run is."""
        entry = self.entry
        if entry.error:
            return entry.error
        if self.waiting:
            return "waiting for the host's input"
        if not self.ended:
            return f"{entry.status}, turn {entry.turns}" if entry.turns else entry.status
        return entry.status

    def base(self) -> dict[str, Any]:
        """The wire fields both eras share (camelCase)."""
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "createdAt": iso(self.created),
            "lastUpdatedAt": iso(self.updated),
        }
        message = self.status_message()
        if message:
            out["statusMessage"] = message
        return out


def run_result(entry: SubAgent) -> types.CallToolResult:
    """A run's answer as `spawn_subagent` returns it; not `completed` reads "[status: why] ...".

    Only an `error` run is an error result; `max_turns` and `stopped` still carry what
    the agent said.
    """
    snapshot = entry.snapshot()
    if entry.status.ok:
        text = entry.result
    else:
        why = f": {entry.error}" if entry.error else ""
        text = f"[{entry.status}{why}] {entry.result}"
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        structured_content=snapshot,
        is_error=entry.status is RunStatus.ERROR,
    )


def clamp_ttl(requested_ms: int | None, default_ms: int = DEFAULT_TTL_MS) -> int:
    """The ttl serve grants: the host's wish, else the default; capped (never unbounded)."""
    if requested_ms is None or requested_ms <= 0:
        requested_ms = default_ms
    return max(1, min(int(requested_ms), MAX_TTL_MS))


def unknown_task(task_id: str) -> MCPError:
    """The error for an id serve does not (or no longer) know."""
    return MCPError(
        INVALID_PARAMS,
        f"unknown task '{task_id}': never created here, or dropped after its ttl",
    )


class TaskStore:
    """The tasks of one serve process; follows each run to notify its end and drop it later."""

    def __init__(
        self,
        manager: SubagentManager,
        tg: anyio.abc.TaskGroup,
        *,
        default_ttl_ms: int | None = None,
    ) -> None:
        self.manager = manager
        self._tg = tg
        self.default_ttl_ms = default_ttl_ms or DEFAULT_TTL_MS
        self.records: dict[str, TaskRecord] = {}
        self._listeners: set[Notify] = set()

    def create(
        self, entry: SubAgent, ttl_ms: int | None, notify: Notify | None = None
    ) -> TaskRecord:
        """Make `entry` a task; its ttl runs from now, but it is never dropped while running."""
        entry.task = True  # its ttl, not the plain runs' bound, decides when it is dropped
        granted = clamp_ttl(ttl_ms, self.default_ttl_ms)
        record = TaskRecord(entry=entry, ttl_ms=granted, notify=notify)
        record.deadline = anyio.current_time() + record.ttl_ms / 1000
        self.records[entry.id] = record
        self._tg.start_soon(self._follow, record, name=f"task:{entry.id}")
        return record

    def get(self, task_id: str, caller: str | None = None) -> TaskRecord:
        """`caller`'s live record of `task_id`, or the protocol error for an unknown or
        expired one (another caller's task reads as unknown)."""
        record = self.records.get(task_id)
        if record is None or record.entry.caller != caller:
            raise unknown_task(task_id)
        return record

    def page(
        self, cursor: str | None, caller: str | None = None
    ) -> tuple[list[TaskRecord], str | None]:
        """One `tasks/list` page of `caller`'s tasks, oldest first; the cursor is an offset
        serve wrote."""
        if cursor and not cursor.isdigit():
            # Not an offset serve wrote (int() would also take "-1", slicing from the end).
            raise MCPError(INVALID_PARAMS, f"invalid cursor '{cursor}'")
        start = int(cursor) if cursor else 0
        mine = [r for r in self.records.values() if r.entry.caller == caller]
        ordered = sorted(mine, key=lambda r: r.created)
        chunk = ordered[start : start + LIST_PAGE_SIZE]
        more = start + LIST_PAGE_SIZE < len(ordered)
        return chunk, str(start + LIST_PAGE_SIZE) if more else None

    def subscribe(self, listener: Notify) -> Callable[[], None]:
        """Tell `listener` of every task change until the returned callable is called."""
        self._listeners.add(listener)
        return lambda: self._listeners.discard(listener)

    async def cancel(self, record: TaskRecord) -> None:
        """Stop the task's sub-agent; returns once its worker (and so its servers) is gone."""
        if record.ended:
            raise MCPError(
                INVALID_PARAMS,
                f"cannot cancel task '{record.task_id}': it has ended ({record.entry.status})",
            )
        record.cancel_requested = True
        await self.manager.stop(record.entry)
        await record.entry.done.wait()

    async def _follow(self, record: TaskRecord) -> None:
        entry, waiting = record.entry, False
        while not entry.done.is_set():
            # Waiting for the host's input is a status of its own in both eras: told.
            changed = entry.inputs.changed
            if bool(entry.inputs.pending) != waiting:
                waiting = not waiting
                record.updated = _now()
                await self._announce(record)
            await first_of(entry.done, changed)
        record.updated = _now()
        await self._announce(record)
        await anyio.sleep(max(0.0, record.deadline - anyio.current_time()))
        self.records.pop(record.task_id, None)
        self.manager.forget(record.task_id)

    async def _announce(self, record: TaskRecord) -> None:
        targets = [record.notify] if record.notify else []
        for notify in [*targets, *self._listeners]:
            # One host that went away must neither end serve nor starve the others.
            with contextlib.suppress(Exception):
                await notify(record)
