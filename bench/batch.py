"""Benchmark 6: `subagent batch` fan-out — wall ÷ ideal, and the driver's memory as tasks grow.

32 scripted tasks that think 1 s each, `--jobs 4`: the ideal is 8 s; the ratio is the
measured wall time over it, for the local pool and (when Ray is installed) a local Ray
started by the batch. Then the driver's peak RSS running 32 and 512 instant tasks
(results are streamed, not held: the ratio should stay near 1).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from _util import Result, bench_main, state_dir

TASK_S = 1.0
TASKS = 32
JOBS = 4
LIMIT_S = 600.0
POLL_S = 0.05


def write_tasks(root: Path, count: int, sleep: float) -> Path:
    """A tasks file of `count` scripted runs thinking `sleep` s, and an empty config."""
    script = root / f"think-{sleep:g}.yaml"
    step = f"  - sleep: {sleep}\n    say: done\n" if sleep else "  - say: done\n"
    script.write_text("steps:\n" + step)
    tasks = root / f"tasks-{count}-{sleep:g}.jsonl"
    with tasks.open("w") as f:
        for i in range(count):
            row = {"id": f"t{i}", "prompt": "p", "model": f"scripted:{script}"}
            f.write(json.dumps(row) + "\n")
    (root / "cfg").mkdir(exist_ok=True)
    (root / "cfg" / "mcp.json").write_text('{"mcpServers": {}}')
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
    """(wall seconds, the driver's peak RSS in MiB) of one `subagent batch`."""
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
    if not out.exists():
        raise SystemExit(f"batch failed: {err.decode()[-500:]}")
    return wall, peak_kib / 1024


def run(quick: bool) -> list[Result]:
    """Wall ÷ ideal for each engine; RSS at 512 ÷ at 32 tasks."""
    results: list[Result] = []
    ideal = TASKS * TASK_S / JOBS
    label = f"{TASKS} × {TASK_S:g} s tasks, --jobs {JOBS}"
    with state_dir() as root:
        # A warm-up batch writes the launcher's .pyc files, as an installed copy has them
        # (pip compiles at install), even where PYTHONDONTWRITEBYTECODE is set: without
        # them each of the 32 workers would compile its modules from source.
        run_batch(root, write_tasks(root, 1, 0), write_bytecode=True)
        tasks = write_tasks(root, TASKS, TASK_S)
        wall, _ = run_batch(root, tasks, "--jobs", str(JOBS))
        detail = f"{wall:.1f} s vs {ideal:.0f} s"
        results.append(Result("6 batch", f"{label}, local ÷ ideal", wall / ideal, 1.25, detail))
        if importlib.util.find_spec("ray") is not None:
            wall, _ = run_batch(root, tasks, "--jobs", str(JOBS), "--engine", "ray")
            detail = f"{wall:.1f} s, Ray start and stop included"
            results.append(
                Result("6 batch", f"{label}, local Ray ÷ ideal", wall / ideal, None, detail)
            )
        many = 64 if quick else 512
        _, rss_small = run_batch(root, write_tasks(root, 32, 0), "--jobs", str(JOBS))
        _, rss_big = run_batch(root, write_tasks(root, many, 0), "--jobs", str(JOBS))
        detail = f"{rss_big:.0f} vs {rss_small:.0f} MiB"
        metric = f"driver peak RSS, {many} ÷ 32 instant tasks"
        results.append(Result("6 batch", metric, rss_big / rss_small, 1.1, detail))
    return results


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
