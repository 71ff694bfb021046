"""The lazy stub serves concurrent calls concurrently and logs each one."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.e2e.conftest import parse_events
from tests.e2e.stub_client import connect_stub, result_text

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


LONG_S = 600.0
"""The first call sleeps past every bound here: a server that served calls one at a time
could not answer the second before it."""
SHORT_S = 1.0
LIMIT_S = 60.0


async def test_two_sleep_calls_overlap(tmp_path: Path) -> None:
    call_log = tmp_path / "calls.jsonl"
    long_answered: list[str] = []

    def logged() -> list[dict[str, object]]:
        return parse_events(call_log.read_text(), partial_tail=True) if call_log.exists() else []

    async with connect_stub(
        "lazy", "--call-log", str(call_log), era="modern", errlog=tmp_path / "err.log"
    ) as (client, _):

        async def long_call() -> None:
            result = await client.call_tool("sleep", {"seconds": LONG_S})
            long_answered.append(result_text(result))

        with anyio.fail_after(LIMIT_S):
            async with anyio.create_task_group() as tg:
                tg.start_soon(long_call)
                # The second call goes out once the server holds the first (a file: no event).
                while not logged():  # noqa: ASYNC110
                    await anyio.sleep(0.05)
                short = await client.call_tool("sleep", {"seconds": SHORT_S})
                # Answered while the first still sleeps: the two calls overlapped.
                assert long_answered == []
                tg.cancel_scope.cancel()

    assert result_text(short) == "slept 1.0"
    assert [(e["tool"], e["arguments"]) for e in logged()] == [
        ("sleep", {"seconds": LONG_S}),
        ("sleep", {"seconds": SHORT_S}),
    ]
