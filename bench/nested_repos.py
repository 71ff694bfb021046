"""Benchmark: the per-command cost of the walk for git repositories the model made.

`bash -c true` through the bash tool's registry entry, confined, in workspaces of 10 000
files (100 directories) and 100 000 files (100 and 1 000 directories), one repository of the
model's among them: with the walk ÷ the same sandbox with the walk switched off (goal
≤ 1.3), median of per-pair ratios of rotating calls; the walk reading every directory
afresh (as before the listings were reused) beside it, for the record. Then one walk
alone: the incremental walk (listings reused) ÷ a walk reading every directory afresh,
both in ms: the incremental one grows with directories, not files.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import anyio
from _util import Result, Size, bench_main, load_line, median, pair_ratios, sized, spread, state_dir

from launcher.config.types import SandboxMode, SandboxSettings
from launcher.procs.watchdog import Watchdog
from launcher.tools import builtin_entries
from launcher.tools.sandbox import ShellSandbox, mechanism_problem
from launcher.trust import gitwalk
from launcher.trust.gitwalk import Walker, scan

GOAL = 1.3
AGE_WAIT_S = 120.0


def _workspace(ws: Path, files: int, dirs: int) -> None:
    for d in range(dirs):
        folder = ws / f"d{d:04}"
        folder.mkdir(parents=True)
        for f in range(files // dirs):
            (folder / f"f{f:04}.txt").write_text("x\n")
    subprocess.run(["git", "init", "-q", str(ws / "d0000/sub")], check=True)
    # A listing is reused only once its directory is older than the racy window: a real
    # workspace's directories mostly are.
    newest = max(os.lstat(p).st_ctime_ns for p, _, _ in os.walk(ws))
    deadline = time.monotonic() + AGE_WAIT_S
    while time.time_ns() - gitwalk.RACY_WINDOW_NS <= newest and time.monotonic() < deadline:
        time.sleep(0.2)


def run(size: Size = "full") -> list[Result]:
    problem = mechanism_problem()
    if problem is not None:
        return [Result("nested_repos", f"skipped: sandbox unavailable ({problem})", 0.0)]
    shapes = sized(
        size,
        [(10_000, 100), (100_000, 100), (100_000, 1_000)],
        [(10_000, 100), (100_000, 1_000)],
        [(1_000, 10)],
    )
    results: list[Result] = []
    for files, dirs in shapes:
        with state_dir() as root:
            _workspace(root / "ws", files, dirs)
            results += anyio.run(_measure, root, files, dirs, sized(size, 41, 21, 3))
    return results


def _ms(values: list[float]) -> str:
    return f"{median(values) * 1000:.2f} ms [{min(values) * 1000:.2f}–{max(values) * 1000:.2f}]"


async def _measure(base: Path, files: int, dirs: int, runs: int) -> list[Result]:
    guard = Watchdog()
    kinds = ("incremental", "afresh", "none")
    boxes = {
        kind: ShellSandbox(
            SandboxSettings(mode=SandboxMode.ON),
            workspace=base / "ws",
            state_home=base / "st",
            home=base,
        )
        for kind in kinds
    }
    ws = (base / "ws").resolve()
    afresh = boxes["afresh"].nested
    assert afresh is not None
    afresh.walker = Walker(ws, cache=False)  # the walk as it was: every directory read
    boxes["none"].nested = None  # the baseline: the same sandbox, no walk
    calls = {
        kind: builtin_entries(base / "ws", ["bash"], group_guard=guard, sandbox=box)[0].call
        for kind, box in boxes.items()
    }
    times: dict[str, list[float]] = {kind: [] for kind in kinds}
    try:
        for i in range(runs + 1):
            for kind in kinds[i % 3 :] + kinds[: i % 3]:
                start = time.perf_counter()
                result = await calls[kind]({"command": "true"})
                elapsed = time.perf_counter() - start
                assert not result.is_error, result.content
                if i:
                    times[kind].append(elapsed)
    finally:
        for box in boxes.values():
            box.close()
        guard.close()
    walker = Walker(ws)
    walker.scan()
    walks: dict[bool, list[float]] = {True: [], False: []}
    for i in range(runs):
        for cached in (True, False) if i % 2 else (False, True):
            start = time.perf_counter()
            found = walker.scan() if cached else scan(ws)
            walks[cached].append(time.perf_counter() - start)
    assert len(found.gitdirs) == 1 and not walker.listed, (found, walker.listed)
    shape = f"{files} files in {dirs} dirs"
    none = times["none"]
    return [
        Result(
            "nested_repos",
            f"bash -c true, {shape}: {kind} walk ÷ no walk (per-pair ratios)",
            median(pair_ratios(times[kind], none)),
            GOAL if kind == "incremental" else None,
            f"walk {spread(times[kind])}; none {spread(none)}; {runs} rotating calls each;"
            f" {load_line()}",
        )
        for kind in ("incremental", "afresh")
    ] + [
        Result(
            "nested_repos",
            f"one walk, {shape}: incremental ÷ afresh (per-pair ratios)",
            median(pair_ratios(walks[True], walks[False])),
            None,
            f"incremental {_ms(walks[True])}; afresh {_ms(walks[False])}; {load_line()}",
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
