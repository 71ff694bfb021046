"""The agent loop ends every run with agent_end, whatever the model does or a stop asks."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from launcher.agent import AgentLoop
from launcher.events import AgentEnd, Event
from launcher.models.base import ModelRequest, ModelResponse
from launcher.registry import ToolRegistry
from launcher.tooltypes import ToolEntry


class Host:
    """A session stand-in with no tools; records events."""

    def __init__(self) -> None:
        self.registry = ToolRegistry()
        self.events: list[Event] = []

    def active(self) -> list[ToolEntry]:
        return []

    def allows(self, name: str) -> bool:
        return False

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
