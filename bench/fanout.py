"""Benchmark 2: ready-barrier time with 8 servers ÷ with 1 (goal ≤ 1.1).

Every server is the SDK-free fast stub sleeping `DELAY_S` before it serves, so the
ratio shows whether servers start concurrently. Measured through `Session.run`:
from the call to the moment its body starts (every server listed its tools).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import anyio
from _util import BENCH_DIR, Result, bench_main, fast_stub_args, median, spread, state_dir

from launcher.config.types import AgentSpec, ServerSpec
from launcher.session import Session

DELAY_S = 1.0
FANOUT = 8
ROUNDS = 3
QUICK_ROUNDS = 1


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
        AgentSpec(name="bench"),
        stub_specs(count, delay),
        workspace=root,
        state_home=root / "state",
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
        [sys.executable, "-c", code], cwd=BENCH_DIR, capture_output=True, text=True, check=True
    )
    return float(json.loads(out.stdout)[0])


def run(quick: bool = False) -> list[Result]:
    rounds = QUICK_ROUNDS if quick else ROUNDS
    ready: dict[int, list[float]] = {1: [], FANOUT: []}
    close: dict[int, list[float]] = {1: [], FANOUT: []}
    cold = cold_ready(1, DELAY_S)
    with state_dir() as root:
        anyio.run(session_times, 1, 0.0, root)  # warm-up: lazy SDK import, .pyc files
        for _ in range(rounds):
            for count in ready:  # interleaved, so drift hits both alike
                r, c = anyio.run(session_times, count, DELAY_S, root)
                ready[count].append(r)
                close[count].append(c)
    for count in ready:
        print(
            f"{count} server(s), {DELAY_S:g} s start each: ready {spread(ready[count])}, "
            f"close {spread(close[count])}  (n={rounds})"
        )
    one, many = median(ready[1]), median(ready[FANOUT])
    return [
        Result(
            "2 fan-out",
            f"ready barrier {FANOUT} servers ÷ 1 server ({DELAY_S:g} s start)",
            many / one,
            1.1,
            f"{many * 1000:.0f} ms vs {one * 1000:.0f} ms; "
            f"overhead above the sleep {(many - DELAY_S) * 1000:.0f} vs "
            f"{(one - DELAY_S) * 1000:.0f} ms",
        ),
        Result(
            "2 fan-out",
            f"session close {FANOUT} servers ÷ 1 server (no goal)",
            median(close[FANOUT]) / median(close[1]),
            None,
            f"{spread(close[FANOUT])} vs {spread(close[1])}",
        ),
        Result(
            "2 fan-out",
            "cold first session ÷ warm session, 1 server (no goal)",
            cold / one,
            None,
            f"{cold * 1000:.0f} ms vs {one * 1000:.0f} ms: a fresh process loads the SDK "
            "while its servers start",
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
