"""Benchmark 3: echo calls through a session's tool entry ÷ a bare SDK ClientSession (≤ 1.05).

Ours is the session's own path: one registry lookup, then the admitted entry's `run`
(argument check, `McpConnection.call`, result finishing). The baseline is the SDK's
lowest client, `ClientSession` over its own `stdio_client`, given the same per-call
timeout McpConnection passes; the goal is on the client's CPU time per call (wall time
moves with the server and the machine's other load). `mcp.Client` (the high-level client
McpConnection is built on) is shown beside it: it was the baseline before and hid its
own overhead. Only the call loop is timed (connect and shutdown are not). Servers: the
SDK-free fast stub, and the SDK-based `mcp_servers.lazy` stub.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from _util import Result, bench_main, fast_stub_args, median, state_dir
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher.bridge.connection import McpConnection
from launcher.config.types import AgentSpec, ServerSpec
from launcher.secrets import SecretMask
from launcher.session_tools import server_tools_sink
from launcher.toolset.admission import admission
from launcher.toolset.registry import ToolRegistry
from launcher.toolset.scope import ToolScope

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
    """The call loop as a session makes it: one registry lookup, then the entry's `run`
    (argument check, McpConnection.call, result finishing) over the launcher's transport."""

    async def emit(_: object) -> None:
        return None

    spec = ServerSpec(name="bench", command="python", args=tuple(args))
    registry = ToolRegistry(gate=admission(ToolScope(AgentSpec(name="bench"))))
    connections: dict[str, McpConnection] = {}
    sink = server_tools_sink(
        registry, spec, connections, mask=SecretMask(()), session_dir=root, emit=emit
    )
    conn = McpConnection(
        spec, on_tools=sink, emit=emit, log_path=root / "bench.log", workspace=root
    )
    connections[spec.name] = conn

    async def call(tool: str, arguments: dict[str, Any]) -> Any:
        entry = registry.admit(f"bench__{tool}")
        if isinstance(entry, str):
            raise RuntimeError(f"bench__{tool} is not admitted: {entry}")
        return await entry.run(arguments)

    async with anyio.create_task_group() as tg:
        tg.start_soon(conn.run)
        await conn.ready.wait()
        if conn.state != "connected":
            raise RuntimeError(f"connection {conn.state}: {conn.error}")
        try:
            return await timed_loop(call, calls)
        finally:
            conn.close()


async def via_client(args: list[str], calls: int, root: Path) -> Times:
    """The same loop through `mcp.Client` over the SDK's `stdio_client` (shown, no goal)."""
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(Path.cwd()))
    with (root / "bare.log").open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:

            async def call(tool: str, arguments: dict[str, Any]) -> Any:
                return await client.call_tool(tool, arguments, read_timeout_seconds=TOOL_TIMEOUT_S)

            return await timed_loop(call, calls)


async def via_session(args: list[str], calls: int, root: Path) -> Times:
    """The baseline: a bare `ClientSession` over `stdio_client`, with the same per-call timeout."""
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(Path.cwd()))
    with (root / "bare.log").open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def call(tool: str, arguments: dict[str, Any]) -> Any:
                    return await session.call_tool(
                        tool, arguments, read_timeout_seconds=TOOL_TIMEOUT_S
                    )

                return await timed_loop(call, calls)


def run(quick: bool = False) -> list[Result]:
    calls = QUICK_CALLS if quick else CALLS
    results = []
    with state_dir() as root:
        for label, (args, full_rounds) in SERVERS.items():
            rounds = QUICK_ROUNDS if quick else full_rounds
            ours: list[Times] = []
            session: list[Times] = []
            client: list[Times] = []
            anyio.run(via_session, args, 10, root)  # warm-up
            for _ in range(rounds):  # interleaved, so drift hits all alike
                ours.append(anyio.run(via_connection, args, calls, root))
                session.append(anyio.run(via_session, args, calls, root))
                client.append(anyio.run(via_client, args, calls, root))
            o, b = median([t[0] for t in ours]), median([t[0] for t in session])
            oc, bc = median([t[1] for t in ours]), median([t[1] for t in session])
            cc = median([t[1] for t in client])
            print(
                f"{label}: {calls} calls, session entry {o:.2f} s ({calls / o:.0f}/s, "
                f"cpu {oc:.2f} s), ClientSession {b:.2f} s ({calls / b:.0f}/s, cpu {bc:.2f} s), "
                f"mcp.Client cpu {cc:.2f} s  (n={rounds})"
            )
            results.append(
                Result(
                    "3 call rate",
                    f"{calls} echo calls, session entry ÷ bare ClientSession, client CPU ({label})",
                    oc / bc,
                    1.05,
                    f"{oc * 1e6 / calls:.0f} vs {bc * 1e6 / calls:.0f} µs of client CPU a call",
                )
            )
            results.append(
                Result(
                    "3 call rate",
                    f"same, wall time ({label}, no goal)",
                    o / b,
                    None,
                    f"{calls / o:.0f} vs {calls / b:.0f} calls/s",
                )
            )
            results.append(
                Result(
                    "3 call rate",
                    f"mcp.Client ÷ bare ClientSession, client CPU ({label}, no goal)",
                    cc / bc,
                    None,
                    f"{cc * 1e6 / calls:.0f} vs {bc * 1e6 / calls:.0f} µs a call",
                )
            )
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
