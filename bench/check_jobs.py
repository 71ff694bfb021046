"""Benchmark: `subagent check` over the shipped configs, wall with --jobs 2 ÷ with --jobs 1.

The shipped example's checks (configs/: expect: blocks, checks/*.yaml, the lock) each start
their own session and stub servers; at --jobs 2 two sessions run at once. Runs alternate
between the two settings so that load from elsewhere hits both alike; medians reported.
Goal ≤ 0.75 (2 cores; every session is mostly waiting: server start-up, settle, sleeps).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _util import REPO, Result, Size, bench_main, median, pair_ratios, sized, spread, state_dir

LIMIT_S = 300.0
"""The whole shipped example takes ~10 s one by one; this only bounds a hung run."""
GOAL = 0.75


def check_wall(root: Path, jobs: int, *only: str) -> float:
    """Seconds one `subagent check --jobs N` over the shipped configs takes (must pass)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["SUBAGENT_HOME"] = str(root / "home")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    cmd = [sys.executable, "-m", "launcher.cli", "check", "--config-dir", "configs"]
    start = time.perf_counter()
    proc = subprocess.run(
        [*cmd, "--jobs", str(jobs), *only],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=LIMIT_S,
        stdin=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"check --jobs {jobs} exited {proc.returncode}:\n{proc.stdout}")
    return elapsed


def run(size: Size = "full") -> list[Result]:
    """--jobs 2 wall ÷ --jobs 1 wall, median of per-pair ratios of alternating runs."""
    serial: list[float] = []
    parallel: list[float] = []
    only = sized(size, (), (), ("triage",))  # smoke: one agent's check, not the four
    with state_dir() as root:
        shutil.copytree(REPO / "configs", root / "configs")
        for _ in range(sized(size, 3, 1, 1)):
            serial.append(check_wall(root, 1, *only))
            parallel.append(check_wall(root, 2, *only))
    ratio = median(pair_ratios(parallel, serial))
    detail = f"--jobs 2 {spread(parallel)}; --jobs 1 {spread(serial)}"
    return [Result("check_jobs", "check --jobs 2 ÷ --jobs 1 (shipped)", ratio, GOAL, detail)]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
