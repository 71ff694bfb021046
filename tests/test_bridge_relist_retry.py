"""A re-list after list_changed that fails is retried with backoff (bounded), so a late
tool is not lost for the session; a server that keeps failing is given up on."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest

from launcher.bridge.connection import McpConnection
from launcher.bridge.follow import RELIST_ATTEMPTS
from launcher.toolset.types import ToolDef
from tests.bridge_support import idle_connection

pytestmark = pytest.mark.anyio

LIMIT_S = 5.0


class FlakyClient:
    """A client whose tools/list fails `failures` times, then lists one tool."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def list_tools(self, cursor: str | None = None, **_: Any) -> types.ListToolsResult:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(f"transient failure {self.calls}")
        tool = types.Tool(name="late", input_schema={"type": "object"})
        return types.ListToolsResult(tools=[tool])


def _connection(tmp_path: Path, listed: list[list[ToolDef]]) -> McpConnection:
    async def on_tools(defs: list[ToolDef]) -> None:
        listed.append(defs)

    conn = idle_connection(tmp_path, on_tools)
    conn.follow.backoff_s = 0.01
    return conn


async def test_failed_relist_is_retried_until_the_late_tool_arrives(tmp_path: Path) -> None:
    listed: list[list[ToolDef]] = []
    conn = _connection(tmp_path, listed)
    client = FlakyClient(failures=RELIST_ATTEMPTS - 1)

    with anyio.fail_after(LIMIT_S):
        await conn.follow.refresh(client)  # type: ignore[arg-type]

    assert client.calls == RELIST_ATTEMPTS
    assert [[d.name for d in defs] for defs in listed] == [["late"]]


async def test_relist_that_keeps_failing_gives_up_after_bounded_attempts(tmp_path: Path) -> None:
    listed: list[list[ToolDef]] = []
    conn = _connection(tmp_path, listed)
    client = FlakyClient(failures=100)

    with anyio.fail_after(LIMIT_S):
        await conn.follow.refresh(client)  # type: ignore[arg-type]

    assert client.calls == RELIST_ATTEMPTS
    assert listed == []
    log = (tmp_path / "s.log").read_text()
    assert f"failed ({RELIST_ATTEMPTS}/{RELIST_ATTEMPTS})" in log
