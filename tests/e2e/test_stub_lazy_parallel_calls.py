"""The lazy stub serves concurrent calls concurrently and logs each one."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from tests.e2e.conftest import parse_events
from tests.e2e.stub_client import connect_stub, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


SLEEP_S = 1.0
# Two sleeps in parallel take ~SLEEP_S; in series they would take 2 * SLEEP_S.
PARALLEL_BOUND_S = 1.8


async def test_two_sleep_calls_overlap(tmp_path: Path) -> None:
    call_log = tmp_path / "calls.jsonl"
    results: list[str] = []

    async def sleep_call(client: Client) -> None:
        result = await client.call_tool("sleep", {"seconds": SLEEP_S})
        results.append(result_text(result))

    async with connect_stub(
        "lazy", "--call-log", str(call_log), era="modern", errlog=tmp_path / "err.log"
    ) as (client, _):
        started = anyio.current_time()
        with anyio.fail_after(PARALLEL_BOUND_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(sleep_call, client)
                tg.start_soon(sleep_call, client)
        elapsed = anyio.current_time() - started

    assert results == ["slept 1.0", "slept 1.0"]
    assert elapsed >= SLEEP_S
    logged = parse_events(call_log.read_text())
    assert [(e["tool"], e["arguments"]) for e in logged] == [("sleep", {"seconds": SLEEP_S})] * 2
