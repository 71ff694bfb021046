"""An McpConnection for unit tests that never starts its server (`true` exits at once)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

from launcher.bridge.connection import McpConnection
from launcher.config.types import ServerSpec
from launcher.events import Event
from launcher.toolset.types import ToolDef


async def _ignore_event(event: Event) -> None:
    return None


async def _ignore_tools(defs: list[ToolDef]) -> None:
    return None


def idle_connection(
    tmp_path: Path, on_tools: Callable[[list[ToolDef]], Awaitable[None]] = _ignore_tools
) -> McpConnection:
    """A connection to server `s` (`true`), its log under `tmp_path`; nothing is run."""
    return McpConnection(
        ServerSpec(name="s", command="true"),
        on_tools=on_tools,
        emit=_ignore_event,
        log_path=tmp_path / "s.log",
        workspace=tmp_path,
    )
