"""`lazy --pages N`: tools/list is served in pages of N, chained by cursors."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import MCPError

from tests.e2e.stub_client import connect_stub, list_pages

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


CALL_TIMEOUT_S = 10.0


async def test_tools_list_pages_follow_cursors(tmp_path: Path) -> None:
    args = ("--pages", "3", "--count", "5", "--at", "0:early")
    async with connect_stub("lazy", *args, era="legacy", errlog=tmp_path / "err.log") as (
        client,
        _,
    ):
        with anyio.fail_after(CALL_TIMEOUT_S):
            pages = await list_pages(client)
            with pytest.raises(MCPError):
                await client.list_tools(cursor="not-a-cursor", cache_mode="refresh")

    assert pages == [
        ["echo", "sleep", "tool_0000"],
        ["tool_0001", "tool_0002", "tool_0003"],
        ["tool_0004", "early"],
    ]
