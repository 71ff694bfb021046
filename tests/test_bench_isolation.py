"""bench/isolation.py still runs (issue 28.6): one pair on a small repository, real git."""

from __future__ import annotations

import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"


def test_the_isolation_benchmark_measures_both_ways(tmp_path: Path) -> None:
    sys.path.insert(0, str(BENCH))
    try:
        import isolation
    finally:
        sys.path.remove(str(BENCH))
    results = isolation.measure(tmp_path, files=40, pairs=1)
    assert [r.metric for r in results] == [
        "set-up + finish: own repository ÷ worktree",
        "set-up alone ÷ worktree add",
        "finish alone ÷ add --all",
    ]
    assert all(r.value > 0 for r in results)
    assert results[0].goal == isolation.GOAL and "load average" in results[0].detail
    assert list((tmp_path / "home" / "worktrees").iterdir()) == []  # each run cleaned up
