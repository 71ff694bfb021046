"""Benchmark: a local worker's channel handed over once it is non-dumpable ÷ pipes from exec.

A serve or batch worker starts on /dev/null and gets its stdin and stdout (two socket
pairs) with its pulled hand-over (procs/hidden.py), so a process that copies its fds 0
and 1 in the moment after execve holds nothing of the run. The cost is a hand-over with
two descriptors more, and socket pairs instead of pipes for every line of the run.

Each pair runs the same scripted job (TURNS turns of CALLS `ls` calls each: ~1,500 event
lines up the channel, then the final answer) in a worker started the current way
(`start_worker`) and one started the old way (the same hand-over without the channel,
stdin and stdout pipes from exec); the time is from the spawn to the `agent_end` line.
Goal ≤ 1.05: the channel costs nothing a run notices. Per-pair ratios (alternating, so
load hits both alike) and the load average are printed.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import anyio
import anyio.abc
from _util import Result, Size, bench_main, load_line, median, pair_ratios, sized, spread, state_dir

from launcher.backend import protocol
from launcher.backend.protocol import Job
from launcher.backend.spare import WORKER_ARGV, start_worker
from launcher.procs.group import spawn_group, stop_group
from launcher.procs.hidden import child_handover

TURNS = 100
CALLS = 5
ROUND_LIMIT_S = 300.0
"""Bounds one run (about a second idle)."""


async def _old_worker(workspace: Path, log_path: Path) -> anyio.abc.Process:
    """A worker started as before: stdin and stdout pipes from exec."""
    handover = child_handover()
    errlog = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        process = await spawn_group(
            list(WORKER_ARGV),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            cwd=workspace,
            env=handover.env,
            pass_fds=(handover.fd,),
        )
    finally:
        os.close(errlog)
    handover.answer(process.pid)
    return process


async def _one_run(workspace: Path, script: Path, *, handed: bool) -> tuple[float, int]:
    """Seconds from the spawn to the run's `agent_end`, and the lines read up to it."""
    log_path = workspace / "worker.log"
    start = time.perf_counter()
    if handed:
        process = await start_worker(workspace, log_path)
    else:
        process = await _old_worker(workspace, log_path)
    assert process.stdin is not None and process.stdout is not None
    lines = 0
    try:
        job = Job(prompt="go", model=f"scripted:{script}", workspace=str(workspace))
        await process.stdin.send(job.to_line())
        rest = b""
        with anyio.fail_after(ROUND_LIMIT_S):
            async for chunk in process.stdout:
                *complete, rest = (rest + chunk).split(b"\n")
                for raw in complete:
                    lines += 1
                    message = protocol.decode(raw)
                    if message is not None and message.get("type") == "agent_end":
                        if message.get("status") != "completed":
                            raise RuntimeError(f"the run did not complete: {message}")
                        return time.perf_counter() - start, lines
        raise RuntimeError("the worker ended without agent_end")
    finally:
        with anyio.CancelScope(shield=True):
            await stop_group(process)


def run(size: Size) -> list[Result]:
    rounds = sized(size, 7, 4, 1)
    handed: list[float] = []
    old: list[float] = []
    counts: list[int] = []
    with state_dir() as root:
        os.environ["SUBAGENT_HOME"] = str(root / "home")
        workspace = root / "ws"
        workspace.mkdir()
        script = root / "many.yaml"
        step = "  - call: [" + ", ".join(["{tool: ls, args: {}}"] * CALLS) + "]\n"
        script.write_text("steps:\n" + step * TURNS + "  - say: done\n")
        for i in range(rounds):
            # Alternate which goes first: a warm cache must not favour one side.
            for side in (True, False) if i % 2 == 0 else (False, True):
                seconds, lines = anyio.run(lambda s=side: _one_run(workspace, script, handed=s))
                (handed if side else old).append(seconds)
                counts.append(lines)
    ratios = pair_ratios(handed, old)
    print(load_line())
    print(f"lines per run: {median([float(c) for c in counts]):.0f}")
    print(f"channel handed over: median {median(handed) * 1000:.0f} ms {spread(handed)}")
    print(f"pipes from exec:     median {median(old) * 1000:.0f} ms {spread(old)}")
    return [
        Result(
            "worker_channel",
            "spawn to agent_end, channel handed over ÷ pipes from exec (per pair)",
            median(ratios),
            1.05,
            f"pairs {min(ratios):.2f}–{max(ratios):.2f}; {spread(handed)} ÷ {spread(old)}",
        )
    ]


if __name__ == "__main__":
    bench_main(run, __doc__ or "")
