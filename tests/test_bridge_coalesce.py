"""Re-list requests coalesce: a burst costs one run at a time, and the last request wins."""

from __future__ import annotations

import anyio
import pytest

from launcher.bridge.coalesce import Coalescer

pytestmark = pytest.mark.anyio


async def test_burst_of_requests_during_a_run_costs_exactly_one_more_run() -> None:
    coalescer = Coalescer()
    seen: list[int] = []
    version = 0
    in_run = anyio.Event()
    release = anyio.Event()

    async def relist() -> None:
        seen.append(version)  # the state this run observes
        if len(seen) == 1:
            in_run.set()
            await release.wait()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(coalescer.serve, relist)
            coalescer.request()
            await in_run.wait()
            for _ in range(50):  # a burst while the first run is busy
                version += 1
                coalescer.request()
            release.set()
            while coalescer.pending or coalescer.runs < 2:  # noqa: ASYNC110
                await anyio.sleep(0.01)
            await anyio.sleep(0.05)  # time enough for a spurious third run to show up
            tg.cancel_scope.cancel()

    assert coalescer.runs == 2
    assert seen == [0, 50]  # the last request's state was listed


async def test_requests_before_serving_are_not_lost() -> None:
    coalescer = Coalescer()
    runs = anyio.Event()

    async def relist() -> None:
        runs.set()

    coalescer.request()
    coalescer.request()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(coalescer.serve, relist)
            await runs.wait()
            await anyio.sleep(0.05)
            tg.cancel_scope.cancel()

    assert coalescer.runs == 1
