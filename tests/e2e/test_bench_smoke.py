"""Every benchmark still runs: `bench/run_all.py --smoke` (tiny sizes, figures meaningless).

A benchmark that nothing runs rots (peers.py crashed for months). This runs them all, as
whole processes, and fails naming the one that broke. The peer comparison needs the peer
venv (.interop/venv-peers, installed by .ci/install-interop.sh); without it that part is
skipped, saying so.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
PEER_PYTHON = BENCH.parent / ".interop" / "venv-peers" / "bin" / "python"
SMOKE_LIMIT_S = 540.0
"""Bounds the whole smoke run (about a minute on an idle 2-core machine)."""


def _smoke(*args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    proc = subprocess.run(
        [sys.executable, "run_all.py", "--smoke", *args],
        cwd=BENCH,
        env=env,
        capture_output=True,
        text=True,
        timeout=SMOKE_LIMIT_S,
    )
    failed = [line for line in proc.stdout.splitlines() if line.startswith("FAILED")]
    assert proc.returncode == 0 and not failed, (
        f"{failed}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"
    )
    return proc.stdout


def _ran(output: str) -> set[str]:
    return set(re.findall(r"^== (\w+) ", output, flags=re.MULTILINE))


def test_every_benchmark_runs_in_smoke_mode() -> None:
    sys.path.insert(0, str(BENCH))
    try:
        from run_all import BENCHMARKS
    finally:
        sys.path.remove(str(BENCH))
    output = _smoke("--skip-peers")
    assert _ran(output) == set(BENCHMARKS) - {"peers"}
    assert "| 13 turn cost |" in output and "| 6 batch |" in output  # rows, not just headers
    if PEER_PYTHON.exists():  # the official SDKs our model clients are measured against
        assert "| model_clients openai | stream CPU" in output


def test_the_peer_comparison_runs_in_smoke_mode() -> None:
    if not PEER_PYTHON.exists():
        pytest.skip("no .interop/venv-peers (.ci/install-interop.sh installs it)")
    output = _smoke("--only", "peers")
    assert _ran(output) == {"peers"}
    assert "processes left after client SIGKILL, ours | 0 |" in output
