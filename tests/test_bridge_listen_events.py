"""The listen stream's events are told apart by the SDK's types, not their class names:
a ToolsListChanged (or a subclass of it) schedules a re-list, other events do not."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.subscriptions import PromptsListChanged, ToolsListChanged

from tests.bridge_support import idle_connection

pytestmark = pytest.mark.anyio

LIMIT_S = 5.0


@dataclass(frozen=True)
class TaggedToolsListChanged(ToolsListChanged):
    """What a later SDK might send: the same event type, under another class name."""

    tag: str = "x"


class OneStreamClient:
    """A client whose single listen stream delivers `events`, then ends."""

    def __init__(self, events: list[Any]) -> None:
        self.events = events

    @asynccontextmanager
    async def listen(self, **_: Any) -> AsyncIterator[AsyncIterator[Any]]:
        async def stream() -> AsyncIterator[Any]:
            for event in self.events:
                yield event

        yield stream()


async def _relist_requested(tmp_path: Path, events: list[Any]) -> bool:
    conn = idle_connection(tmp_path)
    conn.close()  # the stream's end is then final: no re-open
    with anyio.fail_after(LIMIT_S):
        await conn.follow.listen(OneStreamClient(events))  # type: ignore[arg-type]
    return conn.follow.pending


async def test_tools_list_changed_subclass_schedules_relist(tmp_path: Path) -> None:
    assert await _relist_requested(tmp_path, [TaggedToolsListChanged()])


async def test_other_list_changed_events_schedule_nothing(tmp_path: Path) -> None:
    assert not await _relist_requested(tmp_path, [PromptsListChanged()])
