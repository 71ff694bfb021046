"""Shared pieces of the benchmarks: results, ratio tables, stub commands, temp state."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

Size = Literal["full", "quick", "smoke"]
"""How much a benchmark does: `full` (the figures to report), `quick` (fewer repetitions),
`smoke` (tiny sizes: proves it still runs, its figures mean nothing; the test suite's)."""
SIZES: tuple[Size, ...] = ("full", "quick", "smoke")
T = TypeVar("T")


def sized(size: Size, full: T, quick: T, smoke: T) -> T:
    """The value for this run's size."""
    return {"full": full, "quick": quick, "smoke": smoke}[size]


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


def pair_ratios(ours: list[float], base: list[float]) -> list[float]:
    """Each run's ratio to the baseline run made beside it (load hits both of a pair alike);
    a benchmark reports their median, never one median divided by another."""
    if len(ours) != len(base) or not ours:
        raise ValueError(f"unpaired samples: {len(ours)} vs {len(base)}")
    return [a / b for a, b in zip(ours, base, strict=True)]


def load_line() -> str:
    """The load average now, for the record: other work on the cores moves every figure."""
    try:
        one, five, fifteen = os.getloadavg()
    except OSError:
        return "load average: unknown"
    return f"load average: {one:.2f}, {five:.2f}, {fifteen:.2f} ({os.cpu_count()} cores)"


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


def size_arguments(parser: argparse.ArgumentParser) -> None:
    """`--quick` and `--smoke`, read back by `size_of`."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="fewer repetitions")
    group.add_argument("--smoke", action="store_true", help="tiny sizes: does it still run?")


def size_of(args: argparse.Namespace) -> Size:
    """The size `size_arguments` parsed."""
    return "smoke" if args.smoke else "quick" if args.quick else "full"


def scale_main(
    run: Callable[[Size], list[Result]],
    scale: Callable[[list[int], Size], list[Result]],
    description: str,
    flag: str,
    example: str,
) -> None:
    """`bench_main` plus `flag` (counts, e.g. `example`): with it, `scale` prints the scale
    table for those counts instead of `run`'s figures."""
    parser = argparse.ArgumentParser(description=description)
    size_arguments(parser)
    parser.add_argument(flag, dest="counts", help=f"scale table: counts, e.g. {example}")
    args = parser.parse_args()
    print(load_line(), flush=True)
    size = size_of(args)
    counts = [int(n) for n in args.counts.split(",")] if args.counts else None
    results = scale(counts, size) if counts else run(size)
    print()
    print(table(results))
    print(load_line())


def bench_main(run: Callable[[Size], list[Result]], description: str) -> None:
    """Parse `--quick`/`--smoke`, run the benchmark, print its table with the load average
    before and after."""
    parser = argparse.ArgumentParser(description=description)
    size_arguments(parser)
    args = parser.parse_args()
    print(load_line(), flush=True)
    results = run(size_of(args))
    print()
    print(table(results))
    print(load_line())
    sys.stdout.flush()
