"""Benchmark: what Claude Code hooks cost a tool call (issue 35 item 3).

One tool whose caller returns at once, called through `ToolEntry.run` as the agent loop
calls it: with no hooks (the baseline), with hooks none of which matches the tool (the
price every call of a Claude Code agent with hooks pays), and with one matching
PreToolUse hook that exits 0 (a hook process a call: its spawn is the cost Claude Code
pays too). Rounds interleave the ways; each ratio is the median of per-round ratios.
The load average is printed: on a shared 2-core machine it moves the absolute numbers.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
from _util import Result, Size, bench_main, median, sized, state_dir

from launcher.config.hooks_field import HookSpec
from launcher.events import Event
from launcher.hooks.run import RunHooks
from launcher.secrets import SecretMask
from launcher.toolset.types import ToolEntry, ToolResult

CALLS, QUICK_CALLS = 2000, 500
"""Calls a round on the paths that start no process."""
SPAWNS, QUICK_SPAWNS = 40, 10
"""Calls a round with a hook process each."""
ROUNDS, QUICK_ROUNDS = 5, 2


async def _noop(arguments: dict[str, Any]) -> ToolResult:
    return ToolResult("ok")


def _check(arguments: dict[str, Any]) -> str | None:
    return None if isinstance(arguments.get("command"), str) else "'command' is required"


ENTRY = ToolEntry("Bash", "builtin", "bash", "", {"type": "object"}, _noop, check=_check)


def _hooks(workspace: Path, *specs: HookSpec) -> RunHooks:
    async def emit(event: Event) -> None:
        return None

    return RunHooks(
        specs,
        agent="bench",
        session_id="bench",
        workspace=workspace,
        transcript=workspace / "events.jsonl",
        emit=emit,
        mask=SecretMask(),
    )


async def _per_call(guard: RunHooks | None, calls: int, wall: bool = False) -> float:
    """CPU seconds a call (`wall`: wall seconds, for a hook process: its spawn is the cost)."""
    clock = time.perf_counter if wall else time.process_time
    start = clock()
    for _ in range(calls):
        await ENTRY.run({"command": "true"}, guard)
    return (clock() - start) / calls


def run(size: Size = "full") -> list[Result]:
    calls = sized(size, CALLS, QUICK_CALLS, 50)
    spawns = sized(size, SPAWNS, QUICK_SPAWNS, 2)
    rounds = sized(size, ROUNDS, QUICK_ROUNDS, 1)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    with state_dir() as tmp:
        other = _hooks(tmp, HookSpec(event="PreToolUse", command="exit 2", matcher="Read"))
        matching = _hooks(tmp, HookSpec(event="PreToolUse", command="exit 0", matcher="Bash"))
        idle, unmatched, spawned, bare_for_spawn = [], [], [], []
        for _ in range(rounds):
            bare = anyio.run(_per_call, None, calls)
            idle.append(bare)
            unmatched.append(anyio.run(_per_call, other, calls) / bare)
            hooked = anyio.run(_per_call, matching, spawns, True)
            bare_wall = anyio.run(_per_call, None, calls, True)
            spawned.append(hooked)
            bare_for_spawn.append(hooked / bare_wall)
    no_match = median(unmatched)
    one_hook = median(spawned)
    print(f"load average: {load}")
    return [
        Result(
            "hooks",
            "tool call with hooks none of which matches ÷ no hooks, CPU a call",
            no_match,
            detail=f"+{(no_match - 1) * median(idle) * 1e6:.2f} µs on {median(idle) * 1e6:.2f} µs "
            f"a call (an MCP call is ~500 µs); load {load}",
        ),
        Result(
            "hooks",
            "tool call with one PreToolUse hook (sh, exit 0) ÷ no hooks, wall a call",
            median(bare_for_spawn),
            detail=f"{one_hook * 1000:.1f} ms a call: the hook process; load {load}",
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__ or "")
