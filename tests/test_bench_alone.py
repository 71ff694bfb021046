"""`bench/run_all.py` runs each benchmark as if alone: what one sets in the environment or
learns into the launcher's runtime never reaches the next (a leaked secret-named key made
serve's start re-execute itself in every later benchmark)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"

# Two stand-in benchmarks through run_all's own loop: the first leaves a key, a home and a
# learned secret behind; the second reports what it finds.
_DRIVER = """
import os, sys
import run_all
from launcher import runtime
from launcher.secrets import note_secrets

def leaves(size):
    os.environ["BENCH_LEAK_API_KEY"] = "sk-leaked-0123456789"
    os.environ["SUBAGENT_HOME"] = "/nonexistent/removed"
    note_secrets(["learned-0123456789"])
    return []

def finds(size):
    learned = sorted(runtime.current().secrets.learned)
    print("FOUND", os.environ.get("BENCH_LEAK_API_KEY"), os.environ.get("SUBAGENT_HOME"), learned)
    return []

run_all.BENCHMARKS.clear()
run_all.BENCHMARKS.update(leaves=leaves, finds=finds)
sys.argv = ["run_all.py", "--smoke"]
run_all.main()
"""


def test_a_benchmark_finds_nothing_the_one_before_left() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SUBAGENT_")}
    env["PYTHONPATH"] = os.pathsep.join([str(BENCH), str(BENCH.parent)])
    run = subprocess.run(
        [sys.executable, "-c", _DRIVER],
        cwd=BENCH,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    found = [line for line in run.stdout.splitlines() if line.startswith("FOUND")]
    assert found == ["FOUND None None []"], run.stdout
