"""The Tasks bookkeeping of serve without processes: ttl grant, status per era, paging,
and the bounded memory of expired ids."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import MCPError
from mcp_types import INVALID_PARAMS

from launcher.backend.pool import SubAgent, SubagentManager
from launcher.backend.protocol import Job
from launcher.backend.tasks.store import (
    DEFAULT_TTL_MS,
    LIST_PAGE_SIZE,
    MAX_TTL_MS,
    TaskRecord,
    TaskStore,
    clamp_ttl,
)
from launcher.backend.tasks.v2025_11_25 import status_v1, task_v1
from launcher.backend.tasks.v2026_07_28 import status_v2
from launcher.events import RunStatus


def test_ttl_is_defaulted_and_capped() -> None:
    assert clamp_ttl(None) == DEFAULT_TTL_MS
    assert clamp_ttl(0) == DEFAULT_TTL_MS
    assert clamp_ttl(1_500) == 1_500
    assert clamp_ttl(MAX_TTL_MS * 10) == MAX_TTL_MS


@pytest.mark.parametrize(
    ("status", "v1", "v2"),
    [
        ("completed", "completed", "completed"),
        ("max_turns", "completed", "completed"),
        ("error", "failed", "completed"),  # 2026-07-28: an isError result, not a fault
        ("stopped", "cancelled", "cancelled"),
    ],
)
def test_an_ended_run_maps_to_each_eras_status(status: str, v1: str, v2: str) -> None:
    entry = SubAgent(id="sa-1", agent="a", status=status)
    assert status_v1(entry) == status_v2(entry) == "working"  # not ended yet
    entry.done.set()
    assert (status_v1(entry), status_v2(entry)) == (v1, v2)


def _manager(tg: anyio.abc.TaskGroup, tmp_path: Path, **bounds: int) -> SubagentManager:
    return SubagentManager(
        tg,
        config_dir=None,
        workspace=tmp_path,
        state_home=tmp_path,
        default_model=None,
        max_concurrent=1,
        spare_workers=0,  # bookkeeping only: no worker process
        **bounds,
    )


def _registered(manager: SubagentManager, agent_id: str, status: str) -> SubAgent:
    """A sub-agent the manager knows, without a worker."""
    entry = SubAgent(id=agent_id, agent="a", status=status)
    manager.agents[entry.id] = entry
    return entry


@pytest.mark.anyio
async def test_an_ended_task_is_dropped_after_its_ttl_and_remembered_as_expired(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            manager = _manager(tg, tmp_path)
            store = TaskStore(manager, tg)
            entry = _registered(manager, "sa-ended", "completed")
            running = _registered(manager, "sa-running", "running")
            seen: list[str] = []
            dropped = anyio.Event()
            forget = manager.forget

            def forget_and_tell(agent_id: str) -> None:
                forget(agent_id)
                dropped.set()

            manager.forget = forget_and_tell  # type: ignore[method-assign]

            async def notify(record: TaskRecord) -> None:
                seen.append(record.task_id)

            store.create(entry, 1, notify)
            store.create(running, 1)
            entry.done.set()
            await dropped.wait()
            assert entry.id not in store.records
            assert seen == [entry.id]
            assert manager.get(entry.id) is None
            assert entry.id in manager.expired
            with pytest.raises(MCPError, match="dropped after its ttl"):
                store.get(entry.id)
            # Past its ttl but still running: kept.
            await anyio.sleep(0.05)
            assert store.get(running.id).entry is running
            tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_list_pages_and_rejects_a_foreign_cursor(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        store = TaskStore(_manager(tg, tmp_path), tg)
        for n in range(LIST_PAGE_SIZE + 1):
            store.create(SubAgent(id=f"sa-{n}", agent="a"), None)
        first, cursor = store.page(None)
        assert len(first) == LIST_PAGE_SIZE and cursor is not None
        rest, end = store.page(cursor)
        assert [r.task_id for r in rest] == [f"sa-{LIST_PAGE_SIZE}"] and end is None
        for foreign in ("not-ours", "-1", "+5", " 5"):
            with pytest.raises(MCPError, match="invalid cursor") as bad:
                store.page(foreign)
            assert bad.value.code == INVALID_PARAMS
        tg.cancel_scope.cancel()


def test_expired_ids_are_remembered_up_to_a_bound(tmp_path: Path) -> None:
    # forget needs no task group
    manager = _manager(None, tmp_path, expired_memory=3)  # type: ignore[arg-type]
    for n in range(5):
        manager.forget(f"sa-{n}")
    assert list(manager.expired) == ["sa-2", "sa-3", "sa-4"]


@pytest.mark.anyio
async def test_a_cancelled_legacy_task_stays_cancelled_when_the_run_ends_as_the_stop_lands(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            manager = _manager(tg, tmp_path)
            store = TaskStore(manager, tg)
            entry = _registered(manager, "sa-race", "running")
            announced: list[str] = []
            told = anyio.Event()

            async def notify(record: TaskRecord) -> None:
                announced.append(task_v1(record)["status"])
                told.set()

            async def final_answer_first(target: SubAgent) -> None:
                # The worker's final answer arrives before the stop reaches it.
                target.status, target.result = RunStatus.COMPLETED, "done anyway"
                target.done.set()

            manager.stop = final_answer_first  # type: ignore[method-assign]
            record = store.create(entry, None, notify)
            await store.cancel(record)
            assert task_v1(record)["status"] == "cancelled"
            await told.wait()
            assert announced == ["cancelled"]
            with pytest.raises(MCPError, match="has ended") as again:
                await store.cancel(record)
            assert again.value.code == INVALID_PARAMS
            tg.cancel_scope.cancel()


class _InstantWorkers(SubagentManager):
    """Workers that answer at once: the manager's retention is under test, not the worker."""

    async def _drive(self, entry: SubAgent, job: Job) -> None:
        entry.status, entry.result = RunStatus.COMPLETED, f"answer of {entry.id}"


@pytest.mark.anyio
async def test_ended_plain_subagents_are_kept_up_to_a_bound_and_tasks_by_their_ttl(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            manager = _InstantWorkers(
                tg,
                config_dir=None,
                workspace=tmp_path,
                state_home=tmp_path,
                default_model=None,
                max_concurrent=1,
                spare_workers=0,
                keep_ended=2,
            )
            store = TaskStore(manager, tg)

            def spawn() -> SubAgent:
                return manager.spawn("go", agent="a", ext=[], model=None, max_turns=None)

            task = spawn()
            store.create(task, None)
            plain = [spawn() for _ in range(4)]
            for entry in (task, *plain):
                await entry.done.wait()
            # The two oldest plain runs are dropped (and known as expired); the rest stay.
            assert [e.id for e in plain if manager.get(e.id) is e] == [e.id for e in plain[2:]]
            assert [e.id for e in plain if e.id in manager.expired] == [e.id for e in plain[:2]]
            # A task is kept by its ttl (an hour here), whatever the plain runs' bound.
            assert manager.get(task.id) is task
            assert store.get(task.id).entry is task
            tg.cancel_scope.cancel()
