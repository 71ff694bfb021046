"""Benchmark 6: time per MB of one big stdio line, 50 MB ÷ 1 MB (goal ≤ 1.5: linear).

Once started, a child writes one JSON-RPC notification of N MB when it reads a stdin line;
the time from sending that line through `stdio_transport` to receiving the parsed message
is divided by N. A quadratic reader (bytes += chunk; split) makes the 50 MB line cost
far more per MB than the 1 MB one; a linear one costs about the same.
"""

from __future__ import annotations

import functools
import sys
import time
import tracemalloc

import anyio
import mcp_types as types
from _util import Result, Size, bench_main, median, sized, spread
from mcp.shared.message import SessionMessage

from launcher.bridge.process import StdioChild, spawn_server
from launcher.bridge.stdio import stdio_transport

SMALL_MB = 1
LARGE_MB = 50
SMALL_REPEATS = 5
"""1 MB lines per round: each is short enough for start-up noise to matter."""
ROUND_LIMIT_S = 120.0
"""Bounds one round; the old quadratic reader took ~31 s for the 50 MB line."""

CHILD = r"""
import sys
size = int(sys.argv[1])
head = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"'
chunk = b"x" * (1 << 20)
sys.stdout.buffer.write(b'{"jsonrpc":"2.0","method":"notifications/ready"}\n')
sys.stdout.buffer.flush()
while sys.stdin.buffer.readline():
    out = sys.stdout.buffer
    out.write(head)
    for _ in range(size):
        out.write(chunk)
    out.write(b'"}}\n')
    out.flush()
"""

TRIGGER = SessionMessage(types.JSONRPCNotification(jsonrpc="2.0", method="notifications/go"))


async def one_line(mb: int, *, trace: bool = False) -> float:
    """Seconds to receive one `mb`-MB line after asking for it (or, traced, peak bytes).

    The child writes nothing to stderr (a pipe since the connection masks server stderr).
    """
    process = await spawn_server(sys.executable, ["-S", "-c", CHILD, str(mb)], env={}, cwd=None)
    child = StdioChild(pid=process.pid, process=process)
    async with stdio_transport(child) as (read, write):
        with anyio.fail_after(ROUND_LIMIT_S):
            await read.receive()  # ready: the child's start-up is not timed
            if trace:
                tracemalloc.start()
            start = time.perf_counter()
            await write.send(TRIGGER)
            message = await read.receive()
            elapsed = time.perf_counter() - start
            if trace:
                elapsed = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
    if isinstance(message, Exception):
        raise RuntimeError(f"the {mb} MB line did not parse: {message}")
    return elapsed


def run(size: Size = "full") -> list[Result]:
    """Interleaved rounds of the 1 MB and the large line; the median over rounds of the
    large line's seconds per MB ÷ that round's 1 MB lines'."""
    large_mb = sized(size, LARGE_MB, LARGE_MB, 4)
    small: list[float] = []
    large: list[float] = []
    ratios: list[float] = []
    for _ in range(sized(size, 3, 1, 1)):
        round_small = [anyio.run(one_line, SMALL_MB) / SMALL_MB for _ in range(SMALL_REPEATS)]
        small += round_small
        large.append(anyio.run(one_line, large_mb) / large_mb)
        ratios.append(large[-1] / median(round_small))
        print(f"   1 MB: {small[-1] * 1000:.1f} ms/MB, {large_mb} MB: {large[-1] * 1000:.1f} ms/MB")
    # Apart from the timed rounds: tracing slows every allocation.
    peak = anyio.run(functools.partial(one_line, large_mb, trace=True))
    ratio = median(ratios)
    detail = (
        f"per MB: {large_mb} MB {spread(large)}, 1 MB {spread(small)}; "
        f"{large_mb} MB peak traced memory {peak / 2**20:.0f} MiB"
    )
    metric = f"s/MB at {large_mb} MB ÷ s/MB at 1 MB (per-round ratios)"
    return [Result("stdio_lines", metric, ratio, 1.5, detail)]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
