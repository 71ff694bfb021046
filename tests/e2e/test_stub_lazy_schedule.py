"""`lazy --at/--remove-at`: scheduled tools come and go, each change announced in both eras."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.e2e.stub_client import (
    ERAS,
    Era,
    connect_stub,
    list_names,
    relist_until,
    result_text,
)

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


SCHEDULE_TIMEOUT_S = 10.0


@pytest.mark.parametrize("era", ERAS)
async def test_late_tool_arrives_and_removed_tool_leaves(tmp_path: Path, era: Era) -> None:
    args = ("--at", "0:early", "--at", "1.5:late", "--remove-at", "2:early")
    async with connect_stub("lazy", *args, era=era, errlog=tmp_path / "err.log") as (
        client,
        changes,
    ):
        with anyio.fail_after(SCHEDULE_TIMEOUT_S):
            at_start = await list_names(client)
            after_late = await relist_until(client, changes, lambda names: "late" in names)
            late = await client.call_tool("late", {"x": 1})
            final = await relist_until(client, changes, lambda names: "early" not in names)

    assert at_start == ["echo", "sleep", "early"]
    assert changes.seen >= 1
    assert "late" in after_late
    assert result_text(late) == '{"tool": "late", "arguments": {"x": 1}}'
    assert final == ["echo", "sleep", "late"]
