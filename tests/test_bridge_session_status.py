"""Session.status() is read from the session's own event stream (server_state and
tools_changed), not from connection internals: a connection that only emits events and
reports tools is described exactly as its events say."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from launcher.config.types import AgentSpec, ServerSpec
from launcher.events import EventSink, ServerState
from launcher.run_plan import RunPlan
from launcher.session import ServerStatus, Session
from launcher.toolset.types import ToolDef

pytestmark = pytest.mark.anyio

LIMIT_S = 5.0


class EventsOnlyConnection:
    """Has no state, tool count or error of its own: everything it says goes out as events."""

    def __init__(
        self,
        spec: ServerSpec,
        *,
        on_tools: Callable[[list[ToolDef]], Awaitable[None]],
        emit: EventSink,
        **_: Any,
    ) -> None:
        self.spec = spec
        self.ready = anyio.Event()
        self.done = anyio.Event()
        self._on_tools = on_tools
        self._emit = emit
        self._closing = anyio.Event()

    def close(self) -> None:
        self._closing.set()

    async def run(self) -> None:
        name = self.spec.name
        await self._emit(ServerState(server=name, state="starting"))
        if name == "bad":
            await self._emit(ServerState(server=name, state="failed", error="it broke"))
        else:
            await self._on_tools([ToolDef("a"), ToolDef("b")])
            await self._emit(ServerState(server=name, state="connected", tools=2))
            await self._on_tools([ToolDef("a"), ToolDef("b"), ToolDef("late")])
        self.ready.set()
        await self._closing.wait()
        await self._emit(ServerState(server=name, state="closed"))
        self.done.set()


async def test_status_follows_server_state_and_tools_changed_events(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/mcp"
    servers = {
        name: ServerSpec(name=name, type="http", url=url) for name in ("good", "bad", "idle")
    }
    agent = AgentSpec(name="t", extensions=("good", "bad"))
    plan = RunPlan(agent, servers, workspace=tmp_path, state_home=tmp_path)
    session = Session(plan, connect=EventsOnlyConnection)

    async def body(s: Session) -> dict[str, ServerStatus]:
        return s.status()

    with anyio.fail_after(LIMIT_S):
        during = await session.run(body)

    assert during == {
        "good": ServerStatus("connected", 3),  # the late tool counts: tools_changed says so
        "bad": ServerStatus("failed", 0, "it broke"),
        "idle": ServerStatus("not_started"),
    }
    assert session.status()["good"] == ServerStatus("closed", 3)
