"""The commands' PID namespace is emptied only once no command of the session runs, and a
command starting meanwhile waits until it has been."""

from __future__ import annotations

import threading

import anyio
import pytest

from launcher.tools.sandbox.ends import CommandEnds

pytestmark = pytest.mark.anyio


async def test_only_the_last_command_to_end_empties_the_namespace() -> None:
    ends = CommandEnds()
    emptied: list[int] = []
    await ends.start()
    await ends.start()
    assert ends.end(lambda: emptied.append(1) is None)  # another still runs: not emptied
    assert emptied == []
    assert ends.end(lambda: emptied.append(2) is None)
    assert emptied == [2]


async def test_a_command_not_started_is_not_counted() -> None:
    ends = CommandEnds()
    emptied: list[int] = []
    await ends.start()
    await ends.start()
    ends.not_started()
    assert ends.end(lambda: emptied.append(1) is None)
    assert emptied == [1]


async def test_a_command_starting_while_the_namespace_is_emptied_waits() -> None:
    ends = CommandEnds()
    emptying, release = threading.Event(), threading.Event()

    def empty() -> bool:
        emptying.set()
        return release.wait(60)

    await ends.start()
    order: list[str] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(anyio.to_thread.run_sync, lambda: order.append(f"ended {ends.end(empty)}"))
        await anyio.to_thread.run_sync(emptying.wait, 60)

        async def start() -> None:
            await ends.start()
            order.append("started")

        tg.start_soon(start)
        await anyio.sleep(0.05)  # room for a wrong start to happen; the order is the check
        order.append("released")
        release.set()
    assert order[0] == "released" and sorted(order[1:]) == ["ended True", "started"], order
