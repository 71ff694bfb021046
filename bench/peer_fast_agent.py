"""The fast-agent side of benchmark 5: its `MCPAggregator` on the same workloads.

Runs only inside .interop/venv-fast-agent (fast-agent-mcp needs Python >= 3.13; never a
project dependency); `bench/peers.py` runs it once a round, beside the openai-agents round and
ours. fast-agent has one way to connect an agent's servers, its default: `load_servers`
attaches them one after another. Prints one JSON object on stdout: fan-out ready times, and
the call loop (wall and this process's CPU) against a bare SDK client with no per-call timeout.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from importlib.metadata import version
from typing import Any

import anyio
from _peer import calls_bare, echo_loop
from _util import fast_stub_args
from fast_agent.config import MCPServerSettings, MCPSettings, Settings
from fast_agent.context import initialize_context
from fast_agent.mcp.mcp_aggregator import MCPAggregator


def settings(count: int, *stub_flags: str) -> Settings:
    """fast-agent settings with `count` fast stubs `s0`..., no session history on disk."""
    servers = {
        f"s{i}": MCPServerSettings(
            name=f"s{i}", command=sys.executable, args=fast_stub_args(*stub_flags)
        )
        for i in range(count)
    }
    return Settings(mcp=MCPSettings(servers=servers), session_history=False)


async def fanout(count: int, delay: float) -> float:
    """Seconds until `count` servers are attached and listed (an agent's start)."""
    context = await initialize_context(settings(count, "--delay", str(delay)))
    start = time.perf_counter()
    async with MCPAggregator(server_names=[f"s{i}" for i in range(count)], context=context) as agg:
        listed = await agg.list_tools()
        took = time.perf_counter() - start
    if len(listed.tools) < 2 * count:
        raise RuntimeError(f"listed {len(listed.tools)} tools from {count} servers")
    return took


async def calls_peer(calls: int) -> tuple[float, float]:
    """(wall, CPU) seconds for `calls` sequential echo calls through the aggregator."""
    context = await initialize_context(settings(1))
    async with MCPAggregator(server_names=["s0"], context=context) as agg:
        await agg.list_tools()
        return await echo_loop(lambda tool, args: agg.call_tool(f"s0__{tool}", args), calls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fanout", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--calls", type=int, default=1000)
    args = parser.parse_args()
    out: dict[str, Any] = {"fast-agent": version("fast-agent-mcp"), "mcp": version("mcp")}
    # fast-agent reads and writes its home and working directory: throwaway ones.
    with tempfile.TemporaryDirectory(prefix="subagent-bench-fa-") as home:
        os.environ["FAST_AGENT_HOME"] = home
        os.chdir(home)
        anyio.run(calls_bare, 10)  # warm-up
        one = anyio.run(fanout, 1, args.delay)
        many = anyio.run(fanout, args.fanout, args.delay)
        peer = anyio.run(calls_peer, args.calls)
        bare = anyio.run(calls_bare, args.calls)
    out["ready"] = {"seq 1": one, "seq N": many}
    out["calls"] = {
        "peer": peer[0],
        "bare": bare[0],
        "peer_cpu": peer[1],
        "bare_cpu": bare[1],
        "n": args.calls,
    }
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
