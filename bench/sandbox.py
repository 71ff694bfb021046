"""Benchmark: the sandbox's per-command cost (issue 21).

`bash -c true` through the bash tool's registry entry (the code path of a model's call,
with the session's watchdog guard), confined ÷ unconfined, median of alternating calls.
Goal <= 1.3. Also shown: the first confined call of a session, which confines the
spawner thread once (the Landlock rules are made then), and how the confined commands got
their read-only world (`own namespace` as root, `fork server` for a launcher that is not).

Not root is the other path (the holder's namespaces, entered by the fork server); as root,
run it as `nobody` with a HOME it owns (the ambient capability only lets that user read
an interpreter under a 0700 /root; leave it out where it can):

    H=$(mktemp -d) && chown 65534:65534 "$H" && HOME=$H SUBAGENT_HOME=$H/state \
      setpriv --reuid 65534 --regid 65534 --clear-groups \
      --inh-caps=+dac_read_search --ambient-caps=+dac_read_search -- \
      .venv/bin/python bench/sandbox.py
"""

from __future__ import annotations

import time

import anyio
from _util import Result, Size, bench_main, median, pair_ratios, sized, spread, state_dir

from launcher.config.types import SandboxMode, SandboxSettings
from launcher.procs.watchdog import Watchdog
from launcher.tools import builtin_entries
from launcher.tools.sandbox import ShellSandbox, mechanism_problem

GOAL = 1.3


def run(size: Size = "full") -> list[Result]:
    problem = mechanism_problem()
    if problem is not None:
        return [Result("sandbox", f"skipped: sandbox unavailable ({problem})", 0.0)]
    with state_dir() as root:
        (root / "ws").mkdir()
        return anyio.run(_measure, root, sized(size, 41, 21, 3))


async def _measure(root: object, runs: int) -> list[Result]:
    from pathlib import Path

    base = Path(str(root))
    guard = Watchdog()
    boxes = {
        mode: ShellSandbox(
            SandboxSettings(mode=mode), workspace=base / "ws", state_home=base / "st", home=base
        )
        for mode in (SandboxMode.ON, SandboxMode.OFF)
    }
    calls = {
        mode: builtin_entries(base / "ws", ["bash"], group_guard=guard, sandbox=box)[0].call
        for mode, box in boxes.items()
    }
    times: dict[SandboxMode, list[float]] = {SandboxMode.ON: [], SandboxMode.OFF: []}
    first: dict[SandboxMode, float] = {}
    try:
        for i in range(runs + 1):
            for mode in (
                (SandboxMode.OFF, SandboxMode.ON) if i % 2 else (SandboxMode.ON, SandboxMode.OFF)
            ):
                start = time.perf_counter()
                result = await calls[mode]({"command": "true"})
                elapsed = time.perf_counter() - start
                assert not result.is_error, result.content
                if i == 0:
                    first[mode] = elapsed
                else:
                    times[mode].append(elapsed)
        way = boxes[SandboxMode.ON].way
    finally:
        for box in boxes.values():
            box.close()
        guard.close()
    on, off = times[SandboxMode.ON], times[SandboxMode.OFF]
    detail = f"on {spread(on)}; off {spread(off)}; {runs} alternating calls each"
    detail += f"; read-only world: {way}"
    first_ratio = first[SandboxMode.ON] / median(off)
    return [
        Result(
            "sandbox",
            "bash -c true: on ÷ off (per-pair ratios)",
            median(pair_ratios(on, off)),
            GOAL,
            detail,
        ),
        Result(
            "sandbox",
            "first call of a session ÷ off",
            first_ratio,
            None,
            f"first confined call {first[SandboxMode.ON] * 1000:.1f} ms (confines the thread)",
        ),
    ]


if __name__ == "__main__":
    bench_main(run, __doc__.splitlines()[0])
