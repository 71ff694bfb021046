"""Benchmark 6: `subagent batch` fan-out, each task with its own MCP server: wall ÷ ideal, and
the driver's memory as tasks grow.

Every task runs a scripted agent whose session starts the SDK-free fast stub (a server per
task, as a real batch's agents have) and calls its `echo` before answering. 32 tasks that
think 1 s each, `--jobs 4`: the ideal is 8 s; the ratio is the measured wall time over it,
for the local pool and (when Ray is installed) a local Ray started by the batch. Then the
driver's peak RSS running 512 and 32 instant tasks (results are streamed, not held: the
ratio should stay near 1). `--tasks 16,64,256` prints the scale table instead: wall ÷ ideal
and RSS ÷ the smallest count's, for each count.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _util import (
    Result,
    Size,
    fast_stub_args,
    scale_main,
    sized,
    state_dir,
)

JOBS = 4
LIMIT_S = 900.0
"""Bounds one batch; 512 tasks on 2 cores take a few minutes."""
POLL_S = 0.05


def write_tasks(root: Path, count: int, sleep: float) -> Path:
    """A tasks file of `count` scripted runs (one `echo` call, then think `sleep` s and
    answer), and a config whose one server is the fast stub: each task starts its own."""
    script = root / f"think-{sleep:g}.yaml"
    answer = f"  - sleep: {sleep}\n    say: done\n" if sleep else "  - say: done\n"
    script.write_text("steps:\n  - call: [{tool: fast__echo, args: {text: hi}}]\n" + answer)
    tasks = root / f"tasks-{count}-{sleep:g}.jsonl"
    with tasks.open("w") as f:
        for i in range(count):
            row = {"id": f"t{i}", "prompt": "p", "model": f"scripted:{script}"}
            f.write(json.dumps(row) + "\n")
    (root / "cfg").mkdir(exist_ok=True)
    server = {"command": sys.executable, "args": fast_stub_args()}
    (root / "cfg" / "mcp.json").write_text(json.dumps({"mcpServers": {"fast": server}}))
    return tasks


def _hwm_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def run_batch(
    root: Path, tasks: Path, *extra: str, write_bytecode: bool = False
) -> tuple[float, float]:
    """(wall seconds, the driver's peak RSS in MiB) of one `subagent batch`; every task
    must complete, its echo call answered."""
    out = root / f"out-{time.monotonic_ns()}.jsonl"
    env = {**os.environ, "SUBAGENT_HOME": str(root / "home")}
    if write_bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    cmd = [sys.executable, "-m", "launcher.cli", "batch", str(tasks)]
    cmd += ["--config-dir", str(root / "cfg"), "--out", str(out), *extra]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    peak_kib = 0
    # The driver's own high-water mark (VmHWM), read until it exits: its workers are
    # separate processes and do not count.
    while proc.poll() is None and time.perf_counter() - start < LIMIT_S:
        peak_kib = max(peak_kib, _hwm_kib(proc.pid))
        time.sleep(POLL_S)
    _, err = proc.communicate(timeout=LIMIT_S)
    wall = time.perf_counter() - start
    if proc.returncode != 0 or not out.exists():
        raise SystemExit(f"batch failed ({proc.returncode}): {err.decode()[-500:]}")
    return wall, peak_kib / 1024


def run(size: Size = "full") -> list[Result]:
    """Wall ÷ ideal for each engine; RSS at many ÷ at few tasks."""
    results: list[Result] = []
    count, think = sized(size, 32, 32, 4), sized(size, 1.0, 1.0, 0.1)
    jobs = sized(size, JOBS, JOBS, 2)
    ideal = count * think / jobs
    label = f"{count} × {think:g} s tasks, a server each, --jobs {jobs}"
    with state_dir() as root:
        # A warm-up batch writes the launcher's .pyc files, as an installed copy has them
        # (pip compiles at install), even where PYTHONDONTWRITEBYTECODE is set: without
        # them each worker would compile its modules from source.
        run_batch(root, write_tasks(root, 1, 0), write_bytecode=True)
        tasks = write_tasks(root, count, think)
        wall, _ = run_batch(root, tasks, "--jobs", str(jobs))
        detail = f"{wall:.1f} s vs {ideal:.1f} s"
        results.append(Result("6 batch", f"{label}, local ÷ ideal", wall / ideal, 1.25, detail))
        # Ray's own start and stop take longer than the batch: only in a full run (--quick
        # must stay within 5 minutes).
        if size == "full" and importlib.util.find_spec("ray") is not None:
            wall, _ = run_batch(root, tasks, "--jobs", str(jobs), "--engine", "ray")
            detail = f"{wall:.1f} s, Ray start and stop included"
            results.append(
                Result("6 batch", f"{label}, local Ray ÷ ideal", wall / ideal, None, detail)
            )
        few, many = sized(size, (32, 512), (32, 64), (2, 4))
        _, rss_small = run_batch(root, write_tasks(root, few, 0), "--jobs", str(jobs))
        _, rss_big = run_batch(root, write_tasks(root, many, 0), "--jobs", str(jobs))
        detail = f"{rss_big:.0f} vs {rss_small:.0f} MiB"
        metric = f"driver peak RSS, {many} ÷ {few} instant tasks, a server each"
        results.append(Result("6 batch", metric, rss_big / rss_small, 1.1, detail))
    return results


def scale(counts: list[int], size: Size) -> list[Result]:
    """The scale table: for each count of tasks (a server each, thinking 1 s, --jobs 4),
    wall ÷ ideal and the driver's peak RSS ÷ the smallest count's."""
    think = sized(size, 1.0, 1.0, 0.1)
    rows: list[tuple[int, float, float]] = []
    with state_dir() as root:
        run_batch(root, write_tasks(root, 1, 0), write_bytecode=True)
        for count in counts:
            wall, rss = run_batch(root, write_tasks(root, count, think), "--jobs", str(JOBS))
            rows.append((count, wall, rss))
    base_rss = rows[0][2]
    results: list[Result] = []
    for count, wall, rss in rows:
        ideal = count * think / JOBS
        results += [
            Result("6 batch", f"{count} tasks, a server each: wall ÷ ideal", wall / ideal,
                   1.25, f"{wall:.1f} s vs {ideal:.1f} s"),
            Result("6 batch", f"{count} tasks: driver peak RSS ÷ {rows[0][0]} tasks'",
                   rss / base_rss, 1.1, f"{rss:.0f} vs {base_rss:.0f} MiB"),
        ]  # fmt: skip
    return results


if __name__ == "__main__":
    scale_main(run, scale, __doc__.splitlines()[0], "--tasks", "16,64,256")
