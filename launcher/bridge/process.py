"""A stdio MCP transport that owns its server's process group.

The SDK's `stdio_client` hides the child's pid and kills the group only when the
leader outlives stdin EOF, which orphans grandchildren (see notes/mcp-sdk-v2.md).
This transport records the pid, logs stderr to a file and always ends the group.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.abc import Process
from mcp.shared.message import SessionMessage

EOF_GRACE_S = 2.0
"""How long a server may take to exit on its own after its stdin closes (MCP spec step 1)."""
TERM_GRACE_S = 2.0
"""How long the group gets between SIGTERM and SIGKILL."""
GROUP_SWEEP_S = 0.3
"""After the leader is gone, how long stragglers in its group get to honour SIGTERM."""
POLL_S = 0.02
"""Interval for polling process and group liveness; waits are short and bounded."""
WRITER_FLUSH_S = 0.5
"""Time for already-accepted outgoing messages to be written before stdin closes."""
EXIT_POLL_S = 0.2
"""How often a live server's leader is checked for exit (a grandchild may hold stdout open)."""
EXIT_EOF_GRACE_S = 0.5
"""After the leader exits, time for stdout to drain to EOF before the server counts as lost."""

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


def _parse_line(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        # A lying server: the session sees the error and goes on.
        return exc


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str | Path | None,
    errlog: IO[Any],
    child: StdioChild,
    on_spawn: Callable[[int], None] | None = None,
    on_exit: Callable[[int], None] | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn the server in its own session and yield the SDK's (read, write) streams."""
    if cwd is not None and not await anyio.Path(cwd).is_dir():
        # Checked first: exec would blame the command ("command not found: <cwd>").
        raise SpawnError(f"working directory does not exist: {cwd}")
    process = await anyio.open_process(
        [resolve_command(command), *args],
        env=env,
        cwd=cwd,
        stderr=errlog,
        start_new_session=True,
    )
    child.pid = process.pid
    child.process = process
    if on_spawn is not None:
        on_spawn(process.pid)
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def reader() -> None:
        assert process.stdout is not None
        buffer = b""
        with read_in:
            try:
                async for chunk in process.stdout:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for raw in lines:
                        if raw.strip():
                            await read_in.send(_parse_line(raw.decode("utf-8", "replace")))
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                pass
            finally:
                # Set before read_in closes: whoever then sees "connection closed" knows why.
                child.lost.set()

    async def watch_exit() -> None:
        # A grandchild that inherited stdout keeps the pipe open after the leader dies.
        while process.returncode is None:  # noqa: ASYNC110
            await anyio.sleep(EXIT_POLL_S)
        # Normally stdout reaches EOF at once; let the reader deliver what is still buffered.
        with anyio.move_on_after(EXIT_EOF_GRACE_S):
            await child.lost.wait()
        child.lost.set()

    async def writer() -> None:
        assert process.stdin is not None
        try:
            async with write_out:
                async for message in write_out:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send(data.encode() + b"\n")
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            # The server's stdin broke: it is gone, whatever its stdout still says.
            child.lost.set()
            read_in.close()
        finally:
            writer_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        tg.start_soon(watch_exit)
        try:
            yield read_out, write_in
        finally:
            with anyio.CancelScope(shield=True):
                write_in.close()
                with anyio.move_on_after(WRITER_FLUSH_S):
                    await writer_done.wait()
                await stop_process_group(process)
                if on_exit is not None:
                    on_exit(process.pid)
                read_out.close()
                if process.stdout is not None:
                    with contextlib.suppress(OSError, anyio.BrokenResourceError):
                        await process.stdout.aclose()
            tg.cancel_scope.cancel()
