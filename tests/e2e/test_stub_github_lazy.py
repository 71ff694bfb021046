"""`github --lazy`: the write tools arrive after initialization, announced in both eras."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.e2e.stub_client import ERAS, Era, connect_stub, list_names

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


LATE_TIMEOUT_S = 10.0
WRITE_TOOLS = {"create_issue", "add_issue_comment"}


@pytest.mark.parametrize("era", ERAS)
async def test_github_write_tools_appear_after_list_changed(tmp_path: Path, era: Era) -> None:
    async with connect_stub("github", "--lazy", "1", era=era, errlog=tmp_path / "err.log") as (
        client,
        changes,
    ):
        with anyio.fail_after(LATE_TIMEOUT_S):
            before = set(await list_names(client))
            await changes.wait_count(1)
            after = set(await list_names(client))
            created = await client.call_tool("create_issue", {"title": "late write"})

    assert "list_issues" in before
    assert not before & WRITE_TOOLS
    assert after == before | WRITE_TOOLS
    assert created.is_error is False
