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


@pytest.mark.parametrize("era", ERAS)
async def test_schedule_starts_at_the_first_complete_listing(tmp_path: Path, era: Era) -> None:
    # A client slower than the schedule, before and between its first pages: the change is
    # still only in a later listing, so no start-up stall can move it into the first one.
    args = ("--pages", "2", "--count", "2", "--at", "0.2:late")
    async with connect_stub("lazy", *args, era=era, errlog=tmp_path / "err.log") as (
        client,
        changes,
    ):
        with anyio.fail_after(SCHEDULE_TIMEOUT_S):
            await anyio.sleep(0.6)  # past the schedule, counted from initialization
            first_page = await client.list_tools(cache_mode="refresh")
            await anyio.sleep(0.6)
            rest = await client.list_tools(cursor=first_page.next_cursor, cache_mode="refresh")
            after = await relist_until(client, changes, lambda names: "late" in names)

    first = [t.name for t in (*first_page.tools, *rest.tools)]
    assert rest.next_cursor is None
    assert first == ["echo", "sleep", "tool_0000", "tool_0001"]
    assert changes.seen >= 1
    assert after == [*first, "late"]


@pytest.mark.parametrize("era", ERAS)
async def test_file_triggers_change_tools_once_their_file_exists(tmp_path: Path, era: Era) -> None:
    add, change = tmp_path / "add.go", tmp_path / "change.go"
    args = (
        *("--at-file", f"{add}:late"),
        *("--redescribe-at-file", f"{change}:echo", "--remove-at-file", f"{change}:sleep"),
    )
    async with connect_stub("lazy", *args, era=era, errlog=tmp_path / "err.log") as (
        client,
        changes,
    ):
        with anyio.fail_after(SCHEDULE_TIMEOUT_S):
            at_start = await list_names(client)
            await anyio.sleep(0.5)  # no file yet: nothing may change meanwhile
            still = await list_names(client)
            seen_before = changes.seen
            add.touch()
            after_add = await relist_until(client, changes, lambda names: "late" in names)
            change.touch()
            final = await relist_until(client, changes, lambda names: "sleep" not in names)
            (echo,) = [
                t for t in (await client.list_tools(cache_mode="refresh")).tools if t.name == "echo"
            ]

    assert at_start == still == ["echo", "sleep"]
    assert seen_before == 0
    assert after_add == ["echo", "sleep", "late"]
    assert final == ["echo", "late"]
    assert echo.description is not None and "(changed" in echo.description
