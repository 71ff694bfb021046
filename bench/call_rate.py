"""Benchmark 3: sequential echo calls through McpConnection ÷ a bare SDK client (goal ≤ 1.05).

The baseline is `mcp.Client` over the SDK's own `stdio_client`, against the same server.
Only the call loop is timed (connect and shutdown are not). Servers: the SDK-free fast
stub, and the SDK-based `mcp_servers.lazy` stub.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from _util import Result, bench_main, fast_stub_args, median, state_dir
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher.bridge.connection import McpConnection
from launcher.config.types import ServerSpec
from launcher.toolset.types import ToolDef

TOOL_TIMEOUT_S = ServerSpec(name="default").tool_timeout
"""The per-call timeout McpConnection passes by default."""
CALLS = 1000
QUICK_CALLS = 200
QUICK_ROUNDS = 1
SERVERS: dict[str, tuple[list[str], int]] = {
    # label: (python arguments, rounds); a fast-stub round is ~0.3 s, an SDK one ~3 s
    "fast stub": (fast_stub_args(), 11),
    "SDK lazy stub": (["-m", "mcp_servers.lazy"], 3),
}

Caller = Callable[[str, dict[str, Any]], Awaitable[Any]]


Times = tuple[float, float]
"""(wall seconds, this process's CPU seconds): CPU time is what the client itself spent,
and is far less disturbed by other load on a shared 2-core machine than wall time."""


async def timed_loop(call: Caller, calls: int) -> Times:
    """Times of `calls` sequential echo calls; every reply is checked."""
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(calls):
        result = await call("echo", {"text": f"m{i}"})
        if result.is_error:
            raise RuntimeError(f"echo failed: {result}")
    return time.perf_counter() - start, time.process_time() - cpu


async def via_connection(args: list[str], calls: int, root: Path) -> Times:
    """The call loop through the launcher's McpConnection (its own transport and timeouts)."""

    async def on_tools(_: list[ToolDef]) -> None:
        return None

    async def emit(_: object) -> None:
        return None

    spec = ServerSpec(name="bench", command="python", args=tuple(args))
    conn = McpConnection(
        spec, on_tools=on_tools, emit=emit, log_path=root / "bench.log", workspace=root
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.run)
        await conn.ready.wait()
        if conn.state != "connected":
            raise RuntimeError(f"connection {conn.state}: {conn.error}")
        try:
            return await timed_loop(conn.call, calls)
        finally:
            conn.close()


async def via_bare_sdk(
    args: list[str], calls: int, root: Path, per_call_s: float | None = None
) -> Times:
    """The same loop through `mcp.Client` over the SDK's `stdio_client`.

    `per_call_s`: each call's read timeout, as McpConnection passes its tool_timeout.
    """
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(Path.cwd()))
    with (root / "bare.log").open("ab") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:

            async def call(tool: str, arguments: dict[str, Any]) -> Any:
                return await client.call_tool(tool, arguments, read_timeout_seconds=per_call_s)

            return await timed_loop(call, calls)


def run(quick: bool = False) -> list[Result]:
    calls = QUICK_CALLS if quick else CALLS
    results = []
    with state_dir() as root:
        for label, (args, full_rounds) in SERVERS.items():
            rounds = QUICK_ROUNDS if quick else full_rounds
            ours: list[Times] = []
            bare: list[Times] = []
            timed: list[Times] = []
            anyio.run(via_bare_sdk, args, 10, root)  # warm-up
            for _ in range(rounds):  # interleaved, so drift hits all alike
                ours.append(anyio.run(via_connection, args, calls, root))
                bare.append(anyio.run(via_bare_sdk, args, calls, root))
                timed.append(anyio.run(via_bare_sdk, args, calls, root, TOOL_TIMEOUT_S))
            o, b = median([t[0] for t in ours]), median([t[0] for t in bare])
            oc, bc = median([t[1] for t in ours]), median([t[1] for t in bare])
            tc = median([t[1] for t in timed])
            print(
                f"{label}: {calls} calls, McpConnection {o:.2f} s ({calls / o:.0f}/s, "
                f"cpu {oc:.2f} s), bare SDK {b:.2f} s ({calls / b:.0f}/s, cpu {bc:.2f} s), "
                f"bare SDK with per-call timeout cpu {tc:.2f} s  (n={rounds})"
            )
            results.append(
                Result(
                    "3 call rate",
                    f"{calls} echo calls McpConnection ÷ bare SDK Client, wall ({label})",
                    o / b,
                    1.05,
                    f"{calls / o:.0f} vs {calls / b:.0f} calls/s",
                )
            )
            results.append(
                Result(
                    "3 call rate",
                    f"same, client CPU time ({label}, no goal)",
                    oc / bc,
                    None,
                    f"{oc * 1e6 / calls:.0f} vs {bc * 1e6 / calls:.0f} µs of client CPU a call",
                )
            )
            results.append(
                Result(
                    "3 call rate",
                    f"client CPU time vs bare SDK Client with the same per-call timeout "
                    f"({label}, no goal)",
                    oc / tc,
                    None,
                    f"{oc * 1e6 / calls:.0f} vs {tc * 1e6 / calls:.0f} µs a call",
                )
            )
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
