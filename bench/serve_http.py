"""Benchmark 14: `subagent serve --http` — overhead per spawn over HTTP ÷ over stdio, and 32
foreground spawns at once from 8 HTTP hosts.

Overhead, as in serve_spawn.py: a foreground `spawn_subagent` whose scripted model answers at
once, time to result minus the run's own `usage.duration_s`. One stdio serve and one HTTP
serve run side by side; each round spawns through one then the other (the order turning each
round), a pause before each spawn (a spare waiting, as after a host's model turn); the figure
is the median of the per-round ratios. Then 32 foreground spawns (each thinking 1 s) from 8
HTTP hosts at once, `--max-concurrent 32`: all must complete; the p95 of their overheads ÷
the median HTTP overhead of the rounds; serve's peak RSS while they are in flight. The burst
runs twice: against serve's default (one spare worker: most spawns start a worker), and
against a serve started with `--spares 32` once its 32 spares are done importing (a shared
service sized for its burst).
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from _util import Result, Size, bench_main, median, pair_ratios, sized, state_dir
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

LIMIT_S = 300.0
"""Bounds each call and serve's start; 32 workers starting at once on a loaded 2-core box."""
LISTEN_S = 60.0
"""serve's config load and SDK import before it listens."""
GAP_S = 1.0
"""The pause before each paired spawn: a spare's start-up on a loaded box."""
LISTENING = re.compile(r"listening on (http://\S+)")


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _serve_argv(root: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "launcher.cli", "serve", "--config-dir", str(root / "cfg"),
            *extra]  # fmt: skip


def _start_http(root: Path, env: dict[str, str], *extra: str) -> subprocess.Popen[bytes]:
    with (root / "http.err").open("wb") as errlog:
        return subprocess.Popen(
            _serve_argv(root, "--http", "127.0.0.1:0", *extra),
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errlog, env=env, cwd=root,
        )  # fmt: skip


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM (serve drains), killed if it outlives LISTEN_S."""
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(LISTEN_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@asynccontextmanager
async def http_serve(
    root: Path, env: dict[str, str], *extra: str
) -> AsyncIterator[tuple[int, str]]:
    """(pid, url) of `serve --http 127.0.0.1:0`, SIGTERM'd on the way out."""
    err = root / "http.err"
    proc = _start_http(root, env, *extra)
    try:
        with anyio.fail_after(LISTEN_S):
            while not (found := LISTENING.findall(err.read_text(errors="replace"))):
                if proc.poll() is not None:
                    raise RuntimeError(f"serve --http ended: {err.read_text()[-2000:]}")
                await anyio.sleep(0.05)
        yield proc.pid, found[0]
    finally:
        _stop(proc)


@asynccontextmanager
async def http_host(url: str) -> AsyncIterator[Client]:
    """One host: the SDK's client over streamable HTTP (2025-11-25, a session)."""
    async with AsyncExitStack() as stack:
        http = await stack.enter_async_context(create_mcp_http_client())
        transport = streamable_http_client(url, http_client=http)
        client = Client(transport, read_timeout_seconds=LIMIT_S)  # type: ignore[arg-type]
        yield await stack.enter_async_context(client)


async def overhead(client: Client, script: Path) -> float:
    """Seconds a foreground spawn took beyond its run's own duration."""
    start = time.perf_counter()
    result = await client.call_tool(
        "spawn_subagent", {"prompt": "go", "model": f"scripted:{script}"}
    )
    wall = time.perf_counter() - start
    content: dict[str, Any] = result.structured_content or {}
    if content.get("status") != "completed":
        raise RuntimeError(f"spawn did not complete: {content}")
    return wall - float(content.get("usage", {}).get("duration_s", 0.0))


async def measure(root: Path, rounds: int, hosts: int, each: int, gap: float) -> list[Result]:
    (root / "cfg").mkdir()
    (root / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
    quick = root / "quick.yaml"
    quick.write_text("steps:\n  - say: hi\n")
    think = root / "think.yaml"
    think.write_text("steps:\n  - sleep: 1\n    say: hi\n")
    env = {**os.environ, "SUBAGENT_HOME": str(root / "home")}
    total = hosts * each
    params = StdioServerParameters(command=sys.executable, args=_serve_argv(root)[1:], env=env,
                                   cwd=str(root))  # fmt: skip
    over_http: list[float] = []
    over_stdio: list[float] = []
    with (root / "stdio.err").open("w") as errlog:
        async with (
            http_serve(root, env, "--max-concurrent", str(total)) as (serve_pid, url),
            Client(stdio_client(params, errlog=errlog), read_timeout_seconds=LIMIT_S) as stdio,
            http_host(url) as http,
        ):
            await overhead(stdio, quick)  # warm-up: the page cache, each serve's first spare
            await overhead(http, quick)
            for n in range(rounds):
                ways = [(stdio, over_stdio), (http, over_http)]
                for client, sample in ways if n % 2 == 0 else ways[::-1]:
                    await anyio.sleep(gap)
                    sample.append(await overhead(client, quick))

            default = await burst(url, serve_pid, hosts, each, think)
    # A service sized for the burst: its spares started and imported before the hosts call.
    async with http_serve(root, env, "--max-concurrent", str(total), "--spares", str(total)) as (
        sized_pid,
        sized_url,
    ):
        with anyio.fail_after(LIMIT_S):
            while len(ready_spares(sized_pid)) < total:  # noqa: ASYNC110 (polled from outside, as ps)
                await anyio.sleep(0.1)
        tuned = await burst(sized_url, sized_pid, hosts, each, think)
    single = median(over_http)
    ratio = median(pair_ratios(over_http, over_stdio))
    return [
        Result("14 serve http", "overhead per foreground spawn, HTTP ÷ stdio", ratio, 1.2,
               f"median of {rounds} pair ratios; {single * 1000:.0f} vs "
               f"{median(over_stdio) * 1000:.0f} ms"),
        *default.results(f"{total} spawns from {hosts} HTTP hosts at once", single, None),
        *tuned.results(f"the same, `--spares {total}`", single, 2.0),
    ]  # fmt: skip


@dataclass
class Burst:
    """What one burst of concurrent spawns measured."""

    overheads: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    peak_kib: int = 0
    busy_s: float = 0.0
    """The machine's CPU seconds over the burst (every process: serve, workers, the hosts)."""
    serve_s: float = 0.0
    """serve's own CPU seconds over the burst."""
    hosts_s: float = 0.0
    """This process's (the hosts') CPU seconds over the burst."""

    def results(self, what: str, single: float, goal: float | None) -> list[Result]:
        """Not completed, p95 overhead ÷ one spawn's (`goal`: None for info), peak RSS, and
        the CPU the burst took: the floor of its p95 on this machine's cores."""
        count = max(1, len(self.overheads) + len(self.failures))
        cores = len(os.sched_getaffinity(0))
        done = sorted(self.overheads)
        p95 = done[max(0, math.ceil(0.95 * len(done)) - 1)] if done else float("inf")
        return [
            Result("14 serve http", f"{what}: not completed", float(len(self.failures)), 0,
                   "; ".join(self.failures[:2]) or "all completed"),
            Result("14 serve http", f"{what}: p95 overhead ÷ one spawn's", p95 / single, goal,
                   f"p95 {p95 * 1000:.0f} ms, one {single * 1000:.0f} ms"),
            Result("14 serve http", f"{what}: serve's peak RSS, MiB", self.peak_kib / 1024,
                   None, "VmRSS sampled every 50 ms"),
            Result("14 serve http", f"{what}: CPU per spawn, ms (all processes)",
                   self.busy_s / count * 1000, None,
                   f"{self.busy_s:.2f} CPU-s on {cores} cores = {self.busy_s / cores:.2f} s; of it"
                   f" serve {self.serve_s:.2f}, the hosts {self.hosts_s:.2f}, the workers"
                   f" and the rest {self.busy_s - self.serve_s - self.hosts_s:.2f}"),
        ]  # fmt: skip


def ready_spares(parent: int) -> list[int]:
    """`parent`'s spare workers done importing (named `subagent-spare`), as `ps` shows them."""
    from launcher.backend.spare import SPARE_NAME

    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text() if entry.name.isdigit() else ""
            if stat and int(stat.rsplit(")", 1)[1].split()[1]) == parent:
                if (entry / "comm").read_text().strip() == SPARE_NAME:
                    found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


async def burst(url: str, serve_pid: int, hosts: int, each: int, think: Path) -> Burst:
    """`hosts` HTTP hosts at once, each with `each` foreground spawns at once."""
    out = Burst()

    async def one(client: Client) -> None:
        try:
            out.overheads.append(await overhead(client, think))
        except Exception as exc:  # counted: "all complete" is a figure here
            out.failures.append(f"{type(exc).__name__}: {exc}")

    async def host() -> None:
        async with http_host(url) as client, anyio.create_task_group() as calls:
            for _ in range(each):
                calls.start_soon(one, client)

    busy, serve, own = _busy_s(), _cpu_s(serve_pid), time.process_time()
    async with anyio.create_task_group() as tg:
        for _ in range(hosts):
            tg.start_soon(host)
        with anyio.fail_after(LIMIT_S):
            while len(out.overheads) + len(out.failures) < hosts * each:
                out.peak_kib = max(out.peak_kib, _rss_kib(serve_pid))
                await anyio.sleep(0.05)
    out.busy_s = _busy_s() - busy
    out.serve_s = _cpu_s(serve_pid) - serve
    out.hosts_s = time.process_time() - own
    return out


TICK_S = 1 / os.sysconf("SC_CLK_TCK")


def _busy_s() -> float:
    """CPU seconds every process of the machine has used since boot (/proc/stat: all but
    idle and iowait)."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) * TICK_S


def _cpu_s(pid: int) -> float:
    """CPU seconds `pid` itself has used (utime + stime)."""
    after = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(after[11]) + int(after[12])) * TICK_S


def run(size: Size = "full") -> list[Result]:
    """Overhead over HTTP against stdio, and a burst of concurrent HTTP spawns."""
    rounds = sized(size, 9, 5, 1)
    hosts, each = sized(size, (8, 4), (8, 4), (2, 2))
    with state_dir() as root:
        return anyio.run(measure, root, rounds, hosts, each, sized(size, GAP_S, GAP_S, 0.2))


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
