"""When the commands' PID namespace may be emptied: once no command of the session runs.

Tool calls may overlap: emptying the namespace after one command would kill another that
is still running, and a command started while it is being emptied would die at birth. So
the last command to end empties it, and a command starting meanwhile waits for that.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio

WAIT_S = 0.01
"""How often a command waiting for the namespace to be emptied looks again (rare)."""


class CommandEnds:
    """The session's running commands, counted; `end` runs `empty` after the last one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running = 0
        self._emptying = False

    async def start(self) -> None:
        """Before a command starts: count it (after any emptying under way)."""
        while not self._enter():  # noqa: ASYNC110 (cleared by a worker thread; rare)
            await anyio.sleep(WAIT_S)

    def _enter(self) -> bool:
        with self._lock:
            if self._emptying:
                return False
            self._running += 1
            return True

    def not_started(self) -> None:
        """The command counted by `start` did not start after all."""
        with self._lock:
            self._running -= 1

    def end(self, empty: Callable[[], bool]) -> bool:
        """A command ended: the last one running calls `empty` (blocking), its answer is
        returned; True when another command still runs."""
        with self._lock:
            self._running -= 1
            if self._running > 0:
                return True
            self._emptying = True
        try:
            return empty()
        finally:
            with self._lock:
                self._emptying = False
