"""Benchmark 7: `subagent serve` — overhead per spawn, and memory across 16 sub-agents.

Overhead: a foreground `spawn_subagent` whose scripted model answers at once, wall time of
the call minus the run's own duration (its `usage.duration_s`): what serve, the worker
process and its start-up add. Measured twice: spawns back to back (each finds the spare
serve started for it still importing, or none), and spawns a pause apart, as a host's
calls come after a model turn (each finds a spare waiting). Memory: 16 background
sub-agents (each thinking 1 s), at most 4 at once; the peak RSS of each worker, and
serve's own RSS after the first 4 ÷ after all 16.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import anyio
from _util import Result, Size, bench_main, sized, state_dir
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

BACKGROUND = 16
AT_ONCE = 4
LIMIT_S = 300.0
POLL_S = 0.05
GAP_S = 2.0
"""The pause before each spaced spawn: a spare's start-up (~0.4 s of CPU) on a loaded box."""


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _pids(needle: bytes, marker: bytes) -> list[int]:
    """Processes whose command line has `needle` and whose command line or environment
    has `marker` (this run's temp dir)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes()
                if needle in cmdline and (
                    marker in cmdline or marker in (entry / "environ").read_bytes()
                ):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


async def measure(root: Path, spawns: int, background: int, gap: float) -> list[Result]:
    (root / "cfg").mkdir()
    (root / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
    quick = root / "quick.yaml"
    quick.write_text("steps:\n  - say: hi\n")
    think = root / "think.yaml"
    think.write_text("steps:\n  - sleep: 1\n    say: hi\n")
    env = {**os.environ, "SUBAGENT_HOME": str(root / "home")}
    marker = str(root).encode()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher.cli", "serve", "--config-dir", str(root / "cfg"),
              "--max-concurrent", str(AT_ONCE)],
        env=env,
        cwd=str(root),
    )  # fmt: skip
    overheads: list[float] = []
    spaced: list[float] = []
    with (root / "serve.err").open("w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as c:
            (serve_pid,) = _pids(b"launcher.cli", marker)
            for _ in range(spawns + 1):  # the first one warms the page cache
                start = time.perf_counter()
                result = await c.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{quick}"}
                )
                wall = time.perf_counter() - start
                usage = (result.structured_content or {}).get("usage", {})
                overheads.append(wall - float(usage.get("duration_s", 0.0)))
            overheads = overheads[1:]
            for _ in range(spawns):
                await anyio.sleep(gap)
                start = time.perf_counter()
                result = await c.call_tool(
                    "spawn_subagent", {"prompt": "go", "model": f"scripted:{quick}"}
                )
                wall = time.perf_counter() - start
                usage = (result.structured_content or {}).get("usage", {})
                spaced.append(wall - float(usage.get("duration_s", 0.0)))

            ids = []
            for _ in range(background):
                r = await c.call_tool(
                    "spawn_subagent",
                    {"prompt": "go", "model": f"scripted:{think}", "background": True},
                )
                ids.append((r.structured_content or {})["agent_id"])
            worker_peaks: dict[int, int] = {}
            serve_rss: list[int] = []
            done = 0
            deadline = time.monotonic() + LIMIT_S
            while done < background and time.monotonic() < deadline:
                for pid in _pids(b"launcher.backend.worker", marker):
                    worker_peaks[pid] = max(worker_peaks.get(pid, 0), _status_kib(pid, "VmHWM"))
                finished = 0
                for agent_id in ids:
                    r = await c.call_tool("get_subagent_result", {"agent_id": agent_id})
                    finished += (r.structured_content or {}).get("status") == "completed"
                if finished >= AT_ONCE and not serve_rss:
                    serve_rss.append(_status_kib(serve_pid, "VmRSS"))
                done = finished
                await anyio.sleep(POLL_S)
            serve_rss.append(_status_kib(serve_pid, "VmRSS"))
    median_ms = statistics.median(overheads) * 1000
    spaced_ms = statistics.median(spaced) * 1000
    peak_mib = max(worker_peaks.values(), default=0) / 1024
    return [
        Result("7 serve", "overhead per foreground spawn, ms (time to result − run time)",
               median_ms, 150, f"median of {len(overheads)}: {median_ms:.0f} ms"),
        Result("7 serve", f"overhead per foreground spawn, ms, {gap:g} s apart",
               spaced_ms, 150, f"median of {len(spaced)}: {spaced_ms:.0f} ms"),
        Result("7 serve", f"peak RSS of a worker, MiB ({background} runs, {AT_ONCE} at once)",
               peak_mib, 60, f"{len(worker_peaks)} workers seen"),
        Result("7 serve", f"serve's RSS after {background} ÷ after {AT_ONCE} runs",
               serve_rss[-1] / max(serve_rss[0], 1), 1.1,
               f"{serve_rss[-1] / 1024:.0f} vs {serve_rss[0] / 1024:.0f} MiB"),
    ]  # fmt: skip


def run(size: Size = "full") -> list[Result]:
    """Overhead and memory of serve's sub-agents."""
    spawns, background = sized(size, 7, 3, 1), sized(size, BACKGROUND, BACKGROUND, AT_ONCE + 1)
    with state_dir() as root:
        return anyio.run(measure, root, spawns, background, sized(size, GAP_S, GAP_S, 0.5))


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
