"""Waiting on an `fcntl.flock` without ever blocking in the kernel: one helper for every lock.

A blocking `flock` cannot be cancelled and, from async code, would stall the event loop;
so every waiter polls a non-blocking attempt until its deadline: `wait_lock` from plain
code, `await_lock` from the event loop (a cancelled session leaves at once, holding
nothing). Stdlib and anyio only: `log`, the token store and the bridge all use it.
"""

from __future__ import annotations

import fcntl
import time

DEFAULT_POLL_S = 0.05
"""How often a waiter retries: the holders here keep a lock for one short write or refresh."""


def try_lock(fd: int, *, shared: bool = False) -> bool:
    """Take the lock on `fd` now if it is free; False when another descriptor holds it."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def wait_lock(fd: int, timeout_s: float, *, poll_s: float = DEFAULT_POLL_S) -> bool:
    """Take the exclusive lock on `fd` within `timeout_s` (0: one try); False if it stays held."""
    deadline = time.monotonic() + timeout_s
    while not try_lock(fd):
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll_s)
    return True


async def await_lock(fd: int, timeout_s: float, *, poll_s: float = DEFAULT_POLL_S) -> bool:
    """`wait_lock` for the event loop: polls with `anyio.sleep`, so it can be cancelled."""
    import anyio

    deadline = time.monotonic() + timeout_s
    while not try_lock(fd):
        if time.monotonic() >= deadline:
            return False
        await anyio.sleep(poll_s)
    return True
