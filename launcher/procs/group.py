"""Process groups: the one way subagent starts a child that may have children, and ends it.

Every child (MCP server, bash command, serve worker) leads its own session and process
group, so its whole tree can be signalled at once. Ending it is one ladder: close stdin,
wait, SIGTERM the group, wait, SIGKILL the group — and always sweep the group, even when
the leader exited promptly (the SDK alone leaves grandchildren orphaned then).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.abc import Process

from launcher.procs import strays

POLL_S = 0.02
"""Interval for polling process and group liveness; waits are short and bounded."""


@dataclass(frozen=True)
class Ladder:
    """How long each rung of the stop ladder waits, in seconds."""

    eof_grace_s: float
    """After stdin closes, how long the leader may take to exit on its own."""
    term_grace_s: float
    """Between SIGTERM and SIGKILL of the group."""
    sweep_s: float
    """After the leader is gone, how long stragglers in its group get to honour SIGTERM."""


SERVER_LADDER = Ladder(eof_grace_s=2.0, term_grace_s=2.0, sweep_s=0.3)
"""An MCP server: stdin EOF is the spec's first shutdown step; two seconds each rung."""


async def spawn_group(argv: Sequence[str], **kwargs: Any) -> Process:
    """Start `argv` as the leader of a new session and process group (anyio.open_process)."""
    process = await anyio.open_process(list(argv), start_new_session=True, **kwargs)
    strays.note_child(process.pid)  # started on purpose: not an orphan to sweep
    return process


def group_alive(pgid: int) -> bool:
    """Whether any process is left in the process group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, sig: int) -> None:
    """Send `sig` to every process of the group; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def kill_group(pgid: int) -> None:
    """SIGKILL the group at once (a bash command's background jobs, a timed-out call)."""
    signal_group(pgid, signal.SIGKILL)


REAP_GRACE_S = 5.0
"""How long to wait for a killed leader to be reaped; SIGKILL makes this near-instant."""


async def end_call_group(process: Process, release: Callable[[int], None] | None) -> None:
    """The end of a one-call group (a bash command, a hook): whatever it left running dies,
    its guard (`release`) lets go of it, and its leader is reaped, shielded and bounded."""
    kill_group(process.pid)
    if release is not None:
        release(process.pid)
    with anyio.move_on_after(REAP_GRACE_S, shield=True):
        await process.aclose()


async def wait_until(predicate: Callable[[], bool], limit_s: float) -> bool:
    """Poll `predicate` for at most `limit_s`; returns its last value."""
    # Polling, not process.wait(): asyncio's wait also waits for pipe EOF, which a
    # grandchild holding the pipe would delay; group liveness has no event at all.
    with anyio.move_on_after(limit_s):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(POLL_S)
        return True
    return predicate()


async def stop_group(process: Process, ladder: Ladder = SERVER_LADDER) -> None:
    """Close stdin, wait, SIGTERM the group, wait, SIGKILL it; always sweep the group.

    Shielded by the caller. The sweep runs even when the leader exited promptly:
    its grandchildren share its group and would otherwise be orphaned.
    """
    pgid = process.pid  # start_new_session=True makes the leader's pid the group id
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    exited = await wait_until(lambda: process.returncode is not None, ladder.eof_grace_s)
    if not exited:
        signal_group(pgid, signal.SIGTERM)
        exited = await wait_until(lambda: process.returncode is not None, ladder.term_grace_s)
        if not exited:
            signal_group(pgid, signal.SIGKILL)
            await wait_until(lambda: process.returncode is not None, ladder.term_grace_s)
    if group_alive(pgid):
        signal_group(pgid, signal.SIGTERM)
        if not await wait_until(lambda: not group_alive(pgid), ladder.sweep_s):
            signal_group(pgid, signal.SIGKILL)
