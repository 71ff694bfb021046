"""The signal that drains serve, watched from serve's first moment on the event loop.

serve runs first calls before the MCP SDK (and runtime.py, which drains) has loaded; a
SIGTERM then must not kill serve with its runs in flight. So the receiver is opened before
anything runs, kept open for serve's life (a second signal changes nothing), and the
drain waits on the event it sets. Imports nothing heavy: the early phase reads it.
"""

from __future__ import annotations

import signal

import anyio
import anyio.abc

DRAIN_SIGNALS = (signal.SIGTERM, signal.SIGINT)
"""What ends serve in order: a service manager's stop, and Ctrl-C."""


class DrainSignal:
    """Set by the first of DRAIN_SIGNALS once `watch` runs."""

    def __init__(self) -> None:
        self.event = anyio.Event()
        self.name = ""
        """The signal's name (SIGTERM), once one came."""

    async def watch(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Hold the signals until cancelled; the first one sets `event`."""
        with anyio.open_signal_receiver(*DRAIN_SIGNALS) as signals:
            task_status.started()
            async for signum in signals:
                if not self.event.is_set():
                    self.name = signal.Signals(signum).name
                    self.event.set()
