"""Benchmark: the per-command cost of the walk for git repositories the model made.

`bash -c true` through the bash tool's registry entry, confined, in a workspace of 10 000
files (100 directories, one repository of the model's among them): with the walk ÷ the
same sandbox with the walk switched off, median of alternating calls (no goal set: the
walk's cost grows with the workspace; shown with one walk alone).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import anyio
from _util import Result, Size, bench_main, median, pair_ratios, sized, spread, state_dir

from launcher.config.types import SandboxMode, SandboxSettings
from launcher.procs.watchdog import Watchdog
from launcher.tools import builtin_entries
from launcher.tools.sandbox import ShellSandbox, mechanism_problem
from launcher.trust.nested import scan

GOAL = None
FILES = 10_000


def _workspace(ws: Path) -> None:
    for d in range(100):
        folder = ws / f"d{d:03}"
        folder.mkdir(parents=True)
        for f in range(FILES // 100):
            (folder / f"f{f:03}.txt").write_text("x\n")
    subprocess.run(["git", "init", "-q", str(ws / "d000/sub")], check=True)


def run(size: Size = "full") -> list[Result]:
    problem = mechanism_problem()
    if problem is not None:
        return [Result("nested_repos", f"skipped: sandbox unavailable ({problem})", 0.0)]
    with state_dir() as root:
        _workspace(root / "ws")
        return anyio.run(_measure, root, sized(size, 41, 21, 3))


async def _measure(base: Path, runs: int) -> list[Result]:
    guard = Watchdog()
    boxes = {
        walk: ShellSandbox(
            SandboxSettings(mode=SandboxMode.ON),
            workspace=base / "ws",
            state_home=base / "st",
            home=base,
        )
        for walk in (True, False)
    }
    boxes[False].nested = None  # the baseline: the same sandbox, no walk
    calls = {
        walk: builtin_entries(base / "ws", ["bash"], group_guard=guard, sandbox=box)[0].call
        for walk, box in boxes.items()
    }
    times: dict[bool, list[float]] = {True: [], False: []}
    try:
        for i in range(runs + 1):
            for walk in (True, False) if i % 2 else (False, True):
                start = time.perf_counter()
                result = await calls[walk]({"command": "true"})
                elapsed = time.perf_counter() - start
                assert not result.is_error, result.content
                if i:
                    times[walk].append(elapsed)
        start = time.perf_counter()
        found = scan((base / "ws").resolve())
        walk_s = time.perf_counter() - start
    finally:
        for box in boxes.values():
            box.close()
        guard.close()
    on, off = times[True], times[False]
    return [
        Result(
            "nested_repos",
            f"bash -c true in {FILES} files: walk ÷ no walk (per-pair ratios)",
            median(pair_ratios(on, off)),
            GOAL,
            f"walk {spread(on)}; none {spread(off)}; one walk alone {walk_s * 1000:.1f} ms,"
            f" {len(found.gitdirs)} git dir(s); {runs} alternating calls each",
        )
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
