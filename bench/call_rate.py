"""Benchmark 3: echo calls through a session's tool entry ÷ a bare SDK ClientSession (≤ 1.05).

Ours is the session's own path: one registry lookup, then the admitted entry's `run`
(argument check, `McpConnection.call`, result finishing). The baseline is the SDK's
lowest client, `ClientSession` over its own `stdio_client`, given the same per-call
timeout McpConnection passes and speaking the same protocol era: it negotiates the way
McpConnection does (`server/discover`, falling back to `initialize`), and the run stops
if the two eras differ. An SDK server speaks 2026-07-28, whose requests carry more than
the handshake era's; that cost is the protocol's, not ours, and is shown in a row of its
own (a `ClientSession` that only calls `initialize`). The goal is on the client's CPU time
per call (wall time moves with the server and the machine's other load). `mcp.Client`
(the high-level client McpConnection is built on) is shown beside it. Only the call loop
is timed (connect and shutdown are not). Servers: the SDK-free fast stub, and the
SDK-based `mcp_servers.lazy` stub.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from _util import Result, fast_stub_args, median, state_dir, table
from mcp import Client, ClientSession, MCPError, StdioServerParameters
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
    # label: (python arguments, rounds); a fast-stub round is ~2 s, an SDK one ~15 s
    "fast stub": (fast_stub_args(), 15),
    "SDK lazy stub": (["-m", "mcp_servers.lazy"], 5),
}

Caller = Callable[[str, dict[str, Any]], Awaitable[Any]]


@dataclass(frozen=True)
class Run:
    """One timed loop: wall seconds, this process's CPU seconds, and the era it spoke.

    CPU time is what the client itself spent, and is far less disturbed by other load
    on a shared 2-core machine than wall time."""

    wall: float
    cpu: float
    protocol: str


async def timed_loop(call: Caller, calls: int, protocol: str) -> Run:
    """Times of `calls` sequential echo calls; every reply is checked."""
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(calls):
        result = await call("echo", {"text": f"m{i}"})
        if result.is_error:
            raise RuntimeError(f"echo failed: {result}")
    return Run(time.perf_counter() - start, time.process_time() - cpu, protocol)


async def via_connection(args: list[str], calls: int, root: Path) -> Run:
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
        if conn.state != "connected" or conn.protocol_version is None:
            raise RuntimeError(f"connection {conn.state}: {conn.error}")
        try:
            return await timed_loop(call, calls, conn.protocol_version)
        finally:
            conn.close()


def _params(args: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(Path.cwd()))


async def via_client(args: list[str], calls: int, root: Path) -> Run:
    """The same loop through `mcp.Client` over the SDK's `stdio_client` (shown, no goal)."""
    with (root / "bare.log").open("a") as errlog:
        async with Client(stdio_client(_params(args), errlog=errlog)) as client:
            await client.list_tools()

            async def call(tool: str, arguments: dict[str, Any]) -> Any:
                return await client.call_tool(tool, arguments, read_timeout_seconds=TOOL_TIMEOUT_S)

            return await timed_loop(call, calls, client.protocol_version)


async def via_session(args: list[str], calls: int, root: Path, *, handshake: bool = False) -> Run:
    """The baseline: a bare `ClientSession` over `stdio_client`, with the same per-call
    timeout, in the era McpConnection negotiates (or the handshake era, if `handshake`)."""
    with (root / "bare.log").open("a") as errlog:
        async with stdio_client(_params(args), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                if handshake:
                    await session.initialize()
                else:
                    try:
                        await session.discover()
                    except MCPError:  # not a 2026-07-28 server: the handshake era
                        await session.initialize()
                # As every client does before calling (and McpConnection did): the session
                # keeps what it learns from the listing (output schemas, header maps).
                await session.list_tools()

                async def call(tool: str, arguments: dict[str, Any]) -> Any:
                    return await session.call_tool(
                        tool, arguments, read_timeout_seconds=TOOL_TIMEOUT_S
                    )

                return await timed_loop(call, calls, session.protocol_version)


async def via_handshake_session(args: list[str], calls: int, root: Path) -> Run:
    """A bare `ClientSession` that only calls `initialize` (the handshake era; no goal)."""
    return await via_session(args, calls, root, handshake=True)


WAYS: dict[str, Callable[[list[str], int, Path], Awaitable[Run]]] = {
    "ours": via_connection,
    "session": via_session,
    "client": via_client,
    "handshake": via_handshake_session,
}
CACHEGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
INSTRUCTION_CALLS = (100, 600)
"""`--instructions` runs each loop under cachegrind twice; the difference is per call."""


def per_round(runs: dict[str, list[Run]], way: str, base: str) -> float:
    """Median over rounds of `way`'s CPU ÷ `base`'s in the same round (load hits both)."""
    return median([a.cpu / b.cpu for a, b in zip(runs[way], runs[base], strict=True)])


def measure(args: list[str], calls: int, rounds: int, root: Path) -> dict[str, list[Run]]:
    """Every way, `rounds` times; the order turns each round, so no way always goes first."""
    runs: dict[str, list[Run]] = {way: [] for way in WAYS}
    for loop in WAYS.values():  # warm-up: every path's imports and first connect
        anyio.run(loop, args, 10, root)
    order = list(WAYS)
    for i in range(rounds):
        for way in order[i % len(order) :] + order[: i % len(order)]:
            runs[way].append(anyio.run(WAYS[way], args, calls, root))
    return runs


def run(quick: bool = False) -> list[Result]:
    calls = QUICK_CALLS if quick else CALLS
    results = []
    with state_dir() as root:
        for label, (args, full_rounds) in SERVERS.items():
            rounds = QUICK_ROUNDS if quick else full_rounds
            runs = measure(args, calls, rounds, root)
            era = runs["ours"][0].protocol
            eras = {r.protocol for way in ("ours", "session", "client") for r in runs[way]}
            if eras != {era}:
                raise RuntimeError(f"{label}: the compared clients spoke different eras: {eras}")
            hs_era = runs["handshake"][0].protocol
            wall = {way: median([r.wall for r in rs]) for way, rs in runs.items()}
            us = {
                way: f"{median([r.cpu for r in rs]) * 1e6 / calls:.0f}" for way, rs in runs.items()
            }
            print(
                f"{label} ({era}): {calls} calls, µs of client CPU a call: session entry "
                f"{us['ours']}, ClientSession {us['session']}, mcp.Client {us['client']}, "
                f"{hs_era} ClientSession {us['handshake']}  (n={rounds})"
            )
            results += [
                Result(
                    "3 call rate",
                    f"{calls} echo calls, session entry ÷ bare ClientSession, client CPU "
                    f"({label}, both {era}; median of per-round ratios)",
                    per_round(runs, "ours", "session"),
                    1.05,
                    f"{us['ours']} vs {us['session']} µs of client CPU a call",
                ),
                Result(
                    "3 call rate",
                    f"same, wall time ({label}, no goal)",
                    wall["ours"] / wall["session"],
                    None,
                    f"{calls / wall['ours']:.0f} vs {calls / wall['session']:.0f} calls/s",
                ),
                Result(
                    "3 call rate",
                    f"mcp.Client ÷ bare ClientSession, client CPU ({label}, no goal)",
                    per_round(runs, "client", "session"),
                    None,
                    f"{us['client']} vs {us['session']} µs a call",
                ),
            ]
            if hs_era != era:
                results.append(
                    Result(
                        "3 call rate",
                        f"the era's own cost: {era} ÷ {hs_era} bare ClientSession, client "
                        f"CPU ({label}, no goal)",
                        per_round(runs, "session", "handshake"),
                        None,
                        f"{us['session']} vs {us['handshake']} µs a call",
                    )
                )
    return results


def one_loop(way: str, label: str, calls: int) -> None:
    """One loop in this process (what `--instructions` runs under cachegrind)."""
    with state_dir() as root:
        anyio.run(WAYS[way], SERVERS[label][0], calls, root)


def instructions(way: str, label: str) -> float:
    """Client instructions per call of `way`, counted by cachegrind (no timing involved)."""
    counts = []
    for calls in INSTRUCTION_CALLS:
        argv = [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
        ]
        argv += [sys.executable, __file__, "--one", way, label, str(calls)]
        out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=900)
        found = re.search(r"I\s+refs:\s+([\d,]+)", out.stderr)
        if found is None:
            raise RuntimeError(f"no instruction count from cachegrind: {out.stderr[-500:]}")
        counts.append(int(found.group(1).replace(",", "")))
    return (counts[1] - counts[0]) / (INSTRUCTION_CALLS[1] - INSTRUCTION_CALLS[0])


def run_instructions() -> list[Result]:
    """The same comparison in instructions: steady where CPU time on a shared VM is not."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt install valgrind)")
    results = []
    for label in SERVERS:
        ours, session = instructions("ours", label), instructions("session", label)
        results.append(
            Result(
                "3 call rate",
                f"client instructions a call, session entry ÷ bare ClientSession ({label})",
                ours / session,
                1.05,
                f"{ours / 1e3:.0f}k vs {session / 1e3:.0f}k instructions (cachegrind)",
            )
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind instead"
    )
    parser.add_argument(
        "--one", nargs=3, metavar=("WAY", "SERVER", "CALLS"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.one:
        way, label, calls = args.one
        one_loop(way, label, int(calls))
        return
    results = run_instructions() if args.instructions else run(args.quick)
    print()
    print(table(results))


if __name__ == "__main__":
    main()
