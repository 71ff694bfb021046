"""Benchmark 13: a turn's cost with 5 000 tools ÷ with 10 (goal ≤ 1.5: no work per tool a turn).

A 50-turn scripted run through `assemble_session` and `run_agent`, as `spawn` runs it, against
the fast stub serving N filler tools; each turn calls its `echo`. The cost of a turn is the
client's CPU time from the first timed turn's `turn_start` to `agent_end`, over the turns (the
session's start, the listing and the close are not in it). A secret is in the environment, as
with a user's API key: every event is masked. Two cases: every tool offered (`tool_search:
off`: the offer, the events and the masks are made once per change, not per turn) and the
default (`auto`: past 80 000 bytes of schemas the model gets `tool_search`, and the first
turn loads `echo` with it). The median of per-round ratios, the counts alternating in each
round. `--tools 10,1000,5000` sets the counts (the scale table), `--turns` the run length.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import anyio
from _util import (
    Result,
    Size,
    fast_stub_args,
    load_line,
    median,
    pair_ratios,
    size_arguments,
    size_of,
    sized,
    state_dir,
    table,
)

from launcher.events import AgentEnd, Event, ToolResultEvent, TurnStart

GOAL = 1.5
SECRET = ("BENCH_TURN_API_KEY", "sk-bench-turn-0123456789abcdef0123")
"""A secret in the environment, as a user's API key: the session's mask has work to do."""
MODES = ("off", "auto")


def write_setup(root: Path, tools: int, mode: str, turns: int) -> tuple[Path, Path]:
    """A config whose one server is the fast stub with `tools` fillers (`tool_search: mode`),
    and a script: load `echo` (a search finds it, or it is offered anyway), then `turns`
    turns calling it."""
    config = root / f"cfg-{tools}-{mode}"
    (config / "agents").mkdir(parents=True, exist_ok=True)
    server = {"command": sys.executable, "args": fast_stub_args("--tools", str(tools))}
    data = {"tool_search": mode, "mcpServers": {"fast": server}}
    (config / "mcp.json").write_text(json.dumps(data))
    script = root / f"turns-{turns}.yaml"
    first = "  - call: [{tool: tool_search, args: {query: fast__echo, limit: 1}}]\n"
    step = "  - call: [{tool: fast__echo, args: {text: 'turn output'}}]\n"
    script.write_text("steps:\n" + first + step * turns + "  - say: done\n")
    return config, script


async def one_run(config_dir: Path, script: Path, workspace: Path, turns: int) -> float:
    """CPU seconds a turn, over the `turns` timed turns of one run (turn 1, the search, is
    not timed); every echo call must succeed."""
    from launcher.assemble import assemble_session, plan_run, run_agent
    from launcher.config.discovery import load_config
    from launcher.run_plan import ModelChoice

    config = load_config(config_dir, cwd=workspace)
    model = ModelChoice(f"scripted:{script}")
    plan = plan_run(config, "general-purpose", workspace=workspace, model=model)
    session = assemble_session(plan)
    marks: dict[str, float] = {}
    failed: list[str] = []

    async def clock(event: Event) -> None:
        if isinstance(event, TurnStart) and event.turn == 2:
            marks["start"] = time.process_time()
        elif isinstance(event, AgentEnd):
            marks["end"] = time.process_time()
        elif isinstance(event, ToolResultEvent) and event.is_error and event.name != "tool_search":
            failed.append(event.content)

    session.bus.subscribe(clock)
    status = await run_agent(session, "go")
    if status != "completed" or failed:
        raise SystemExit(f"the scripted run ended {status}: {failed[:1]}")
    return (marks["end"] - marks["start"]) / turns


def measure(counts: list[int], size: Size, turns: int) -> list[Result]:
    """Every mode and count, alternating within each round; each count ÷ the first."""
    rounds = sized(size, 7, 3, 1)
    per_turn: dict[tuple[str, int], list[float]] = {(m, n): [] for m in MODES for n in counts}
    with state_dir() as root:
        os.environ["SUBAGENT_HOME"] = str(root / "home")
        os.environ.setdefault(*SECRET)
        setups = {key: write_setup(root, key[1], key[0], turns) for key in per_turn}
        anyio.run(one_run, *setups[MODES[0], counts[0]], root, turns)  # warm-up: imports
        for i in range(rounds):
            keys = list(per_turn) if i % 2 == 0 else list(per_turn)[::-1]
            for key in keys:  # neither end always goes first
                per_turn[key].append(anyio.run(one_run, *setups[key], root, turns))
    results = []
    for mode in MODES:
        base = per_turn[mode, counts[0]]
        for count in counts[1:]:
            sample = per_turn[mode, count]
            results.append(
                Result(
                    "13 turn cost",
                    f"client CPU a turn, {count} ÷ {counts[0]} tools (tool_search: {mode}; "
                    f"{turns} turns, per-round ratios)",
                    median(pair_ratios(sample, base)),
                    GOAL,
                    f"{median(sample) * 1000:.2f} vs {median(base) * 1000:.2f} ms a turn",
                )
            )
    return results


def run(size: Size = "full") -> list[Result]:
    counts = sized(size, [10, 1000, 5000], [10, 5000], [10, 2000])
    return measure(counts, size, sized(size, 50, 50, 5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size_arguments(parser)
    parser.add_argument("--tools", help="tool counts, the first the baseline: e.g. 10,1000,5000")
    parser.add_argument("--turns", type=int, help="turns a run (default 50)")
    args = parser.parse_args()
    print(load_line(), flush=True)
    size = size_of(args)
    if args.tools or args.turns:
        counts = [int(n) for n in (args.tools or "10,1000,5000").split(",")]
        results = measure(counts, size, args.turns or 50)
    else:
        results = run(size)
    print()
    print(table(results))
    print(load_line())


if __name__ == "__main__":
    main()
