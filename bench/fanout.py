"""Benchmark 2: ready-barrier time with 8 servers ÷ with 1 (goal ≤ 1.1).

Every server is the SDK-free fast stub sleeping `DELAY_S` before it serves, so the
ratio shows whether servers start concurrently. Measured through `Session.run`:
from the call to the moment its body starts (every server listed its tools). The median
of per-round ratios (1 and 8 servers alternate). `--servers 1,8,16` prints the scale
table instead: each count ÷ 1 server.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anyio
from _util import (
    BENCH_DIR,
    Result,
    Size,
    fast_stub_args,
    median,
    pair_ratios,
    scale_main,
    sized,
    spread,
    state_dir,
)

from launcher.config.types import AgentSpec, ServerSpec
from launcher.run_plan import RunPlan
from launcher.session import Session

DELAY_S = 1.0
FANOUT = 8


def stub_specs(count: int, delay: float) -> dict[str, ServerSpec]:
    """`count` fast stubs, each sleeping `delay` before serving."""
    return {
        f"s{i}": ServerSpec(
            name=f"s{i}", command="python", args=tuple(fast_stub_args("--delay", str(delay)))
        )
        for i in range(count)
    }


async def session_times(count: int, delay: float, root: Path) -> tuple[float, float]:
    """(seconds to the ready barrier, seconds to close) for one session of `count` stubs."""
    session = Session(
        RunPlan(
            AgentSpec(name="bench"),
            stub_specs(count, delay),
            workspace=root,
            state_home=root / "state",
        )
    )
    start = time.perf_counter()
    marks: dict[str, float] = {}

    async def body(s: Session) -> None:
        marks["ready"] = time.perf_counter()
        connected = sum(c.state == "connected" for c in s.connections.values())
        if connected != count:
            raise RuntimeError(f"only {connected}/{count} servers connected")

    await session.run(body)
    end = time.perf_counter()
    return marks["ready"] - start, end - marks["ready"]


def cold_ready(count: int, delay: float) -> float:
    """Ready-barrier seconds of the first session in a fresh interpreter (as the CLI runs)."""
    code = (
        "import anyio, json, pathlib, sys, tempfile; import fanout; "
        "d = tempfile.mkdtemp(prefix='subagent-bench-'); "
        f"print(json.dumps(anyio.run(fanout.session_times, {count}, {delay}, pathlib.Path(d))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=BENCH_DIR, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise RuntimeError(f"the cold session failed: {out.stderr[-1500:]}")
    return float(json.loads(out.stdout)[0])


def scale(counts: list[int], size: Size) -> list[Result]:
    """Ready barrier with each count of servers ÷ with 1, alternating, per-round ratios."""
    rounds, delay = sized(size, 3, 1, 1), sized(size, DELAY_S, DELAY_S, 0.1)
    ready: dict[int, list[float]] = {n: [] for n in dict.fromkeys([1, *counts])}
    with state_dir() as root:
        anyio.run(session_times, 1, 0.0, root)  # warm-up: lazy SDK import, .pyc files
        for _ in range(rounds):
            for count in ready:  # interleaved, so drift hits every count alike
                ready[count].append(anyio.run(session_times, count, delay, root)[0])
    return [
        Result(
            "2 fan-out",
            f"ready barrier {count} servers ÷ 1 server ({delay:g} s start each)",
            median(pair_ratios(ready[count], ready[1])),
            1.1,
            f"{spread(ready[count])} vs {spread(ready[1])}",
        )
        for count in ready
        if count != 1
    ]


def run(size: Size = "full") -> list[Result]:
    rounds = sized(size, 3, 1, 1)
    delay = sized(size, DELAY_S, DELAY_S, 0.1)
    ready: dict[int, list[float]] = {1: [], FANOUT: []}
    close: dict[int, list[float]] = {1: [], FANOUT: []}
    with state_dir() as root:
        anyio.run(session_times, 1, 0.0, root)  # warm-up: lazy SDK import, .pyc files
        for _ in range(rounds):
            for count in ready:  # interleaved, so drift hits both alike
                r, c = anyio.run(session_times, count, delay, root)
                ready[count].append(r)
                close[count].append(c)
    cold = [cold_ready(1, delay) for _ in range(rounds)]  # fresh interpreters
    for count in ready:
        print(
            f"{count} server(s), {delay:g} s start each: ready {spread(ready[count])}, "
            f"close {spread(close[count])}  (n={rounds})"
        )
    one, many = median(ready[1]), median(ready[FANOUT])
    return [
        Result(
            "2 fan-out",
            f"ready barrier {FANOUT} servers ÷ 1 server ({delay:g} s start; per-round ratios)",
            median(pair_ratios(ready[FANOUT], ready[1])),
            1.1,
            f"{many * 1000:.0f} ms vs {one * 1000:.0f} ms; "
            f"overhead above the sleep {(many - delay) * 1000:.0f} vs "
            f"{(one - delay) * 1000:.0f} ms",
        ),
        Result(
            "2 fan-out",
            f"session close {FANOUT} servers ÷ 1 server (no goal)",
            median(pair_ratios(close[FANOUT], close[1])),
            None,
            f"{spread(close[FANOUT])} vs {spread(close[1])}",
        ),
        Result(
            "2 fan-out",
            "cold first session ÷ warm session, 1 server (no goal)",
            median(pair_ratios(cold, ready[1])),
            None,
            f"{spread(cold)} vs {spread(ready[1])}: a fresh process loads the SDK "
            "while its servers start",
        ),
    ]


if __name__ == "__main__":
    scale_main(run, scale, __doc__.splitlines()[0], "--servers", "1,8,16")
