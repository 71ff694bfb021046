"""A stdio server's process group: its environment, its spawn, and its end.

The SDK's `stdio_client` hides the child's pid and kills the group only when the
leader outlives stdin EOF, which orphans grandchildren (see notes/mcp-sdk-v2.md).
Here the server runs in its own group, logs stderr to a file and the group always ends.
SDK-free on purpose: a server is spawned before the SDK is imported (that import costs
more than half a second, which then overlaps the server's own start-up).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import anyio
from anyio.abc import Process

EOF_GRACE_S = 2.0
"""How long a server may take to exit on its own after its stdin closes (MCP spec step 1)."""
TERM_GRACE_S = 2.0
"""How long the group gets between SIGTERM and SIGKILL."""
GROUP_SWEEP_S = 0.3
"""After the leader is gone, how long stragglers in its group get to honour SIGTERM."""
POLL_S = 0.02
"""Interval for polling process and group liveness; waits are short and bounded."""

BASE_ENV_VARS = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR")
"""The minimal environment every server gets on top of what its spec declares."""


class SpawnError(Exception):
    """The server could not be spawned; the message is the whole reason."""


def server_environment(declared: dict[str, str]) -> dict[str, str]:
    """The base environment plus the server's declared variables (which win)."""
    env = {k: v for k, v in os.environ.items() if k in BASE_ENV_VARS and not v.startswith("()")}
    env.update(declared)
    return env


def resolve_command(command: str) -> str:
    """`python`/`python3` mean this interpreter, so stub servers run in our environment."""
    return sys.executable if command in ("python", "python3") else command


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
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait_until(predicate: Callable[[], bool], limit_s: float) -> bool:
    # Polling, not process.wait(): asyncio's wait also waits for pipe EOF, which a
    # grandchild holding the pipe would delay; group liveness has no event at all.
    with anyio.move_on_after(limit_s):
        while not predicate():  # noqa: ASYNC110
            await anyio.sleep(POLL_S)
        return True
    return predicate()


async def stop_process_group(process: Process) -> None:
    """Close stdin, wait, SIGTERM the group, wait, SIGKILL it; always sweep the group.

    Shielded by the caller. The sweep runs even when the leader exited promptly:
    its grandchildren share its group and would otherwise be orphaned.
    """
    pgid = process.pid  # start_new_session=True makes the leader's pid the group id
    if process.stdin is not None:
        with contextlib.suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    exited = await _wait_until(lambda: process.returncode is not None, EOF_GRACE_S)
    if not exited:
        signal_group(pgid, signal.SIGTERM)
        exited = await _wait_until(lambda: process.returncode is not None, TERM_GRACE_S)
        if not exited:
            signal_group(pgid, signal.SIGKILL)
            await _wait_until(lambda: process.returncode is not None, TERM_GRACE_S)
    if group_alive(pgid):
        signal_group(pgid, signal.SIGTERM)
        if not await _wait_until(lambda: not group_alive(pgid), GROUP_SWEEP_S):
            signal_group(pgid, signal.SIGKILL)


@dataclass
class StdioChild:
    """What the transport knows about its server process.

    `lost` is set at stdout EOF or when the leader exits, before the SDK sees the stream end.
    """

    pid: int | None = None
    lost: anyio.Event = field(default_factory=anyio.Event)
    process: Process | None = None

    @property
    def returncode(self) -> int | None:
        """The leader's exit status once it has exited (negative: killed by that signal)."""
        return self.process.returncode if self.process is not None else None

    async def wait_exit(self, limit_s: float) -> int | None:
        """The exit status, waiting at most `limit_s` for the leader to be reaped."""
        await _wait_until(lambda: self.returncode is not None, limit_s)
        return self.returncode


async def spawn_server(
    command: str, args: list[str], *, env: dict[str, str], cwd: Path | None, errlog: IO[bytes]
) -> Process:
    """Start the server as the leader of a new session and process group, stderr to `errlog`."""
    if cwd is not None and not await anyio.Path(cwd).is_dir():
        # Checked first: exec would blame the command ("command not found: <cwd>").
        raise SpawnError(f"working directory does not exist: {cwd}")
    return await anyio.open_process(
        [resolve_command(command), *args],
        env=env,
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,
    )
