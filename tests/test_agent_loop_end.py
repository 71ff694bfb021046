"""The agent loop ends every run with agent_end, whatever the model does or a stop asks."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import anyio
import pytest

from launcher.agent import AgentLoop
from launcher.events import AgentEnd, Event
from launcher.models.base import Message, ModelRequest, ModelResponse, ToolCall
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.types import NO_OFFER, Offer, ToolEntry, ToolResult


class Host:
    """A session stand-in with no tools; records events."""

    def __init__(self) -> None:
        self.registry = ToolRegistry()
        self.events: list[Event] = []

    def offer(self) -> Offer:
        return NO_OFFER

    def veto(self, name: str, offered: Collection[str], call_id: str = "") -> ToolEntry | str:
        return "no tools"

    async def emit(self, event: Event) -> None:
        self.events.append(event)


class BrokenModel:
    spec = "broken:model"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        raise ValueError("invalid literal for int() with base 10: 'n/a'")


@pytest.mark.anyio
async def test_unexpected_model_exception_ends_run_with_error_status() -> None:
    host = Host()
    end = await AgentLoop(host, BrokenModel()).run("hi")
    assert end.status == "error"
    assert end.error is not None
    assert "broken:model" in end.error
    assert "ValueError" in end.error
    ends: list[Any] = [e for e in host.events if isinstance(e, AgentEnd)]
    assert ends == [end]


class SlowModel:
    spec = "slow:model"

    async def complete(self, request: ModelRequest) -> ModelResponse:
        await anyio.sleep(3600)
        return ModelResponse(text="never")


@pytest.mark.anyio
async def test_stop_requested_before_the_run_began_is_honoured() -> None:
    host = Host()
    loop = AgentLoop(host, SlowModel())
    loop.stop()  # e.g. serve's stop_subagent while the worker's servers were starting
    with anyio.fail_after(5):
        end = await loop.run("hi")
    assert end.status == "stopped"


class Tools(Host):
    """A host with one real registry tool, `slow`, that records its calls."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[dict[str, Any]] = []

        async def slow(arguments: dict[str, Any]) -> ToolResult:
            self.calls.append(arguments)
            await anyio.sleep(3600)
            return ToolResult("never")

        self.registry.add_local([ToolEntry("ls", "builtin", "ls", "", {"type": "object"}, slow)])

    def offer(self) -> Offer:
        return self.registry.offer()

    def veto(self, name: str, offered: Collection[str], call_id: str = "") -> ToolEntry | str:
        entry = self.registry.get(name)
        return entry if entry is not None and name in offered else "not offered"


class CallingModel:
    """Asks for two calls of `ls` at once, without ever awaiting (like the scripted model)."""

    spec = "calling:model"

    def __init__(self) -> None:
        self.seen: list[list[Message]] = []

    async def complete(self, request: ModelRequest) -> ModelResponse:
        self.seen.append(list(request.messages))
        if len(self.seen) > 1:
            return ModelResponse(text="resumed fine")
        return ModelResponse(tool_calls=[ToolCall("c1", "ls", {}), ToolCall("c2", "ls", {})])


@pytest.mark.anyio
async def test_stop_before_run_runs_no_turn_and_no_tool_even_without_an_await() -> None:
    host = Tools()
    loop = AgentLoop(host, CallingModel())
    loop.stop()
    end = await loop.run("hi")
    assert end.status == "stopped"
    assert host.calls == []
    assert end.usage["turns"] == 0


@pytest.mark.anyio
async def test_stop_mid_call_answers_every_call_so_a_resume_is_well_formed() -> None:
    host = Tools()
    model = CallingModel()
    loop = AgentLoop(host, model)
    async with anyio.create_task_group() as tg:

        async def stop_soon() -> None:
            await anyio.sleep(0.2)
            loop.stop()

        tg.start_soon(stop_soon)
        with anyio.fail_after(5):
            first = await loop.run("hi")
    assert first.status == "stopped"
    assert len(host.calls) == 2
    tool_messages = [m for m in loop.messages if m.role == "tool"]
    assert [m.tool_call_id for m in tool_messages] == ["c1", "c2"]
    assert all(m.is_error for m in tool_messages)

    second = await loop.run("go on")
    assert second.status == "completed"
    assert [m.role for m in model.seen[1]] == ["user", "assistant", "tool", "tool", "user"]


@pytest.mark.anyio
async def test_fail_mid_model_call_ends_with_error_and_the_reason_once() -> None:
    host = Host()
    loop = AgentLoop(host, SlowModel())
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:

            async def lose_server() -> None:
                await anyio.sleep(0.05)
                loop.fail("server 'db': required server failed: exited")

            tg.start_soon(lose_server)
            end = await loop.run("hi")
    assert end.status == "error"
    assert end.error == "server 'db': required server failed: exited"
    assert [e for e in host.events if isinstance(e, AgentEnd)] == [end]
