"""Benchmark: the session store's cost: a 50-turn run with the store ÷ without; `log` on 10 000.

1. A 50-turn scripted run (each turn one call to the fast stub's `echo`), through
   `assemble_session` and `run_agent` as `spawn` runs it, with the store on ÷ off
   (`SUBAGENT_STORE=0`); alternating, medians. Goal ≤ 1.05.
2. `subagent log` over a store of 10 000 sessions ÷ `subagent --help`; goal ≤ 2.
3. `subagent log -q WORD` over the same store, wall seconds of the whole command (a word in
   every session's answer, and a word in one); goal ≤ 0.5 s.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from _util import (
    Result,
    Size,
    bench_main,
    fast_stub_args,
    median,
    pair_ratios,
    sized,
    spread,
    state_dir,
)
from cli_help import subagent_cmd

TURNS = 50
SESSIONS = 10_000
CLI_LIMIT_S = 60.0
"""Bounds one CLI run; `log` takes well under a second."""
OVERHEAD_GOAL = 1.05
LOG_GOAL = 2.0
SEARCH_GOAL_S = 0.5
WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india")


def write_setup(root: Path, turns: int = TURNS) -> tuple[Path, Path]:
    """A config dir with one fast stub server, and a 50-turn script calling its echo."""
    config = root / "cfg"
    (config / "agents").mkdir(parents=True)
    server = {"command": sys.executable, "args": fast_stub_args()}
    (config / "mcp.json").write_text(json.dumps({"mcpServers": {"fast": server}}))
    step = "  - call: [{tool: fast__echo, args: {text: 'turn output, a line of text'}}]\n"
    script = root / "script.yaml"
    script.write_text("steps:\n" + step * turns + "  - say: all turns done\n")
    return config, script


async def one_run(config_dir: Path, script: Path, workspace: Path) -> float:
    """Seconds for one whole spawn-like run (session start, 50 turns, close)."""
    from launcher.assemble import assemble_session, plan_run, run_agent
    from launcher.config.discovery import load_config
    from launcher.run_plan import ModelChoice

    config = load_config(config_dir, cwd=workspace)
    start = time.perf_counter()
    model = ModelChoice(f"scripted:{script}")
    plan = plan_run(config, "general-purpose", workspace=workspace, model=model)
    session = assemble_session(plan)
    status = await run_agent(session, "go")
    elapsed = time.perf_counter() - start
    if status != "completed":
        raise SystemExit(f"the scripted run ended {status}")
    return elapsed


class SinkClock:
    """Time spent inside the store sink's event handling (wraps StoreSink.__call__)."""

    def __init__(self) -> None:
        from launcher.store.sink import StoreSink

        self.spent = 0.0
        original = StoreSink.__call__

        async def timed(sink: StoreSink, event: Any) -> None:
            start = time.perf_counter()
            try:
                await original(sink, event)
            finally:
                self.spent += time.perf_counter() - start

        StoreSink.__call__ = timed  # type: ignore[method-assign]


def overhead(size: Size) -> list[Result]:
    """Store on ÷ store off, one 50-turn run each, alternating; and the sink's own share."""
    from launcher.settings import STORE

    STORE_ENV = STORE.name

    times: dict[str, list[float]] = {"on": [], "off": []}
    shares: list[float] = []
    clock = SinkClock()
    with state_dir() as root:
        turns = sized(size, TURNS, TURNS, 5)
        config, script = write_setup(root, turns)
        os.environ["SUBAGENT_HOME"] = str(root / "home")
        for setting in ("1", "0"):  # warm-up: imports, page cache, the db's creation
            os.environ[STORE_ENV] = setting
            anyio.run(one_run, config, script, root)
        for i in range(sized(size, 21, 3, 1)):
            pair = (("on", "1"), ("off", "0"))
            for label, setting in pair if i % 2 else pair[::-1]:  # neither always goes first
                os.environ[STORE_ENV] = setting
                clock.spent = 0.0
                times[label].append(anyio.run(one_run, config, script, root))
                if label == "on":
                    shares.append(clock.spent / times[label][-1])
        os.environ.pop(STORE_ENV)
    print(f"50-turn run, store on   {spread(times['on'])}")
    print(f"50-turn run, store off  {spread(times['off'])}")
    return [
        Result(
            "store",
            f"{turns}-turn run, store on ÷ off (per-pair ratios)",
            median(pair_ratios(times["on"], times["off"])),
            OVERHEAD_GOAL,
            f"on {spread(times['on'])}; off {spread(times['off'])}",
        ),
        Result(
            "store",
            "time inside the store sink ÷ the whole run (store on; no goal)",
            median(shares),
            None,
            f"{median(shares) * 100:.1f} % [{min(shares) * 100:.1f}–{max(shares) * 100:.1f}]",
        ),
    ]


def fill_store(home: Path, count: int) -> None:
    """`count` sessions of 4 messages each (prompt, a tool call, its result, an answer)."""
    from launcher.store.db import connect, index_new, write

    conn = connect(home)
    assert conn is not None
    rng = random.Random(7)
    now = time.time()
    sessions, messages = [], []
    for i in range(count):
        sid = f"20260101T000000-{i:06x}"
        started = now - (count - i) * 60
        word = rng.choice(WORDS)
        prompt = f"look into {word} issue number {i}"
        answer = f"report: the {word} issue {i} is fixed" + (" uniqueneedle" if i == 42 else "")
        sessions.append(
            (
                sid,
                "general-purpose",
                "openai:gpt-4.1-mini",
                started,
                started + 30,
                "completed",
                prompt,
                answer,
                2,
                1200,
                300,
                1,
                30.0,
            )
        )
        call = json.dumps([{"id": f"c{i}", "name": "grep", "arguments": {"pattern": word}}])
        messages += [
            (sid, 1, "user", prompt, None, None, None, started),
            (sid, 1, "assistant", "", call, None, None, started + 1),
            (
                sid,
                1,
                "tool",
                f"src/{word}.py:10: def {word}(): ...",
                None,
                f"c{i}",
                "grep",
                started + 2,
            ),
            (sid, 2, "assistant", answer, None, None, None, started + 3),
        ]
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO sessions(id, agent, model, started, ended, status, prompt, result, turns,"
        " input_tokens, output_tokens, tool_calls, duration_s) VALUES"
        " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        sessions,
    )
    conn.executemany(
        "INSERT INTO messages(session, turn, role, content, tool_calls, tool_call_id, name, ts)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        messages,
    )
    conn.execute("COMMIT")
    write(conn, lambda: index_new(conn))
    conn.close()


def wall(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds one run of `cmd` takes; it must succeed."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, env=env, timeout=CLI_LIMIT_S, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {proc.stderr[-500:]!r}")
    return elapsed


def log_cli(size: Size) -> list[Result]:
    """`log` ÷ `--help`, and `log -q` seconds, over a store of SESSIONS sessions."""
    cli = subagent_cmd()
    with state_dir() as root:
        home = root / "home"
        sessions = sized(size, SESSIONS, SESSIONS, 200)
        fill_store(home, sessions)
        env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
        env["SUBAGENT_HOME"] = str(home)
        cases = {
            "--help": [*cli, "--help"],
            "log": [*cli, "log"],
            "log -q common": [*cli, "log", "-q", "report"],
            "log -q rare": [*cli, "log", "-q", "uniqueneedle"],
        }
        times: dict[str, list[float]] = {k: [] for k in cases}
        for cmd in cases.values():
            wall(cmd, env)  # warm-up: .pyc files, page cache
        for _ in range(sized(size, 11, 5, 1)):
            for name, cmd in cases.items():  # interleaved: drift hits every case alike
                times[name].append(wall(cmd, env))
    for name, sample in times.items():
        print(f"subagent {name:16s} {spread(sample)}")
    rows = [
        Result(
            "store",
            f"`subagent log` ({sessions} sessions) ÷ `subagent --help` (per-pair ratios)",
            median(pair_ratios(times["log"], times["--help"])),
            LOG_GOAL,
            f"log {spread(times['log'])}; --help {spread(times['--help'])}",
        )
    ]
    for label, what in (("common", "a word in every session"), ("rare", "a word in one")):
        sample = times[f"log -q {label}"]
        rows.append(
            Result(
                "store",
                f"`subagent log -q` seconds, {what} ({sessions} sessions)",
                median(sample),
                SEARCH_GOAL_S,
                spread(sample),
            )
        )
    return rows


def run(size: Size = "full") -> list[Result]:
    return [*overhead(size), *log_cli(size)]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
