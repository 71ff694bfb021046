"""Callers as subjects the pool and the task store know: a caller reaches only its own
sub-agents, tasks and expired ids; a draining pool refuses new sub-agents; a run waiting
for its host shows `input_required` in both Tasks eras."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from launcher.backend.pool import SubAgent, SubagentManager
from launcher.backend.tasks.store import TaskStore
from launcher.backend.tasks.v2025_11_25 import status_v1
from launcher.backend.tasks.v2026_07_28 import status_v2, task_v2
from launcher.errors import RunError


def _manager(tg: anyio.abc.TaskGroup | None, tmp_path: Path) -> SubagentManager:
    return SubagentManager(
        tg,  # type: ignore[arg-type]
        config_dir=None,
        workspace=tmp_path,
        state_home=tmp_path,
        default_model=None,
        max_concurrent=1,
        spare_workers=0,
    )


def test_a_caller_gets_only_its_own_sub_agents_and_expired_ids(tmp_path: Path) -> None:
    manager = _manager(None, tmp_path)
    mine = SubAgent(id="sa-a", agent="x", caller="alice")
    manager.agents[mine.id] = mine
    assert manager.get("sa-a", "alice") is mine
    assert manager.get("sa-a", "bob") is None
    assert manager.get("sa-a") is None  # the stdio host is no caller of the HTTP ones
    manager.forget("sa-a")
    assert manager.has_expired("sa-a", "alice")
    assert not manager.has_expired("sa-a", "bob")
    assert manager.owner_of("alice").caller == "alice"
    assert manager.owner_of("alice").serve == manager.owner.serve


@pytest.mark.anyio
async def test_a_draining_pool_refuses_new_sub_agents(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        manager = _manager(tg, tmp_path)
        queued = SubAgent(id="sa-q", agent="x")
        manager.agents[queued.id] = queued
        await manager.drain()
        assert queued.done.is_set() and queued.status == "stopped"
        with pytest.raises(RunError, match="shutting down"):
            manager.spawn("go", agent="x", ext=[], model=None, max_turns=None)
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_the_task_store_shows_a_caller_only_its_own_tasks(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        store = TaskStore(_manager(tg, tmp_path), tg)
        store.create(SubAgent(id="sa-a", agent="x", caller="alice"), None)
        store.create(SubAgent(id="sa-b", agent="x", caller="bob"), None)
        assert store.get("sa-a", "alice").task_id == "sa-a"
        with pytest.raises(MCPError) as theirs:
            store.get("sa-a", "bob")
        with pytest.raises(MCPError) as nobodys:
            store.get("sa-zz", "bob")
        assert str(theirs.value).replace("sa-a", "X") == str(nobodys.value).replace("sa-zz", "X")
        assert [r.task_id for r in store.page(None, "bob")[0]] == ["sa-b"]
        tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_a_run_waiting_for_its_host_is_input_required_in_both_eras(tmp_path: Path) -> None:
    async with anyio.create_task_group() as tg:
        store = TaskStore(_manager(tg, tmp_path), tg)
        entry = SubAgent(id="sa-w", agent="x", status="running")
        entry.inputs.can_ask = True
        record = store.create(entry, None)
        request = {"method": "elicitation/create", "params": {"message": "Name?"}}
        await entry.inputs.offer("in-1", request, tg)
        assert status_v1(entry) == status_v2(entry) == "input_required"
        shown = task_v2(record)
        assert shown["inputRequests"] == {"in-1": request}
        assert "result" not in shown
        await entry.inputs.answer("in-1", {"action": "decline"})
        assert status_v1(entry) == status_v2(entry) == "working"
        assert "inputRequests" not in task_v2(record)
        tg.cancel_scope.cancel()
