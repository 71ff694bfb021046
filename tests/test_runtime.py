"""The process's state lives in a Runtime: a run's plan carries the one its session uses,
and a fresh one knows nothing another learned."""

from __future__ import annotations

from pathlib import Path

import pytest

from launcher import runtime as runtimes
from launcher.assemble import assemble_session
from launcher.config.types import AgentSpec
from launcher.events import AgentStart, SessionEnd, SessionStart
from launcher.run_plan import RunPlan, StoreSettings
from launcher.runtime import Runtime
from launcher.secrets import MASK, LiveMask, note_secrets, process_secrets

TOKEN = "learned-token-0123456789"


@pytest.mark.anyio
async def test_a_session_s_store_writer_uses_its_plan_s_runtime(
    tmp_path: Path, runtime: Runtime
) -> None:
    own = Runtime()
    home = tmp_path / "home"
    plan = RunPlan(
        AgentSpec(name="t"),
        {},
        workspace=tmp_path,
        state_home=home,
        store=StoreSettings(),
        runtime=own,
    )
    session = assemble_session(plan)
    for event in (SessionStart(agent="t", session_id="s-1"), AgentStart(model="scripted:x")):
        await session.bus.emit(event)

    assert list(own.store.connections) == [home]
    assert runtime.store.connections == {}  # the installed one was never asked
    await session.bus.emit(SessionEnd())


def test_a_plan_made_without_one_takes_the_installed_runtime(
    tmp_path: Path, runtime: Runtime
) -> None:
    plan = RunPlan(AgentSpec(name="t"), {}, workspace=tmp_path, state_home=tmp_path)
    assert plan.runtime is runtime


def test_a_fresh_runtime_knows_nothing_another_learned(runtime: Runtime) -> None:
    note_secrets([TOKEN])
    mask = LiveMask()
    assert TOKEN in process_secrets({}) and mask.text(TOKEN) == MASK

    previous = runtimes.install(Runtime())
    try:
        assert TOKEN not in process_secrets({})
        assert mask.text(TOKEN) == TOKEN  # a live mask follows the installed runtime
    finally:
        runtimes.install(previous)
    assert mask.text(TOKEN) == MASK
