"""Closing a session whose server is still starting ends it at once, reported `closed`."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from launcher.config.types import AgentSpec, ServerSpec
from launcher.events import Event, EventBus, ServerState
from launcher.run_plan import RunPlan
from launcher.session import Session
from tests.e2e.conftest import assert_all_gone, read_pid

pytestmark = pytest.mark.e2e


@pytest.mark.anyio
async def test_abort_start_closes_a_server_that_never_answers_without_its_timeout(
    tmp_path: Path,
) -> None:
    started = tmp_path / "mute.pid"
    mute = ServerSpec(
        name="mute",
        command="sh",
        args=("-c", f"echo $$ > {started}; exec sleep 300"),
        startup_timeout=60,  # far beyond the bound below: only a cut-short close passes
    )
    states: list[ServerState] = []

    async def record(event: Event) -> None:
        if isinstance(event, ServerState):
            states.append(event)

    bus = EventBus()
    bus.subscribe(record)
    session = Session(
        RunPlan(
            AgentSpec(name="a"), {"mute": mute}, workspace=tmp_path, state_home=tmp_path / "state"
        ),
        bus=bus,
        # Shielded close cannot be interrupted from here: make "waited out the grace period"
        # unmistakable (30 s) against "closed at once" (about a second).
        close_grace_s=30.0,
    )

    async def body(s: Session) -> str:
        return "ran"

    begun = anyio.current_time()
    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:

            async def abort_when_spawned() -> None:
                while not started.exists():  # noqa: ASYNC110 - a file has no event to wait on
                    await anyio.sleep(0.05)
                session.abort_start()

            tg.start_soon(abort_when_spawned)
            assert await session.run(body) == "ran"
    assert anyio.current_time() - begun < 15

    assert [s.state for s in states] == ["starting", "closed"]
    assert_all_gone([read_pid(started)], tmp_path)
