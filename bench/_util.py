"""Shared pieces of the benchmarks: results, ratio tables, stub commands, temp state."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
FAST_STUB = BENCH_DIR / "fast_stub.py"


@dataclass
class Result:
    """One ratio against a baseline measured in the same run; `goal` is an upper bound."""

    bench: str
    metric: str
    value: float
    goal: float | None = None
    detail: str = ""

    @property
    def verdict(self) -> str:
        if self.goal is None:
            return "info"
        return "pass" if self.value <= self.goal else "MISS"


def median(values: list[float]) -> float:
    """Median of a non-empty sample."""
    return statistics.median(values)


def spread(values: list[float]) -> str:
    """`median [min–max]` in milliseconds, for the detail column."""
    return f"{median(values) * 1000:.0f} ms [{min(values) * 1000:.0f}–{max(values) * 1000:.0f}]"


def fast_stub_args(*extra: str) -> list[str]:
    """Arguments for `python` to run the SDK-free stub; `-S` (no site) halves its start-up."""
    return ["-S", str(FAST_STUB), *extra]


def table(results: list[Result]) -> str:
    """A markdown table: each ratio with its goal and verdict."""
    lines = [
        "| benchmark | ratio | value | goal | verdict | detail |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        goal = f"≤ {r.goal:g}" if r.goal is not None else "—"
        # three decimals: a value that rounds to its goal must not read as met when it is not
        value = f"{r.value:.0f}" if r.value.is_integer() else f"{r.value:.3f}"
        lines.append(f"| {r.bench} | {r.metric} | {value} | {goal} | {r.verdict} | {r.detail} |")
    return "\n".join(lines)


@contextmanager
def state_dir() -> Iterator[Path]:
    """A throwaway SUBAGENT_HOME / workspace for one benchmark."""
    with tempfile.TemporaryDirectory(prefix="subagent-bench-") as tmp:
        yield Path(tmp)


def bench_main(run: Callable[[bool], list[Result]], description: str) -> None:
    """Parse `--quick`, run the benchmark, print its table."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    results = run(args.quick)
    print()
    print(table(results))
    sys.stdout.flush()
