"""What both peer scripts share (they run in their own venvs, with the peer's SDK): the timed
echo loop, and the bare SDK client every peer is compared with."""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _util import fast_stub_args
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client


async def echo_loop(
    call: Callable[[str, dict[str, Any]], Awaitable[Any]], calls: int
) -> tuple[float, float]:
    """(wall, this process's CPU) seconds for `calls` sequential echo calls; each checked."""
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(calls):
        result = await call("echo", {"text": f"m{i}"})
        if result.is_error:
            raise RuntimeError(f"echo failed: {result}")
    return time.perf_counter() - start, time.process_time() - cpu


async def calls_bare(calls: int) -> tuple[float, float]:
    """The loop through a bare `mcp.Client` over `stdio_client` (the venv's SDK), with no
    per-call timeout, having listed the tools once."""
    params = StdioServerParameters(command=sys.executable, args=fast_stub_args())
    async with Client(stdio_client(params)) as client:
        await client.list_tools()
        return await echo_loop(client.call_tool, calls)
