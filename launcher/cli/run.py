"""How a command runs: the one exit-code map, signals, and the async runner.

Imported by every command, so nothing heavy at module level (anyio included).
"""

from __future__ import annotations

import gc
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import TypeVar

from launcher.errors import Interrupted, SubagentError

T = TypeVar("T")

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals that end a run cleanly (exit status 128 + the signal number)."""


def guarded(fn: Callable[[], int | None]) -> int:
    """The one place errors become exit codes: config/usage 2, run failures 1, signals 128+N."""
    try:
        return fn() or 0
    except SubagentError as exc:
        sys.stderr.write(f"subagent: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("subagent: interrupted\n")
        return 128 + signal.SIGINT


def finish(code: int) -> None:
    """Leave without the interpreter's slow teardown of the SDK (~0.4 s); output and the
    last spans (when tracing) flushed first."""
    telemetry = sys.modules.get("launcher.telemetry")  # never imported: nothing to send
    if telemetry is not None:
        telemetry.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


async def with_signals(main: Callable[[], Awaitable[T]]) -> T:
    """Run `main`; SIGINT/SIGTERM/SIGHUP cancel it (every `finally` and shield runs)."""
    import anyio

    received: list[int] = []
    result: list[T] = []
    failures: list[Exception] = []
    # Open around the task group, not inside it: a second Ctrl-C during the (bounded)
    # shutdown is swallowed instead of killing the launcher halfway through it.
    with anyio.open_signal_receiver(*SIGNALS) as signals:
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                async for signum in signals:
                    received.append(signum)
                    tg.cancel_scope.cancel()
                    return

            async def body() -> None:
                try:
                    result.append(await main())
                except Exception as exc:  # re-raised below, unwrapped from the task group
                    failures.append(exc)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            tg.start_soon(body)
    if failures:
        raise failures[0]
    if received:
        raise Interrupted(received[0])
    return result[0]


def run_async(main: Callable[[], Awaitable[T]]) -> T:
    """Run a command's async body under signal handling on a fresh event loop."""
    import anyio

    from launcher.telemetry import start

    start()  # before the loop: TRACEPARENT, if set, is every task's parent
    # Everything imported so far lives for the whole process: moving it out of the
    # collector's view cut worst-case pauses while listing 2 000 tools from 220 to 83 ms.
    gc.freeze()
    return anyio.run(with_signals, main)
