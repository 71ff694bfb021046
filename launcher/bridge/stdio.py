"""A stdio MCP transport over an already spawned server process (see process.py).

Lines on the server's stdout become SDK messages; on the way out, pending writes are
flushed and the server's whole process group is stopped.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import Process
from mcp.shared.message import SessionMessage

from launcher.bridge.lines import LineReader
from launcher.bridge.process import StdioChild
from launcher.procs.group import stop_group

WRITER_FLUSH_S = 0.5
"""Time for already-accepted outgoing messages to be written before stdin closes."""
EXIT_POLL_S = 0.2
"""How often a live server's leader is checked for exit (a grandchild may hold stdout open)."""
EXIT_EOF_GRACE_S = 0.5
"""After the leader exits, time for stdout to drain to EOF before the server counts as lost."""


def _parse_line(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        # A lying server: the session sees the error and goes on.
        return exc


@asynccontextmanager
async def stdio_transport(child: StdioChild) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's (read, write) streams over a spawned server's pipes; ends its group on exit."""
    process: Process | None = child.process
    assert process is not None, "spawn the server first"
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)
    writer_done = anyio.Event()

    async def reader() -> None:
        assert process.stdout is not None
        lines = LineReader()
        with read_in:
            try:
                async for chunk in process.stdout:
                    for raw in lines.feed(chunk):
                        if raw and not raw.isspace():  # strip() would copy a huge line
                            await read_in.send(_parse_line(raw.decode("utf-8", "replace")))
            except ValueError as exc:
                # The stream can no longer be framed: the server fails (with this reason).
                child.failure = str(exc)
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
                await stop_group(process)
                read_out.close()
                if process.stdout is not None:
                    with contextlib.suppress(OSError, anyio.BrokenResourceError):
                        await process.stdout.aclose()
            tg.cancel_scope.cancel()
