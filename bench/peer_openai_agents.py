"""The peer side of benchmark 5: openai-agents' `MCPServerStdio` on the same workloads.

Runs only inside bench/.venv-peers (openai-agents is never a project dependency);
`bench/peers.py` runs it once a round, between rounds of ours, and compares. Prints one JSON
object on stdout: fan-out ready times in its default (servers connected one after another)
and its fastest documented mode (`MCPServerManager(connect_in_parallel=True)`), call loops
(wall and this process's CPU) against a bare SDK client with no per-call timeout, and, with
`--orphans`, the orphan checks.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import anyio
from _peer import calls_bare, echo_loop
from _util import fast_stub_args, median
from agents.mcp import MCPServerManager, MCPServerStdio
from orphans import alive, read_pids, reap

SESSION_TIMEOUT_S = 30.0
"""Per-request timeout given to MCPServerStdio; generous so no case fails on a slow start."""


def stdio_server(name: str, *stub_flags: str) -> MCPServerStdio:
    """An openai-agents stdio server running the fast stub."""
    return MCPServerStdio(
        params={"command": sys.executable, "args": fast_stub_args(*stub_flags)},
        name=name,
        client_session_timeout_seconds=SESSION_TIMEOUT_S,
    )


async def fanout(count: int, delay: float, parallel: bool) -> float:
    """Seconds until `count` servers are connected and listed, as an agent run needs."""
    servers = [stdio_server(f"s{i}", "--delay", str(delay)) for i in range(count)]
    start = time.perf_counter()
    async with MCPServerManager(servers, strict=True, connect_in_parallel=parallel) as manager:
        for server in manager.active_servers:  # the Runner lists servers one by one too
            await server.list_tools()
        return time.perf_counter() - start


async def calls_peer(calls: int) -> tuple[float, float]:
    """(wall, CPU) seconds for `calls` sequential echo calls through MCPServerStdio."""
    async with stdio_server("echo") as server:
        await server.list_tools()
        return await echo_loop(server.call_tool, calls)


async def orphan_after_cleanup(pidfile: Path) -> dict[str, Any]:
    """Connect to a stub that spawned a grandchild, clean up normally, look for survivors."""
    async with stdio_server("orphan", "--grandchild", "--pidfile", str(pidfile)) as server:
        await server.list_tools()
    pids = read_pids(pidfile)
    return {"pids": pids, "survivors": await alive_after(pids)}


async def alive_after(pids: list[int], grace: float = 1.0) -> list[int]:
    """The pids still alive after `grace` seconds, then reaped so nothing is left behind."""
    await anyio.sleep(grace)
    survivors = [p for p in pids if alive(p)]
    reap(survivors)
    return survivors


def orphan_after_sigkill(pidfile: Path) -> dict[str, Any]:
    """SIGKILL a process that holds an MCPServerStdio connection; look for survivors."""
    code = (
        "import sys, anyio, peer_openai_agents as p\n"
        "async def main():\n"
        f"    async with p.stdio_server('k', '--grandchild', '--pidfile', {str(pidfile)!r}) as s:\n"
        "        await s.list_tools(); print('ready', flush=True); await anyio.sleep(60)\n"
        "anyio.run(main)\n"
    )
    here = Path(__file__).resolve().parent
    proc = subprocess.Popen(
        [sys.executable, "-c", code], cwd=here, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # bounded: the stub answers in milliseconds
        if line.strip() != "ready":
            raise RuntimeError(f"peer did not connect: {line!r}")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    pids = read_pids(pidfile)
    survivors = anyio.run(alive_after, pids, 2.0)
    return {"pids": pids, "survivors": survivors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fanout", type=int, default=8)
    parser.add_argument("--delay", type=float, default=1.0)
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--orphans", action="store_true", help="also the orphan checks")
    args = parser.parse_args()
    out: dict[str, Any] = {
        "openai-agents": version("openai-agents"),
        "mcp": version("mcp"),
    }
    ready: dict[str, list[float]] = {"seq 1": [], "seq N": [], "par 1": [], "par N": []}
    peer: list[tuple[float, float]] = []
    bare: list[tuple[float, float]] = []
    anyio.run(calls_bare, 10)  # warm-up
    for _ in range(args.rounds):  # interleaved, so drift hits every case alike
        for key in ready:
            count = 1 if key.endswith("1") else args.fanout
            ready[key].append(anyio.run(fanout, count, args.delay, key.startswith("par")))
        peer.append(anyio.run(calls_peer, args.calls))
        bare.append(anyio.run(calls_bare, args.calls))
        print(f"round done: {ready}, peer {peer}, bare {bare}", file=sys.stderr)
    out["ready"] = {k: median(v) for k, v in ready.items()}
    out["calls"] = {
        "peer": median([w for w, _ in peer]),
        "bare": median([w for w, _ in bare]),
        "peer_cpu": median([c for _, c in peer]),
        "bare_cpu": median([c for _, c in bare]),
        "n": args.calls,
    }
    if args.orphans:
        with tempfile.TemporaryDirectory(prefix="subagent-bench-") as tmp:
            out["orphans_cleanup"] = anyio.run(orphan_after_cleanup, Path(tmp) / "a.pid")
            out["orphans_sigkill"] = orphan_after_sigkill(Path(tmp) / "b.pid")
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
