"""Benchmark 3: echo calls through a real Session ÷ a bare SDK ClientSession (≤ 1.05).

Ours is a model's call as a run makes it: a real `Session` (its events.jsonl sink, its secret
mask holding a secret from the environment, as a user with an API key has) and the agent
loop's `run_calls` (the `tool_call` event, the veto, the admitted entry's `run`: argument
check, `McpConnection.call` with the server's tool timeout, result finishing; the
`tool_result` event). The baseline is the SDK's lowest client, `ClientSession` over its own
`stdio_client`, with no handicap: no per-call timeout (it needs none), having listed the
tools once, speaking the same protocol era (it negotiates as McpConnection does:
`server/discover`, falling back to `initialize`; the run stops if the eras differ). An SDK
server speaks 2026-07-28, whose requests carry more than the handshake era's; that cost is
the protocol's, and is shown in a row of its own (a `ClientSession` that only calls
`initialize`). The goal is on the client's CPU time per call (wall time moves with the
server and the machine's other load), as the median of per-round ratios, the ways' order
turning each round; `--instructions` counts instructions under cachegrind instead (steady
where CPU time on a shared VM is not). `mcp.Client` (what McpConnection is built on) is shown
beside it. Only the call loop is timed (connect and shutdown are not). Servers: the SDK-free
fast stub, and the SDK-based `mcp_servers.lazy` stub.
"""

from __future__ import annotations

import argparse
import os
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
from _util import (
    Result,
    Size,
    fast_stub_args,
    load_line,
    median,
    size_arguments,
    size_of,
    sized,
    state_dir,
    table,
)
from mcp import Client, ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher.agent import AgentLoop
from launcher.config.types import AgentSpec, ServerSpec
from launcher.models.base import ToolCall
from launcher.run_plan import RunPlan
from launcher.session import Session
from launcher.toolset.types import ToolResult

SECRET_ENV = ("BENCH_API_KEY", "sk-bench-0123456789abcdef0123456789")
"""A secret in ours' environment, as a user with an API key has: the mask has work to do."""
SERVERS: dict[str, tuple[list[str], tuple[int, int, int]]] = {
    # label: (python arguments, rounds by size); a fast-stub round is ~2 s, an SDK one ~15 s
    "fast stub": (fast_stub_args(), (15, 3, 1)),
    "SDK lazy stub": (["-m", "mcp_servers.lazy"], (5, 1, 0)),
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


class _NoModel:
    """The loop's model is never asked: the benchmark hands the loop its calls."""

    spec = "bench:none"

    async def complete(self, request: object) -> object:
        raise AssertionError("not used")


async def via_session_loop(args: list[str], calls: int, root: Path) -> Run:
    """A model's calls as a run makes them: a real Session (events.jsonl, the secret mask)
    and the agent loop's `run_calls` (events, veto, the entry's run), one call a turn."""
    spec = ServerSpec(name="bench", command=sys.executable, args=tuple(args))
    os.environ.setdefault(*SECRET_ENV)
    plan = RunPlan(AgentSpec(name="bench"), {"bench": spec}, workspace=root, state_home=root)
    session = Session(plan)
    loop = AgentLoop(session, _NoModel())  # type: ignore[arg-type]

    async def body(s: Session) -> Run:
        conn = s.connections["bench"]
        if conn.state != "connected" or conn.protocol_version is None:
            raise RuntimeError(f"connection {conn.state}: {conn.error}")
        offered = s.offer().by_name
        turn = 0

        async def call(tool: str, arguments: dict[str, Any]) -> ToolResult:
            nonlocal turn
            turn += 1
            results: list[ToolResult | None] = [None]
            await loop.run_calls(turn, [ToolCall(f"c{turn}", f"bench__{tool}", arguments)],
                                 results, offered)  # fmt: skip
            assert results[0] is not None
            return results[0]

        return await timed_loop(call, calls, conn.protocol_version)

    return await session.run(body)


def _params(args: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=args, cwd=str(Path.cwd()))


async def via_client(args: list[str], calls: int, root: Path) -> Run:
    """The same loop through `mcp.Client` over the SDK's `stdio_client` (shown, no goal)."""
    with (root / "bare.log").open("a") as errlog:
        async with Client(stdio_client(_params(args), errlog=errlog)) as client:
            await client.list_tools()

            async def call(tool: str, arguments: dict[str, Any]) -> Any:
                return await client.call_tool(tool, arguments)

            return await timed_loop(call, calls, client.protocol_version)


async def via_session(args: list[str], calls: int, root: Path, *, handshake: bool = False) -> Run:
    """The baseline: a bare `ClientSession` over `stdio_client`, no per-call timeout (it
    needs none), in the era McpConnection negotiates (or the handshake era, if `handshake`)."""
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
                    return await session.call_tool(tool, arguments)

                return await timed_loop(call, calls, session.protocol_version)


async def via_handshake_session(args: list[str], calls: int, root: Path) -> Run:
    """A bare `ClientSession` that only calls `initialize` (the handshake era; no goal)."""
    return await via_session(args, calls, root, handshake=True)


WAYS: dict[str, Callable[[list[str], int, Path], Awaitable[Run]]] = {
    "ours": via_session_loop,
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


def run(size: Size = "full") -> list[Result]:
    calls = sized(size, 1000, 200, 20)
    results = []
    with state_dir() as root:
        for label, (args, by_size) in SERVERS.items():
            rounds = sized(size, *by_size)
            if not rounds:
                continue  # smoke: the SDK stub's start-up alone would take most of the budget
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
                f"{label} ({era}): {calls} calls, µs of client CPU a call: real Session "
                f"{us['ours']}, ClientSession {us['session']}, mcp.Client {us['client']}, "
                f"{hs_era} ClientSession {us['handshake']}  (n={rounds})"
            )
            results += [
                Result(
                    "3 call rate",
                    f"{calls} echo calls, real Session ÷ bare ClientSession, client CPU "
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
                f"client instructions a call, real Session ÷ bare ClientSession ({label})",
                ours / session,
                1.05,
                f"{ours / 1e3:.0f}k vs {session / 1e3:.0f}k instructions (cachegrind)",
            )
        )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size_arguments(parser)
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
    print(load_line(), flush=True)
    results = run_instructions() if args.instructions else run(size_of(args))
    print()
    print(table(results))
    print(load_line())


if __name__ == "__main__":
    main()
