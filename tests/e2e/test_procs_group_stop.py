"""`stop_group` ends the whole group: grandchildren die even when the leader exits
promptly on stdin EOF, and a leader that ignores EOF and SIGTERM gets SIGKILL."""

from __future__ import annotations

import signal

import anyio
import pytest

from launcher.procs.group import stop_group
from tests.e2e.conftest import is_alive, wait_until

pytestmark = pytest.mark.e2e

POLITE = "sleep 300 >/dev/null & echo $!; read line; exit 0"
"""Leaves a grandchild in its group, then exits at once when stdin closes."""
STUBBORN = 'trap "" TERM; sleep 300 >/dev/null & echo $!; while :; do sleep 0.2; done'
"""Ignores SIGTERM (its grandchild inherits that) and never reads stdin."""


async def _run_and_stop(script: str) -> tuple[int | None, int]:
    process = await anyio.open_process(["sh", "-c", script], start_new_session=True)
    assert process.stdout is not None
    with anyio.fail_after(10):
        grandchild = int(await process.stdout.receive())
    with anyio.CancelScope(shield=True):
        await stop_group(process)
    await process.aclose()
    return process.returncode, grandchild


@pytest.mark.parametrize(
    ("script", "status"), [(POLITE, 0), (STUBBORN, -signal.SIGKILL)], ids=["polite", "stubborn"]
)
def test_stop_group_leaves_no_grandchild(script: str, status: int) -> None:
    returncode, grandchild = anyio.run(_run_and_stop, script)

    assert returncode == status
    assert wait_until(lambda: not is_alive(grandchild), 2.0)
